/**
 * A snapshot rebuilt from the snapshot it started from and the delta to
 * it, when the delta says everything: records changed field by field (flat
 * rows), records removed, records added whose values are given (a delta
 * names an added record by its key only), no table created, dropped or
 * reshaped. The
 * records the delta does not name are the base's own objects (shared, not
 * copied). Pure.
 *
 * @module
 */
import type { CategoryDelta, Delta, RecordChange } from "./delta.ts";
import { compareKeys, valuesEqual } from "./keys.ts";
import {
  CATEGORIES,
  regionId,
  type Snapshot,
  type StateRecord,
} from "./types.ts";

/** A value a flat row's field change can stand in for (no nesting below it). */
function flat(v: unknown): boolean {
  if (v === null || typeof v !== "object") return true;
  if (Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.$bytes === "string" || typeof o.$int === "string" ||
    typeof o.$real === "string";
}

/**
 * The snapshot `delta` leads to from `base` (both normalized), or the
 * reason it cannot be rebuilt from them (then take a snapshot).
 *
 * @example
 * ```ts ignore
 * const after = applyDelta(seed, computeDelta(seed, session));
 * if (typeof after !== "string") snapshotDigest(after); // the session's digest
 * ```
 */
export function applyDelta(
  base: Snapshot,
  delta: Delta,
  addedValues: ReadonlyMap<
    string,
    ReadonlyMap<string, Record<string, unknown>>
  > = new Map(),
): Snapshot | string {
  try {
    return rebuild(base, delta, addedValues);
  } catch (e) {
    if (e instanceof ApplyError) return `cannot rebuild: ${e.message}`;
    throw e;
  }
}

/** Refusals found while rebuilding (returned by applyDelta, never thrown out). */
class ApplyError extends Error {}

function rebuild(
  base: Snapshot,
  delta: Delta,
  addedValues: ReadonlyMap<
    string,
    ReadonlyMap<string, Record<string, unknown>>
  >,
): Snapshot | string {
  const changed = new Map<string, Map<string, RecordChange>>();
  const removed = new Map<string, Set<string>>();
  const added = new Map<string, StateRecord[]>();
  for (const c of CATEGORIES) {
    const d: CategoryDelta = delta[c];
    for (const a of d.added) {
      const value = addedValues.get(a.region)?.get(a.key);
      if (value === undefined) return "a record was added";
      let l = added.get(a.region);
      if (l === undefined) added.set(a.region, l = []);
      l.push({ key: a.key, value });
    }
    if (d.structure.length > 0) {
      return "a table was created, dropped or reshaped";
    }
    for (const ch of d.changed) {
      let m = changed.get(ch.region);
      if (m === undefined) changed.set(ch.region, m = new Map());
      if (m.has(ch.key)) return `record ${ch.key} changed twice`;
      m.set(ch.key, ch);
    }
    for (const r of d.removed) {
      let s = removed.get(r.region);
      if (s === undefined) removed.set(r.region, s = new Set());
      s.add(r.key);
    }
  }
  const ids = new Set<string>();
  for (const r of base.regions) {
    const id = regionId(r);
    if (ids.has(id)) return `two regions are named ${id}`;
    ids.add(id);
  }
  for (const id of [...changed.keys(), ...removed.keys(), ...added.keys()]) {
    if (!ids.has(id)) return `region ${id} is not in the base`;
  }
  const regions = base.regions.map((r) => {
    const id = regionId(r);
    const ch = changed.get(id);
    const rm = removed.get(id);
    const add = added.get(id);
    if (ch === undefined && rm === undefined && add === undefined) return r;
    const records: StateRecord[] = [];
    let found = 0;
    for (const rec of r.records) {
      if (rm?.has(rec.key)) {
        found++;
        continue;
      }
      const c = ch?.get(rec.key);
      if (c === undefined) {
        records.push(rec);
        continue;
      }
      found++;
      const value: Record<string, unknown> = { ...rec.value };
      for (const f of c.fields) {
        const was = value[f.field];
        if (
          !Object.hasOwn(rec.value, f.field) || was === undefined ||
          f.before === undefined || f.after === undefined || !flat(was) ||
          !flat(f.after) || !valuesEqual(was, f.before)
        ) throw new ApplyError(`field ${f.field} of ${id} ${rec.key}`);
        value[f.field] = f.after;
      }
      records.push({ key: rec.key, value });
    }
    if (found !== (ch?.size ?? 0) + (rm?.size ?? 0)) {
      throw new ApplyError(`a record of ${id} is not in the base`);
    }
    return {
      ...r,
      records: add === undefined ? records : merge(records, add, id),
    };
  });
  return { regions, problems: base.problems };
}

/**
 * `records` with `add` put in key order (`compareKeys`); each added key's
 * place found by binary search, so the base's keys are mostly not parsed.
 */
function merge(
  records: readonly StateRecord[],
  add: StateRecord[],
  id: string,
): StateRecord[] {
  add.sort((x, y) => compareKeys(x.key, y.key));
  const out: StateRecord[] = [];
  let from = 0;
  for (let k = 0; k < add.length; k++) {
    const x = add[k]!;
    if (k > 0 && compareKeys(add[k - 1]!.key, x.key) === 0) {
      throw new ApplyError(`record ${x.key} of ${id} added twice`);
    }
    let lo = from;
    let hi = records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(records[mid]!.key, x.key) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < records.length && compareKeys(records[lo]!.key, x.key) === 0) {
      throw new ApplyError(`record ${x.key} of ${id} added but present`);
    }
    for (let i = from; i < lo; i++) out.push(records[i]!);
    out.push(x);
    from = lo;
  }
  for (let i = from; i < records.length; i++) out.push(records[i]!);
  return out;
}
