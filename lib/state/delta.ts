/**
 * The delta engine: what changed between two normalized snapshots, per
 * category, with every change classified additive or lossy. Pure.
 *
 * - added record: additive; removed record: lossy.
 * - changed field: a new field, or `null` becoming a value, is additive;
 *   a field removed, a value becoming `null`, or a scalar value changed is
 *   lossy; objects are compared field by field (reported with dotted
 *   paths); an array whose old elements all survive in order (appended or
 *   inserted elements only) is additive, one that lost an element is lossy.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { canonicalStateJson, mergeByKey, valuesEqual } from "./keys.ts";
import {
  type Category,
  type Region,
  regionId,
  type Snapshot,
  type StateRecord,
} from "./types.ts";

/** One field that differs between two versions of a record. */
export interface RecordFieldChange {
  /** Column name, or a dotted path into a json value (`meta.tags`, `a["x.y"]`). */
  field: string;
  /** `undefined` when the field did not exist before. */
  before: unknown;
  /** `undefined` when the field no longer exists. */
  after: unknown;
  /** Whether something pre-existing was lost. */
  lossy: boolean;
}

/** A record present before and after whose value changed. */
export interface RecordChange {
  /** `"<adapter>:<name>"`. */
  region: string;
  key: string;
  fields: RecordFieldChange[];
  lossy: boolean;
}

/**
 * A change to a table itself rather than to its rows: created, dropped, or
 * its columns changed. Only regions that carry `columns` (sqlite tables)
 * have a structure; an empty table created or dropped changes no record,
 * yet it is a change of state.
 */
export interface StructureChange {
  /** `"<adapter>:<name>"`. */
  region: string;
  change: "created" | "dropped" | "columns";
  /** Columns before (null when the table did not exist). */
  before: string[] | null;
  /** Columns after (null when the table no longer exists). */
  after: string[] | null;
  /** Dropped, or a column removed. */
  lossy: boolean;
}

/** What changed in one category. */
export interface CategoryDelta {
  added: { region: string; key: string }[];
  removed: { region: string; key: string }[];
  changed: RecordChange[];
  /** Tables created, dropped or reshaped (sqlite). */
  structure: StructureChange[];
  /** Anything pre-existing lost: a record removed or a lossy change. */
  lossy: boolean;
  empty: boolean;
}

/** What changed between two snapshots, per category. */
export interface Delta {
  business: CategoryDelta;
  append_only: CategoryDelta;
  unclassified: CategoryDelta;
  empty: boolean;
}

function emptyCategory(): CategoryDelta {
  return {
    added: [],
    removed: [],
    changed: [],
    structure: [],
    lossy: false,
    empty: true,
  };
}

/**
 * Compare two snapshots (both already normalized). A region present on one
 * side only counts as all its records added or removed; a region's
 * category is taken from the after side when both have it. A table (a
 * region with `columns`) created, dropped or with different columns is a
 * structure change, even when it holds no rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Snapshot } from "./types.ts";
 * const items = (qty: number): Snapshot => ({
 *   problems: [],
 *   regions: [{
 *     adapter: "state.db", kind: "sqlite", name: "items", category: "business",
 *     records: [{ key: "[1]", value: { id: 1, qty } }], columns: ["id", "qty"],
 *   }],
 * });
 * const d = computeDelta(items(40), items(39));
 * assert.equal(d.business.lossy, true, "a value overwritten");
 * assert.deepEqual(d.business.changed.map((c) => c.key), ["[1]"]);
 * ```
 */
export function computeDelta(before: Snapshot, after: Snapshot): Delta {
  return assembleDelta(regionDiffs(before, after));
}

/**
 * The changes of every region between two snapshots (both normalized), one
 * {@linkcode RegionDiff} per region on either side.
 */
