/**
 * Canonical JSON and the total order of record keys. Pure.
 *
 * Keys are canonical JSON arrays. Their order follows SQLite's `ORDER BY`
 * with BINARY collation, so a sqlite adapter can sort in SQL and the delta
 * engine can merge two sorted lists: null < booleans < numbers (integers
 * and reals by value) < text (by code point, i.e. UTF-8 byte order) <
 * bytes < arrays < objects.
 *
 * @module
 */
import type { StateRecord } from "./types.ts";

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, UTF-8
 * friendly. `undefined` object members are dropped (as JSON.stringify does).
 *
 * @example
 * ```ts
 * canonicalStateJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 * ```
 */
export function canonicalStateJson(v: unknown): string {
  if (v === null || typeof v !== "object") {
    if (typeof v === "number" && !Number.isFinite(v)) return "null";
    if (typeof v === "bigint") return JSON.stringify({ $int: v.toString() });
    return JSON.stringify(v) ?? "null";
  }
  if (Array.isArray(v)) {
    let s = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ",";
      const x = v[i];
      s += x === undefined ? "null" : canonicalStateJson(x);
    }
    return s + "]";
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let s = "{";
  let first = true;
  for (const k of keys) {
    const x = o[k];
    if (x === undefined) continue;
    if (!first) s += ",";
    first = false;
    s += JSON.stringify(k) + ":" + canonicalStateJson(x);
  }
  return s + "}";
}

/** Whether two JSON-shaped values are equal as values (key order ignored). */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    a === null || b === null || typeof a !== "object" || typeof b !== "object"
  ) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!valuesEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(bo, k) || !valuesEqual(ao[k], bo[k])) return false;
  }
  return true;
}

/** Rank of a value's type in the key order. */
function rank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  switch (typeof v) {
    case "boolean":
      return 1;
    case "number":
    case "bigint":
      return 2;
    case "string":
      return 3;
  }
  if (Array.isArray(v)) return 5;
  const o = v as Record<string, unknown>;
  if (typeof o.$int === "string" || typeof o.$real === "string") return 2;
  if (typeof o.$bytes === "string") return 4;
  return 6;
}

function numeric(v: unknown): number | bigint {
  if (typeof v === "number" || typeof v === "bigint") return v;
  const o = v as Record<string, string>;
  if (o.$int !== undefined) return BigInt(o.$int);
  return Number(o.$real);
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === "number" && typeof b === "number") {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  // One side is a bigint: compare exactly when the other is an integer.
  const toBig = (x: number | bigint): bigint | null =>
    typeof x === "bigint" ? x : Number.isInteger(x) ? BigInt(x) : null;
  const ab = toBig(a);
  const bb = toBig(b);
  if (ab !== null && bb !== null) return ab < bb ? -1 : ab > bb ? 1 : 0;
  const af = Number(a);
  const bf = Number(b);
  return af < bf ? -1 : af > bf ? 1 : 0;
}

/** Compare strings by code point (the order of their UTF-8 bytes). */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (D800-DFFF) encode code points above FFFF: move them above E000-FFFF.
    x = x >= 0xd800 && x <= 0xdfff ? x + 0x2000 : x >= 0xe000 ? x - 0x800 : x;
    y = y >= 0xd800 && y <= 0xdfff ? y + 0x2000 : y >= 0xe000 ? y - 0x800 : y;
    return x < y ? -1 : 1;
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

function base64Bytes(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Total order over JSON-shaped key values (SQLite-compatible for scalars). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return a === b ? 0 : a ? 1 : -1;
    case 2:
      return compareNumbers(numeric(a), numeric(b));
    case 3:
      return compareText(a as string, b as string);
    case 4: {
      const x = base64Bytes((a as { $bytes: string }).$bytes);
      const y = base64Bytes((b as { $bytes: string }).$bytes);
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        if (x[i] !== y[i]) {
          return x[i]! < y[i]! ? -1 : 1;
        }
      }
      return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
    }
    case 5: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
    }
    default:
      return compareText(canonicalStateJson(a), canonicalStateJson(b));
  }
}

