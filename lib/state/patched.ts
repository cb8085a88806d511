/**
 * States kept without the seed's records. Pure.
 *
 * A run compares every session with one seed state. Holding the seed's
 * snapshot (every record of every table) makes memory follow the store, so
 * a state may instead be kept as:
 *
 * - a {@linkcode SeedHeader}: the seed itself, without records (its digest,
 *   problems, and each region's adapter, kind, name, category, columns and
 *   record count);
 * - a {@linkcode PatchedState}: the seed plus a patch: per region of the
 *   state, the records it has that the seed lacks or holds with another
 *   value (`put`), the seed's keys it no longer has (`drop`), and in memory
 *   the seed's own records at those keys (`was`); per seed region the state
 *   no longer has, every seed record of it (`gone`);
 * - or a whole {@linkcode Snapshot}, as before.
 *
 * {@linkcode deltaBetween} compares any two of them and equals
 * `computeDelta` of the two materialized snapshots (patched_test.ts proves
 * it over random snapshots and edits): two states kept against the same
 * seed differ only at the union of their patches' keys, where the side
 * that did not touch a key holds the seed's record (the other side's
 * `was`). A whole snapshot is compared only with a whole snapshot: a
 * patched state and a whole one would need the seed's records.
 *
 * @module
 */
import {
  assembleDelta,
  computeDelta,
  type Delta,
  diffFields,
  emptyRegionDiff,
  type RegionDiff,
  structureChange,
} from "./delta.ts";
import { canonicalStateJson, compareKeys, mergeByKey } from "./keys.ts";
import { isPlainObject as isObject } from "../common/is_plain_object.ts";
import {
  type Region,
  regionId,
  regionKey,
  type Snapshot,
  type StateRecord,
} from "./types.ts";

/** One region of a state stored against the seed (a report's stored form). */
export interface RegionPatch {
  adapter: string;
  kind: Region["kind"];
  name: string;
  category: Region["category"];
  columns?: string[];
  /** Records absent from the base's region or different there, by key order. */
  put: StateRecord[];
  /** Keys of the base region's records this region no longer has, by key order. */
  drop: string[];
}

/** A snapshot stored as a patch against the base (the seed). */
export interface SnapshotPatch {
  /** Digest of the whole snapshot the patch applies to. */
  base: string;
  problems: string[];
  /** Every region of the snapshot, in its order. */
  regions: RegionPatch[];
}

/** A region of the seed without its records. */
export interface SeedRegionHeader extends Omit<Region, "records"> {
  /** How many records the seed's region holds. */
  count: number;
}

/** The seed state without records: what is known of it without holding them. */
export interface SeedHeader {
  /** `snapshotDigest` of the seed's normalized snapshot. */
  digest: string;
  problems: string[];
  /** In the snapshot's region order. */
  regions: SeedRegionHeader[];
}

/** A region of a patched state: its patch and the seed's records it replaces. */
export interface PatchedRegion extends RegionPatch {
  /**
   * The seed's records at the keys of `put` it holds (what tells a changed
   * record from an added one, and its values before) and at the keys of
   * `drop` (optional: a removal names keys only), in key order; empty for
   * a region the seed lacks.
   */
  was: StateRecord[];
}

/** A seed region a patched state no longer has (a table dropped). */
export interface GoneRegion extends Omit<Region, "records"> {
  /** Every record of the seed's region, in key order. */
  was: StateRecord[];
}

/** A state kept as the seed plus a patch (see the module doc). */
export interface PatchedState {
  /** The seed's digest. */
  base: string;
  problems: string[];
  /** Every region of the state, in its order. */
  regions: PatchedRegion[];
  /** Seed regions the state lacks, in the seed's order. */
  gone: GoneRegion[];
}

/** A state as the verdicts read it: whole, the seed's header, or patched. */
export type StateView = Snapshot | SeedHeader | PatchedState;

