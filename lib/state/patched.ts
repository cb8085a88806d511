/**
 * States stored as a patch against the seed (a report's stored form, and
 * how `verity run` keeps a session's state it compared with the seed page
 * by page): per region of the state, the records it has that the seed lacks
 * or holds with another value (`put`), and the keys of the seed's records it
 * no longer has (`drop`). Pure.
 *
 * @module
 */
import type { Delta } from "./delta.ts";
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

/** Whether two records hold equal values (canonically). */
export function sameValue(a: StateRecord, b: StateRecord): boolean {
  return a.value === b.value ||
    canonicalStateJson(a.value) === canonicalStateJson(b.value);
}

/**
 * The patch that turns `base` into `snap` (both whole and normalized):
 * what a report stores of `snap`.
 */
export function diffSnapshot(
  baseDigest: string,
  base: Snapshot,
  snap: Snapshot,
): SnapshotPatch {
  const byKey = new Map<string, Region>();
  for (const r of base.regions) byKey.set(regionKey(r), r);
  const regions: RegionPatch[] = snap.regions.map((r) => {
    const put: StateRecord[] = [];
    const drop: string[] = [];
    mergeByKey(byKey.get(regionKey(r))?.records ?? [], r.records, {
      both: (x, y) => {
        if (!sameValue(x, y)) put.push(y);
      },
      left: (x) => drop.push(x.key),
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
    };
  });
  return { base: baseDigest, problems: snap.problems, regions };
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

/** Records of sorted lists merged in key order, each key once. */
function union<T extends { key: string }>(...lists: (readonly T[])[]): T[] {
  return lists.reduce<T[]>((acc, list) => {
    const out: T[] = [];
    const push = (x: T) => void out.push(x);
    mergeByKey(acc, list, { both: push, left: push, right: push });
    return out;
  }, []);
}

/**
 * The stored patch of a state from the seed (`seed`, whose digest is
 * `seedDigest`) and the delta to it that a page-by-page comparison found, given the full rows of every
 * record it added or changed (`rows`, by region id and key); or why it
 * cannot be built (then the state is snapshotted whole): a table created,
 * dropped or reshaped, a region the seed lacks, a record whose row was not
 * kept.
 *
 * @example
 * ```ts ignore
 * const patch = patchFromDelta(digest, seed, r.delta, rows, r.problems.after);
 * ```
 */
export function patchFromDelta(
  seedDigest: string,
  seed: Snapshot,
  delta: Delta,
  rows: ReadonlyMap<string, ReadonlyMap<string, Record<string, unknown>>>,
  problems: string[],
): SnapshotPatch | { why: string } {
  // A region without columns (json, fs) created empty or dropped shows in
  // no delta: only tables (created, dropped, reshaped: a structure
  // change) say whether they exist.
  const untabled = seed.regions.find((r) => r.columns === undefined);
  if (untabled !== undefined) {
    return { why: `region ${regionId(untabled)} is not a table` };
  }
  const ids = new Set(seed.regions.map(regionId));
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
    base: seedDigest,
    problems,
    regions: seed.regions.map(({ records: _records, ...r }) => {
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
