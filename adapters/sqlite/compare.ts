/**
 * Comparing two versions of a table's rows from their record bytes, as the
 * diff of two snapshots would (masks applied), and keeping the full rows
 * of the changes; records in the snapshot's key order. Pure.
 *
 * @module
 */
import type { MaskRule } from "../../lib/definition/types.ts";
import type { RecordFieldChange, RegionDiff } from "../../lib/state/delta.ts";
import {
  compareText as compareStrings,
  compareValues,
  valuesEqual,
} from "../../lib/state/keys.ts";
import type { StateRecord } from "../../lib/state/types.ts";
import { RecordHeader, valueAt } from "./format.ts";
import { PageWalkError } from "./page_walk_error.ts";
import type { TablePlan } from "./plan.ts";

/**
 * The full rows of one table's changes, kept when asked: a row this
 * reader cannot decode leaves them unknown for the table (no fallback).
 */
export class RowKeeper {
  put: StateRecord[] = [];
  was: StateRecord[] = [];
  ok: boolean;
  constructor(on: boolean) {
    this.ok = on;
  }
  keep(
    list: "put" | "was",
    key: string,
    value: () => Record<string, unknown>,
  ): void {
    if (!this.ok) return;
    try {
      this[list].push({ key, value: value() });
    } catch (e) {
      if (!(e instanceof PageWalkError)) throw e;
      this.ok = false;
    }
  }
  /** A row removed (`was`) or added (`put`): listed on `part`, its value kept. */
  row(
    part: RegionDiff,
    list: "put" | "was",
    key: string,
    value: () => Record<string, unknown>,
  ): void {
    (list === "was" ? part.removed : part.added).push({
      region: part.region,
      key,
    });
    this.keep(list, key, value);
  }
  /** A row changed: listed on `part` with its field changes, both versions kept. */
  changed(
    part: RegionDiff,
    key: string,
    fields: RecordFieldChange[],
    was: () => Record<string, unknown>,
    put: () => Record<string, unknown>,
  ): void {
    part.changed.push({
      region: part.region,
      key,
      fields,
      lossy: anyLossy(fields),
    });
    this.keep("was", key, was);
    this.keep("put", key, put);
  }
  /** Put the rows on `part` (sorted by key when found in another order). */
  done(part: RegionDiff, sort: boolean): void {
    if (!this.ok) return;
    part.rows = sort
      ? { put: sortByKey(this.put), was: sortByKey(this.was) }
      : { put: this.put, was: this.was };
  }
}

/** What {@linkcode diffSqlitePair} did, for benchmarks and tests. */
export interface SqliteDiffStats {
  /** Leaf pages skipped because they are identical on both sides. */
  leavesSkipped: number;
  /** Leaf pages read (on either side). */
  leavesRead: number;
  /** Rows decoded (they differ, or could not be compared as bytes). */
  rowsDecoded: number;
  /** Tree pages read to walk the trees (the rest were known from the other side). */
  treePagesRead: number;
  /** Keyed rowid tables whose changed rows were put in key order by their primary-key index. */
  orderedByIndex: number;
}

/** Whether `for … in` over a row object visits its columns in declaration order. */
export function flatOrder(columns: readonly string[]): boolean {
  return !columns.some((c) =>
    c === "__proto__" ||
    (/^(0|[1-9][0-9]*)$/.test(c) && Number(c) < 2 ** 32 - 1)
  ) && columns.length <= 200;
}

/**
 * Compares two versions of a row of one table (same schema) field by
 * field from their record bytes: a field whose serial type and bytes are
 * equal is equal without being decoded; the others are decoded, masked and
 * compared as values. Gives the same field changes as `diffFields` of the
 * two row objects.
 */