/** Whether a state view is the seed's header. */
export function isSeedHeader(v: StateView): v is SeedHeader {
  return Object.hasOwn(v, "digest");
}

/** Whether a state view is a patched state. */
export function isPatchedState(v: StateView): v is PatchedState {
  return Object.hasOwn(v, "base") && Object.hasOwn(v, "gone");
}

/** Whether a state view is a whole snapshot. */
export function isWholeSnapshot(v: StateView): v is Snapshot {
  return !isSeedHeader(v) && !Object.hasOwn(v, "base");
}

/** The header of a whole seed snapshot. */
export function headerOf(digest: string, seed: Snapshot): SeedHeader {
  return {
    digest,
    problems: seed.problems,
    regions: seed.regions.map(({ records, ...rest }) => ({
      ...rest,
      count: records.length,
    })),
  };
}

/** Whether two records hold equal values (canonically). */
export function sameValue(a: StateRecord, b: StateRecord): boolean {
  return a.value === b.value ||
    canonicalStateJson(a.value) === canonicalStateJson(b.value);
}

/**
 * The patched state of `snap` against the seed `base` (both whole and
 * normalized): what a report stores (`put`, `drop`) and the seed's records
 * at those keys.
 */
export function patchedOf(
  baseDigest: string,
  base: Snapshot,
  snap: Snapshot,
): PatchedState {
  const byKey = new Map<string, Region>();
  for (const r of base.regions) byKey.set(regionKey(r), r);
  const kept = new Set<string>();
  const regions: PatchedRegion[] = snap.regions.map((r) => {
    kept.add(regionKey(r));
    const put: StateRecord[] = [];
    const drop: string[] = [];
    const was: StateRecord[] = [];
    mergeByKey(byKey.get(regionKey(r))?.records ?? [], r.records, {
      both: (x, y) => {
        if (sameValue(x, y)) return;
        put.push(y);
        was.push(x);
      },
      left: (x) => {
        drop.push(x.key);
        was.push(x);
      },
      right: (y) => put.push(y),
    });
    return {
      adapter: r.adapter,
      kind: r.kind,
      name: r.name,
      category: r.category,
      ...(r.columns !== undefined ? { columns: r.columns } : {}),
      put,
      drop,
      was,
    };
  });
  const gone: GoneRegion[] = base.regions.filter((r) => !kept.has(regionKey(r)))
    .map(({ records, ...rest }) => ({ ...rest, was: records }));
  return { base: baseDigest, problems: snap.problems, regions, gone };
}

/**
 * Rebuild a snapshot from its base and patch. Records the patch does not
 * touch are the base's own objects (shared, not copied). Throws
 * `RangeError` on a malformed patch (unsorted keys, a dropped key the base
 * lacks).
 */
export function applyPatch(base: Snapshot, patch: SnapshotPatch): Snapshot {
  const byKey = new Map<string, Region>();
  for (const r of base.regions) byKey.set(regionKey(r), r);
  const regions: Region[] = patch.regions.map((p, n) => {
    const where = `regions[${n}]`;
    if (
      !isObject(p) || typeof p.adapter !== "string" ||
      typeof p.name !== "string" || typeof p.kind !== "string" ||
      typeof p.category !== "string" || !Array.isArray(p.put) ||
      !Array.isArray(p.drop)
    ) {
      throw new RangeError(`${where}: not a region patch`);
    }
    const ordered = (keys: readonly unknown[], what: string, bad: string) => {
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k];
        if (typeof key !== "string") throw new RangeError(`${where}: ${bad}`);
        if (k > 0 && compareKeys(keys[k - 1] as string, key) >= 0) {
          throw new RangeError(`${where}: ${what} keys not in key order`);
        }
      }
    };
    ordered(p.drop, "drop", "bad drop");
    ordered(
      p.put.map((rec) => isObject(rec) && isObject(rec.value) ? rec.key : null),
      "put",
      "bad put record",
    );
    const drops = new Set<string>(p.drop);
    const out: StateRecord[] = [];
    let found = 0;
    mergeByKey(byKey.get(regionKey(p))?.records ?? [], p.put, {
      both: (_, rec) => {
        if (drops.has(rec.key)) {
          throw new RangeError(`${where}: key both put and dropped`);
        }
        out.push(rec);
      },
      left: (x) => {
        if (drops.has(x.key)) found++;
        else out.push(x);
      },
      right: (rec) => out.push(rec),
    });
    if (found !== drops.size) {
      throw new RangeError(
        `${where}: drops ${drops.size - found} key(s) the base does not hold`,
      );
    }
    return {
      adapter: p.adapter,
      kind: p.kind,
      name: p.name,
      category: p.category,
      records: out,
      ...(p.columns !== undefined ? { columns: p.columns } : {}),
    };
  });
  return { regions, problems: patch.problems };
}