export function regionDiffs(before: Snapshot, after: Snapshot): RegionDiff[] {
  const beforeById = new Map<string, Region>();
  for (const r of before.regions) beforeById.set(regionId(r), r);
  const afterById = new Map<string, Region>();
  for (const r of after.regions) afterById.set(regionId(r), r);
  const ids = [...new Set([...beforeById.keys(), ...afterById.keys()])];
  const parts: RegionDiff[] = [];
  for (const id of ids) {
    const b = beforeById.get(id);
    const a = afterById.get(id);
    const part = emptyRegionDiff(id, (a ?? b)!.category);
    diffRegion(id, b?.records ?? [], a?.records ?? [], part);
    part.structure = structureChange(
      id,
      b?.columns ?? null,
      a?.columns ?? null,
    );
    parts.push(part);
  }
  return parts;
}

/**
 * The changes of one region, found by whatever means (a merge of two
 * snapshots' records, or a reader comparing two databases page by page):
 * what {@linkcode assembleDelta} puts together.
 */
export interface RegionDiff {
  /** `"<adapter>:<name>"`. */
  region: string;
  category: Category;
  /** In key order. */
  added: { region: string; key: string }[];
  /** In key order. */
  removed: { region: string; key: string }[];
  /** In key order. */
  changed: RecordChange[];
  structure: StructureChange | null;
  /**
   * The full records where the reader kept them (a snapshot merge always
   * does; the page reader when asked): what turns the before side into the
   * after side without either snapshot. Never part of a delta.
   */
  rows?: RegionRows;
}

/** The full records of one region's changes, masked as a snapshot holds them. */
export interface RegionRows {
  /** The after side's records at the added and changed keys, in key order. */
  put: StateRecord[];
  /** The before side's records at the changed and removed keys, in key order. */
  was: StateRecord[];
}

/** A region diff with nothing in it yet. */
export function emptyRegionDiff(
  region: string,
  category: Category,
): RegionDiff {
  return {
    region,
    category,
    added: [],
    removed: [],
    changed: [],
    structure: null,
  };
}

/**
 * Put region diffs together into a delta: regions in the order of their
 * ids (as {@linkcode computeDelta} visits them), each category's lists
 * concatenated, `lossy` and `empty` derived.
 */
export function assembleDelta(parts: readonly RegionDiff[]): Delta {
  const out: Delta = {
    business: emptyCategory(),
    append_only: emptyCategory(),
    unclassified: emptyCategory(),
    empty: true,
  };
  const sorted = [...parts].sort((x, y) =>
    x.region < y.region ? -1 : x.region > y.region ? 1 : 0
  );
  for (const p of sorted) {
    const d = out[p.category];
    for (const x of p.added) d.added.push(x);
    for (const x of p.removed) d.removed.push(x);
    for (const x of p.changed) d.changed.push(x);
    if (p.structure !== null) d.structure.push(p.structure);
  }
  for (const c of ["business", "append_only", "unclassified"] as const) {
    out[c] = categoryDelta(out[c]);
    if (!out[c].empty) out.empty = false;
  }
  return out;
}

/** A category's changes with `lossy` and `empty` derived from them. */
export function categoryDelta(
  c: Pick<CategoryDelta, "added" | "removed" | "changed" | "structure">,
): CategoryDelta {
  const { added, removed, changed, structure } = c;
  return {
    added,
    removed,
    changed,
    structure,
    lossy: removed.length > 0 || changed.some((x) => x.lossy) ||
      structure.some((x) => x.lossy),
    empty: added.length + removed.length + changed.length +
        structure.length === 0,
  };
}

/** The structure change of one table, or null (none, or not a table). */
export function structureChange(
  region: string,
  b: readonly string[] | null,
  a: readonly string[] | null,
): StructureChange | null {
  if (b === null) {
    if (a === null) return null;
    return {
      region,
      change: "created",
      before: null,
      after: [...a],
      lossy: false,
    };
  }
  if (a === null) {
    return {
      region,
      change: "dropped",
      before: [...b],
      after: null,
      lossy: true,
    };
  }
  if (b.length === a.length && b.every((c, i) => c === a[i])) return null;
  return {
    region,
    change: "columns",
    before: [...b],
    after: [...a],
    lossy: b.some((c) => !a.includes(c)),
  };
}