export class RowComparer {
  #plan: TablePlan;
  #ph: (string | null)[];
  #hb: RecordHeader;
  #ha: RecordHeader;
  /** Per column, its record field (a `WITHOUT ROWID` table's records hold the key first). */
  #cf: Int32Array;
  constructor(
    plan: TablePlan,
    masks: readonly MaskRule[] | undefined,
    colField: Int32Array | null = null,
  ) {
    this.#plan = plan;
    this.#cf = colField ??
      Int32Array.from(plan.columns, (_, i) => i);
    const n = plan.columns.length;
    this.#ph = plan.columns.map((c) => {
      let ph: string | null = null;
      for (const m of masks ?? []) if (m.column === c) ph = `<${m.kind}>`;
      return ph;
    });
    this.#hb = new RecordHeader(n);
    this.#ha = new RecordHeader(n);
  }

  #value(
    buf: Uint8Array,
    view: DataView | null,
    i: number,
    count: number,
    types: Int32Array,
    offs: Int32Array,
    rowid: number,
  ): unknown {
    const plan = this.#plan;
    const f = this.#cf[i]!;
    let v: unknown;
    if (i === plan.aliasIdx) {
      if (f < count && types[f] !== 0) {
        throw new PageWalkError("stored INTEGER PRIMARY KEY value");
      }
      v = rowid;
    } else if (f >= count) {
      if (plan.hasDefault[i]) {
        throw new PageWalkError("short record with default");
      }
      v = null;
    } else v = valueAt(buf, view, types[f]!, offs[f]!);
    const ph = this.#ph[i];
    return ph != null && v !== null ? ph : v;
  }

  /** The field changes between the two records (empty when equal). */
  compare(
    pb: Uint8Array,
    atB: number,
    sizeB: number,
    pa: Uint8Array,
    atA: number,
    sizeA: number,
    rowid: number,
  ): RecordFieldChange[] {
    const hb = this.#hb, ha = this.#ha;
    const cb = hb.parse(pb, atB, sizeB);
    const ca = ha.parse(pa, atA, sizeA);
    const tb = hb.types, ob = hb.offs, ta = ha.types, oa = ha.offs;
    if (cb < 0 || ca < 0) throw new PageWalkError("record needs SQL");
    return this.compareParsed(pb, cb, tb, ob, pa, ca, ta, oa, rowid);
  }

  /**
   * {@linkcode compare} of two records whose headers are parsed already
   * (`cb`/`ca` fields, serial types and offsets as a `RecordHeader` gives).
   */
  compareParsed(
    pb: Uint8Array,
    cb: number,
    tb: Int32Array,
    ob: Int32Array,
    pa: Uint8Array,
    ca: number,
    ta: Int32Array,
    oa: Int32Array,
    rowid: number,
  ): RecordFieldChange[] {
    const plan = this.#plan;
    const n = plan.columns.length;
    let out: RecordFieldChange[] | null = null;
    const cf = this.#cf;
    for (let i = 0; i < n; i++) {
      const f = cf[i]!;
      if (f < cb && f < ca && tb[f] === ta[f] && i !== plan.aliasIdx) {
        const s = ob[f]!, e = ob[f + 1]!, s2 = oa[f]!;
        if (sameBytes(pb, s, pa, s2, e - s)) continue;
      } else if (f >= cb && f >= ca && i !== plan.aliasIdx) continue;
      const x = this.#value(pb, null, i, cb, tb, ob, rowid);
      const y = this.#value(pa, null, i, ca, ta, oa, rowid);
      if (x === y || valuesEqual(x, y)) continue;
      (out ??= []).push({
        field: plan.columns[i]!,
        before: x,
        after: y,
        lossy: x !== null,
      });
    }
    return out ?? NO_CHANGES;
  }
}

export const NO_CHANGES: RecordFieldChange[] = [];

function anyLossy(fields: readonly RecordFieldChange[]): boolean {
  for (let i = 0; i < fields.length; i++) if (fields[i]!.lossy) return true;
  return false;
}