/**
 * Compare two record keys (canonical JSON arrays). Equal strings are equal;
 * otherwise both are parsed and compared with {@linkcode compareValues}.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  return compareValues(JSON.parse(a), JSON.parse(b));
}

/** What {@linkcode mergeByKey} does with each key. */
export interface MergeSides<A, B> {
  /** A key both lists hold. */
  both?: (x: A, y: B) => void;
  /** A key only the first list holds. */
  left?: (x: A) => void;
  /** A key only the second list holds. */
  right?: (y: B) => void;
}

/**
 * Walk two key-sorted lists in one pass, in key order, telling `on` which
 * side holds each key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * mergeByKey([{ key: "[1]" }, { key: "[2]" }], [{ key: "[2]" }, { key: "[3]" }], {
 *   both: (x) => seen.push(`both ${x.key}`),
 *   left: (x) => seen.push(`left ${x.key}`),
 *   right: (y) => seen.push(`right ${y.key}`),
 * });
 * assert.deepEqual(seen, ["left [1]", "both [2]", "right [3]"]);
 * ```
 */
export function mergeByKey<
  A extends { key: string },
  B extends { key: string },
>(
  a: readonly A[],
  b: readonly B[],
  on: MergeSides<A, B>,
): void {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x.key === y.key) {
      on.both?.(x, y);
      i++;
      j++;
    } else if (compareKeys(x.key, y.key) < 0) {
      on.left?.(x);
      i++;
    } else {
      on.right?.(y);
      j++;
    }
  }
  for (; i < a.length; i++) on.left?.(a[i]!);
  for (; j < b.length; j++) on.right?.(b[j]!);
}

/**
 * Make a key from identity values: canonical JSON of the array.
 *
 * @example
 * ```ts
 * makeKey([1]); // "[1]"
 * makeKey(["entity", "Alice"]); // '["entity","Alice"]'
 * ```
 */
export function makeKey(parts: readonly unknown[]): string {
  return canonicalStateJson(parts);
}

/**
 * Sort records by key and make duplicate keys unique: the n-th record
 * (n >= 2) with an already seen identity gets `{"dup":n}` appended to its
 * key, so a duplicated record shows as added rather than vanishing.
 * Records with equal identity keep a stable order by their canonical value.
 */
export function sortRecords(records: StateRecord[]): StateRecord[] {
  const decorated = records.map((r) => ({
    r,
    k: JSON.parse(r.key) as unknown[],
    v: "",
  }));
  decorated.sort((x, y) => {
    const c = compareValues(x.k, y.k);
    if (c !== 0) return c;
    if (x.v === "") x.v = canonicalStateJson(x.r.value);
    if (y.v === "") y.v = canonicalStateJson(y.r.value);
    return compareText(x.v, y.v);
  });
  return dedupeSorted(decorated.map((d) => d.r));
}

/**
 * Give adjacent records with equal keys distinct keys (`{"dup":n}` appended).
 * The input must already be sorted; the result stays sorted.
 */
export function dedupeSorted(records: StateRecord[]): StateRecord[] {
  let out: StateRecord[] | null = null;
  let run = 1;
  for (let i = 1; i < records.length; i++) {
    const prev = records[i - 1]!;
    const cur = records[i]!;
    if (cur.key === prev.key) {
      run++;
      out ??= records.slice();
      const parts = JSON.parse(cur.key) as unknown[];
      out[i] = { key: makeKey([...parts, { dup: run }]), value: cur.value };
    } else run = 1;
  }
  return out ?? records;
}

/**
 * Records identified by the values of some of their fields (a SQLite
 * table's declared natural key) instead of the key they were read with,
 * sorted again; rows with equal values keep distinct keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   rekey([{ key: "[7]", value: { id: 7, name: "b" } }, { key: "[9]", value: { id: 9, name: "a" } }], ["name"]),
 *   [{ key: '["a"]', value: { id: 9, name: "a" } }, { key: '["b"]', value: { id: 7, name: "b" } }],
 * );
 * ```
 */
export function rekey(
  records: readonly StateRecord[],
  fields: readonly string[],
): StateRecord[] {
  return sortRecords(records.map((r) => ({
    key: makeKey(fields.map((f) => r.value[f] ?? null)),
    value: r.value,
  })));
}
