/**
 * A snapshot rebuilt from the snapshot it started from and the delta to
 * it, when the delta says everything: records changed field by field (flat
 * rows) and records removed, no record added (a delta names an added
 * record by its key only), no table created, dropped or reshaped. The
 * records the delta does not name are the base's own objects (shared, not
 * copied). Pure.
 *
 * @module
 */
import type { CategoryDelta, Delta, RecordChange } from "./delta.ts";
import { valuesEqual } from "./keys.ts";
import { CATEGORIES, regionId, type Snapshot } from "./types.ts";

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
export function applyDelta(base: Snapshot, delta: Delta): Snapshot | string {
  try {
    return rebuild(base, delta);
  } catch (e) {
    if (e instanceof ApplyError) return `cannot rebuild: ${e.message}`;
    throw e;
  }
}

/** Refusals found while rebuilding (returned by applyDelta, never thrown out). */
class ApplyError extends Error {}

function rebuild(base: Snapshot, delta: Delta): Snapshot | string {
  const changed = new Map<string, Map<string, RecordChange>>();
  const removed = new Map<string, Set<string>>();
  for (const c of CATEGORIES) {
    const d: CategoryDelta = delta[c];
    if (d.added.length > 0) return "a record was added";
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
  for (const id of [...changed.keys(), ...removed.keys()]) {
    if (!ids.has(id)) return `region ${id} is not in the base`;
  }
  const regions = base.regions.map((r) => {
    const id = regionId(r);
    const ch = changed.get(id);
    const rm = removed.get(id);
    if (ch === undefined && rm === undefined) return r;
    const records = [];
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
    return { ...r, records };
  });
  return { regions, problems: base.problems };
}
