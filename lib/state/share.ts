/**
 * Sharing records between snapshots: a run keeps every distinct snapshot
 * it saw, and most of a session's records are the seed's, unchanged. Pure.
 *
 * @module
 */
import { mergeByKey } from "./keys.ts";
import { sameValue } from "./patched.ts";
import {
  type Region,
  regionKey,
  type Snapshot,
  type StateRecord,
} from "./types.ts";

/**
 * `snap` with every record equal to one of `base` (same region, key and
 * canonical value) replaced by `base`'s own object, so a million-row
 * snapshot that differs from the seed in one row costs one row of memory
 * beyond an array of references. The result is equal to `snap` (same
 * digest); `snap`'s arrays are not modified.
 *
 * @example
 * ```ts ignore
 * const kept = shareRecords(seed, normalize(snapshot, def));
 * ```
 */
export function shareRecords(base: Snapshot, snap: Snapshot): Snapshot {
  if (base === snap) return snap;
  const byKey = new Map<string, Region>();
  for (const r of base.regions) byKey.set(regionKey(r), r);
  const regions = snap.regions.map((r) => {
    const b = byKey.get(regionKey(r))?.records;
    if (b === undefined || b.length === 0) return r;
    const out: StateRecord[] = [];
    mergeByKey(b, r.records, {
      both: (x, y) => out.push(sameValue(x, y) ? x : y),
      right: (y) => out.push(y),
    });
    return { ...r, records: out };
  });
  return { regions, problems: snap.problems };
}