/** What a report stores of a patched state: its patch, without the seed's records. */
export function storedPatch(p: PatchedState): SnapshotPatch {
  return {
    base: p.base,
    problems: p.problems,
    regions: p.regions.map(({ was: _was, ...rest }) => rest),
  };
}

/** The seed's header as a patched state that changes nothing. */
function unchanged(h: SeedHeader): PatchedState {
  return {
    base: h.digest,
    problems: h.problems,
    regions: h.regions.map(({ count: _count, ...rest }) => ({
      ...rest,
      put: [],
      drop: [],
      was: [],
    })),
    gone: [],
  };
}

/**
 * What changed from state `a` to state `b`: equal to `computeDelta` of the
 * two materialized snapshots. Throws `RangeError` for a whole snapshot
 * against a state kept against the seed, or two states kept against
 * different seeds.
 *
 * @example
 * ```ts ignore
 * const d = deltaBetween(seedHeader, patchedSession);
 * if (d.business.lossy) console.log("pre-existing business state lost");
 * ```
 */
export function deltaBetween(a: StateView, b: StateView): Delta {
  const wa = isWholeSnapshot(a);
  const wb = isWholeSnapshot(b);
  if (wa && wb) return computeDelta(a, b);
  if (wa || wb) {
    throw new RangeError(
      "a whole snapshot cannot be compared with a state kept against the seed",
    );
  }
  const pa = asPatched(a);
  const pb = asPatched(b);
  if (pa.base !== pb.base) {
    throw new RangeError(
      `states kept against different seeds (${pa.base}, ${pb.base})`,
    );
  }
  return assembleDelta(patchedDiffs(pa, pb));
}

function asPatched(v: SeedHeader | PatchedState): PatchedState {
  return isSeedHeader(v) ? unchanged(v) : v;
}

interface Side {
  region?: PatchedRegion;
  gone?: GoneRegion;
}

function sides(p: PatchedState): Map<string, Side> {
  const m = new Map<string, Side>();
  for (const r of p.regions) m.set(regionId(r), { region: r });
  for (const g of p.gone) m.set(regionId(g), { gone: g });
  return m;
}

function patchedDiffs(a: PatchedState, b: PatchedState): RegionDiff[] {
  const sa = sides(a);
  const sb = sides(b);
  const parts: RegionDiff[] = [];
  for (const id of new Set([...sa.keys(), ...sb.keys()])) {
    const x = sa.get(id) ?? {};
    const y = sb.get(id) ?? {};
    const ar = x.region;
    const br = y.region;
    if (ar === undefined && br === undefined) continue;
    const part = emptyRegionDiff(id, (br ?? ar)!.category);
    if (ar !== undefined && br !== undefined) bothPresent(id, ar, br, part);
    else if (ar !== undefined) {
      // b lacks the region: b dropped a seed region, or a created it.
      for (const k of keysOf(y.gone?.was ?? [], ar)) {
        part.removed.push({ region: id, key: k });
      }
    } else {
      for (const k of keysOf(x.gone?.was ?? [], br!)) {
        part.added.push({ region: id, key: k });
      }
    }
    part.structure = structureChange(
      id,
      ar?.columns ?? null,
      br?.columns ?? null,
    );
    parts.push(part);
  }
  return parts;
}