/** Merge two key-sorted record lists. */
function diffRegion(
  region: string,
  before: StateRecord[],
  after: StateRecord[],
  into: RegionDiff,
): void {
  const rows: RegionRows = { put: [], was: [] };
  mergeByKey(before, after, {
    both: (x, y) => {
      if (x.value === y.value) return;
      const fields = diffFields(x.value, y.value);
      if (fields.length === 0) return;
      into.changed.push({
        region,
        key: x.key,
        fields,
        lossy: fields.some((f) => f.lossy),
      });
      rows.was.push(x);
      rows.put.push(y);
    },
    left: (x) => {
      into.removed.push({ region, key: x.key });
      rows.was.push(x);
    },
    right: (y) => {
      into.added.push({ region, key: y.key });
      rows.put.push(y);
    },
  });
  into.rows = rows;
}

/** Field-level differences of two record values (flat for sqlite rows, nested for json). */
export function diffFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): RecordFieldChange[] {
  const out: RecordFieldChange[] = [];
  diffObject("", before, after, out);
  return out;
}

function isNestedRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  // Encoded scalars compare as scalars.
  return !(typeof o.$bytes === "string" || typeof o.$int === "string" ||
    typeof o.$real === "string");
}

function joinPath(prefix: string, key: string): string {
  if (prefix === "") return key;
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)
    ? `${prefix}.${key}`
    : `${prefix}[${JSON.stringify(key)}]`;
}

function diffObject(
  prefix: string,
  b: Record<string, unknown>,
  a: Record<string, unknown>,
  out: RecordFieldChange[],
): void {
  for (const k in b) {
    const bv = b[k];
    if (bv === undefined) continue;
    const field = joinPath(prefix, k);
    const av = a[k];
    if (av === undefined) {
      out.push({ field, before: bv, after: undefined, lossy: true });
      continue;
    }
    if (bv === av) continue;
    diffValue(field, bv, av, out);
  }
  for (const k in a) {
    if (a[k] === undefined || (k in b && b[k] !== undefined)) continue;
    out.push({
      field: joinPath(prefix, k),
      before: undefined,
      after: a[k],
      lossy: false,
    });
  }
}

function diffValue(
  field: string,
  bv: unknown,
  av: unknown,
  out: RecordFieldChange[],
): void {
  if (valuesEqual(bv, av)) return;
  if (isNestedRecord(bv) && isNestedRecord(av)) {
    diffObject(field, bv, av, out);
    return;
  }
  if (Array.isArray(bv) && Array.isArray(av)) {
    out.push({ field, before: bv, after: av, lossy: !isSubsequence(bv, av) });
    return;
  }
  // null -> value fills an empty field: nothing pre-existing is lost.
  out.push({ field, before: bv, after: av, lossy: bv !== null });
}

/** Whether every element of `small` appears in `big` in the same order. */
function isSubsequence(small: unknown[], big: unknown[]): boolean {
  let j = 0;
  for (const x of small) {
    while (j < big.length && !valuesEqual(x, big[j])) j++;
    if (j === big.length) return false;
    j++;
  }
  return true;
}

/**
 * `sha256:<hex>` of the snapshot's canonical JSON (regions, records and
 * problems). Equal digests mean equal observed state.
 */
export function snapshotDigest(snap: Snapshot): string {
  const h = createHash("sha256");
  h.update('{"problems":' + canonicalStateJson(snap.problems) + ',"regions":[');
  snap.regions.forEach((r, i) => {
    if (i > 0) h.update(",");
    h.update(
      `{"adapter":${JSON.stringify(r.adapter)},"category":${
        JSON.stringify(r.category)
      },"kind":${JSON.stringify(r.kind)},"name":${
        JSON.stringify(r.name)
      },"records":[`,
    );
    // Hash in batches: one update per record is slow for a million rows.
    let buf = "";
    for (let k = 0; k < r.records.length; k++) {
      const rec = r.records[k]!;
      buf += (k > 0 ? "," : "") + '{"key":' + JSON.stringify(rec.key) +
        ',"value":' + canonicalStateJson(rec.value) + "}";
      if (buf.length > 1 << 16) {
        h.update(buf);
        buf = "";
      }
    }
    h.update(buf + "]}");
  });
  h.update("]}");
  return "sha256:" + h.digest("hex");
}