export function sameBytes(
  a: Uint8Array,
  ai: number,
  b: Uint8Array,
  bi: number,
  n: number,
): boolean {
  for (let k = 0; k < n; k++) if (a[ai + k] !== b[bi + k]) return false;
  return true;
}

/** Records sorted by key as the snapshot orders them (each key parsed once). */
export function sortByKey<T extends { key: string }>(xs: T[]): T[] {
  if (xs.length < 2) return xs;
  const order = Array.from(xs, (_, i) => i);
  const texts = plainTextKeys(xs);
  if (texts !== null) {
    // One ASCII text each: code point order is the strings' own order.
    order.sort((i, j) => {
      const x = texts[i]!, y = texts[j]!;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    return order.map((i) => xs[i]!);
  }
  const ints = integerKeys(xs);
  if (ints !== null) {
    const k = ints.length / xs.length;
    order.sort((i, j) => {
      for (let c = 0; c < k; c++) {
        const x = ints[i * k + c]!, y = ints[j * k + c]!;
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    });
    return order.map((i) => xs[i]!);
  }
  const vals = xs.map((x) => JSON.parse(x.key) as unknown[]);
  order.sort((i, j) => compareKeyVals(vals[i]!, vals[j]!));
  return order.map((i) => xs[i]!);
}

/**
 * The texts of keys that are each one text written as it stands
 * (`["…"]`, printable ASCII without `"` or `\\`), or null when any other.
 */
function plainTextKeys(xs: readonly { key: string }[]): string[] | null {
  const out: string[] = new Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const key = xs[i]!.key;
    const n = key.length;
    if (
      n < 4 || key.charCodeAt(0) !== 0x5b || key.charCodeAt(1) !== 0x22 ||
      key.charCodeAt(n - 2) !== 0x22 || key.charCodeAt(n - 1) !== 0x5d
    ) return null;
    for (let j = 2; j < n - 2; j++) {
      const c = key.charCodeAt(j);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return null;
    }
    out[i] = key.slice(2, n - 2);
  }
  return out;
}

/**
 * The values of keys that are all integers of at most 15 digits, as many
 * in each key (`[1,-2]`), flat (key `i`'s at `i * k` on); or null when any
 * other.
 */
function integerKeys(xs: readonly { key: string }[]): Float64Array | null {
  const first = xs[0]!.key;
  let k = 1;
  for (let j = 0; j < first.length; j++) if (first[j] === ",") k++;
  const out = new Float64Array(xs.length * k);
  for (let i = 0; i < xs.length; i++) {
    const key = xs[i]!.key;
    const n = key.length;
    if (key.charCodeAt(0) !== 0x5b || key.charCodeAt(n - 1) !== 0x5d) {
      return null;
    }
    let p = 1;
    for (let c = 0; c < k; c++) {
      if (c > 0) {
        if (key.charCodeAt(p) !== 0x2c) return null;
        p++;
      }
      const neg = key.charCodeAt(p) === 0x2d;
      if (neg) p++;
      const start = p;
      let v = 0;
      for (; p < n - 1; p++) {
        const d = key.charCodeAt(p) - 0x30;
        if (d < 0 || d > 9) break;
        v = v * 10 + d;
      }
      const digits = p - start;
      // A number as JSON writes it: no leading zero, at most 15 digits.
      if (
        digits === 0 || digits > 15 ||
        (digits > 1 && key.charCodeAt(start) === 0x30)
      ) return null;
      out[i * k + c] = neg ? -v : v;
    }
    if (p !== n - 1) return null;
  }
  return out;
}

/**
 * {@linkcode compareValues} of two keys' values (arrays of the same
 * length), numbers and texts compared directly.
 */
function compareKeyVals(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === "number" && typeof y === "number") {
      if (x !== y) return x < y ? -1 : 1;
    } else if (typeof x === "string" && typeof y === "string") {
      if (x !== y) return compareStrings(x, y);
    } else {
      const c = compareValues(x, y);
      if (c !== 0) return c;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