/** Every key of a region: the seed's records merged with its patch, in key order. */
function keysOf(seed: readonly StateRecord[], p: RegionPatch): string[] {
  const drops = new Set(p.drop);
  const out: string[] = [];
  mergeByKey(seed, p.put, {
    both: (_, rec) => out.push(rec.key),
    left: (x) => {
      if (!drops.has(x.key)) out.push(x.key);
    },
    right: (rec) => out.push(rec.key),
  });
  return out;
}

/** Records of sorted lists merged in key order, each key once. */
function union<T extends { key: string }>(...lists: (readonly T[])[]): T[] {
  return lists.reduce<T[]>((acc, list) => {
    const out: T[] = [];
    const push = (x: T) => void out.push(x);
    mergeByKey(acc, list, { both: push, left: push, right: push });
    return out;
  }, []);
}

function byKey(records: readonly StateRecord[]): Map<string, StateRecord> {
  const m = new Map<string, StateRecord>();
  for (const r of records) m.set(r.key, r);
  return m;
}

/** A seed record known to exist whose value is not needed. */
const SEED_ROW: StateRecord = { key: "", value: {} };

/** A region both states have: they differ only at the keys their patches touch. */
function bothPresent(
  id: string,
  a: PatchedRegion,
  b: PatchedRegion,
  into: RegionDiff,
): void {
  const aPut = byKey(a.put);
  const bPut = byKey(b.put);
  const aDrop = new Set(a.drop);
  const bDrop = new Set(b.drop);
  const seed = byKey(a.was);
  for (const r of b.was) seed.set(r.key, r);
  const keys = union(
    a.put,
    a.drop.map((key) => ({ key })),
    b.put,
    b.drop.map((key) => ({ key })),
  ).map((r) => r.key);
  // The side that did not touch a key holds the seed's record there: its
  // value is in the other side's `was` when that side put the key; when
  // it dropped the key only its presence matters (a removal names keys).
  const held = (k: string) =>
    seed.get(k) ?? (aDrop.has(k) || bDrop.has(k) ? SEED_ROW : undefined);
  for (const k of keys) {
    const x = aPut.get(k) ?? (aDrop.has(k) ? undefined : held(k));
    const y = bPut.get(k) ?? (bDrop.has(k) ? undefined : held(k));
    if (x === undefined) {
      if (y !== undefined) into.added.push({ region: id, key: k });
      continue;
    }
    if (y === undefined) {
      into.removed.push({ region: id, key: k });
      continue;
    }
    if (x.value === y.value) continue;
    const fields = diffFields(x.value, y.value);
    if (fields.length > 0) {
      into.changed.push({
        region: id,
        key: k,
        fields,
        lossy: fields.some((f) => f.lossy),
      });
    }
  }
}

/**
 * The stored patch of a state from the seed's header and the delta to it
 * that a page-by-page comparison found, given the full rows of every
 * record it added or changed (`rows`, by region id and key); or why it
 * cannot be built (then the state is snapshotted whole): a table created,
 * dropped or reshaped, a region the seed lacks, a record whose row was not
 * kept.
 *
 * @example
 * ```ts ignore
 * const patch = patchFromDelta(header, r.delta, r.addedValues, r.problems.after);
 * ```
 */
export function patchFromDelta(
  header: SeedHeader,
  delta: Delta,
  rows: ReadonlyMap<string, ReadonlyMap<string, Record<string, unknown>>>,
  problems: string[],
): SnapshotPatch | { why: string } {
  // A region without columns (json, fs) created empty or dropped shows in
  // no delta: only tables (created, dropped, reshaped: a structure
  // change) say whether they exist.
  const untabled = header.regions.find((r) => r.columns === undefined);
  if (untabled !== undefined) {
    return { why: `region ${regionId(untabled)} is not a table` };
  }
  const ids = new Map(header.regions.map((r) => [regionId(r), r]));
  const put = new Map<
    string,
    { added: StateRecord[]; changed: StateRecord[] }
  >();
  const drop = new Map<string, string[]>();
  for (const c of ["business", "append_only", "unclassified"] as const) {
    const d = delta[c];
    if (d.structure.length > 0) {
      return { why: "a table was created, dropped or reshaped" };
    }
    const lists: [string, { region: string; key: string }[]][] = [
      ["added", d.added],
      ["changed", d.changed],
    ];
    for (const [what, list] of lists) {
      for (const x of list) {
        if (!ids.has(x.region)) {
          return { why: `region ${x.region} is not in the seed` };
        }
        const value = rows.get(x.region)?.get(x.key);
        if (value === undefined) {
          return {
            why: `the row of a record ${what} in ${x.region} was not kept`,
          };
        }
        let p = put.get(x.region);
        if (p === undefined) put.set(x.region, p = { added: [], changed: [] });
        p[what as "added" | "changed"].push({ key: x.key, value });
      }
    }
    for (const x of d.removed) {
      if (!ids.has(x.region)) {
        return { why: `region ${x.region} is not in the seed` };
      }
      let l = drop.get(x.region);
      if (l === undefined) drop.set(x.region, l = []);
      l.push(x.key);
    }
  }
  return {
    base: header.digest,
    problems,
    regions: header.regions.map(({ count: _count, ...r }) => {
      const id = regionId(r);
      const p = put.get(id);
      return {
        ...r,
        put: p === undefined
          ? []
          : union(inKeyOrder(p.added), inKeyOrder(p.changed)),
        drop: drop.get(id) ?? [],
      };
    }),
  };
}

/** The records in key order (sorted only when they are not). */
function inKeyOrder(xs: StateRecord[]): StateRecord[] {
  for (let i = 1; i < xs.length; i++) {
    if (compareKeys(xs[i - 1]!.key, xs[i]!.key) >= 0) {
      return [...xs].sort((a, b) => compareKeys(a.key, b.key));
    }
  }
  return xs;
}

/** A value a flat row's field change can stand in for (no nesting below it). */
function flatValue(v: unknown): boolean {
  if (v === null || typeof v !== "object") return true;
  if (Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.$bytes === "string" || typeof o.$int === "string" ||
    typeof o.$real === "string";
}

/**
 * The full rows of the records a delta changed, from the seed's rows at
 * those keys (`was`, by region id and key) and the delta's field changes
 * (flat rows only: every field's before must match the seed's value); or
 * why they cannot be rebuilt.
 */
export function changedRows(
  delta: Delta,
  was: ReadonlyMap<string, ReadonlyMap<string, StateRecord>>,
): Map<string, Map<string, Record<string, unknown>>> | { why: string } {
  const out = new Map<string, Map<string, Record<string, unknown>>>();
  for (const c of ["business", "append_only", "unclassified"] as const) {
    for (const ch of delta[c].changed) {
      const rec = was.get(ch.region)?.get(ch.key);
      if (rec === undefined) {
        return { why: `record ${ch.key} of ${ch.region} is not in the seed` };
      }
      const value: Record<string, unknown> = { ...rec.value };
      for (const f of ch.fields) {
        const before = value[f.field];
        if (
          !Object.hasOwn(rec.value, f.field) || before === undefined ||
          f.before === undefined || f.after === undefined ||
          !flatValue(before) || !flatValue(f.after) ||
          canonicalStateJson(before) !== canonicalStateJson(f.before)
        ) {
          return { why: `field ${f.field} of ${ch.region} ${ch.key}` };
        }
        value[f.field] = f.after;
      }
      let m = out.get(ch.region);
      if (m === undefined) out.set(ch.region, m = new Map());
      m.set(ch.key, value);
    }
  }
  return out;
}
