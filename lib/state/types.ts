/**
 * Pure types of observed state: snapshots, regions and records.
 *
 * A {@linkcode Snapshot} is what verity saw in one state directory: every
 * adapter's surface turned into typed records, grouped into regions (a
 * sqlite table, an fs subtree, a json/jsonl region) and sorted by key with
 * {@linkcode compareKeys} from `keys.ts`.
 *
 * @module
 */

/** How a region is classified by the definition. */
export type Category = "business" | "append_only" | "unclassified";

/**
 * One record: its identity and its typed fields.
 *
 * `value` is JSON-serialisable: bytes are `{"$bytes": base64}`, integers
 * beyond 2^53 are `{"$int": "123"}`, non-finite reals `{"$real": "Infinity"}`.
 */
export interface StateRecord {
  /** Canonical JSON of the identity: always a JSON array, e.g. `[1]` or `["entity","Alice"]`. */
  key: string;
  /** Typed fields. */
  value: Record<string, unknown>;
}

/** The records of one table, subtree or json region. */
export interface Region {
  /** Label of the adapter that observed it (path relative to the state dir). */
  adapter: string;
  kind: "sqlite" | "fs" | "json" | "postgres";
  /** Table name, fs path, or json region name. */
  name: string;
  category: Category;
  /** Sorted by key (`compareKeys`). */
  records: StateRecord[];
  /** sqlite, postgres: the table's columns in declaration order (present even when it has no rows). */
  columns?: string[];
}

/** Everything observed in one state directory. */
export interface Snapshot {
  /** Sorted by adapter, kind, name. */
  regions: Region[];
  /** Things that could not be observed cleanly (unreadable file, invalid JSON, bad WAL frames). */
  problems: string[];
}

/** The region id used in deltas and evidence: `"<adapter>:<name>"`. */
export function regionId(r: Pick<Region, "adapter" | "name">): string {
  return `${r.adapter}:${r.name}`;
}

/** A region's identity with its kind, for maps over regions. */
export function regionKey(
  r: Pick<Region, "adapter" | "kind" | "name">,
): string {
  return `${r.adapter}\u0000${r.kind}\u0000${r.name}`;
}

/** Sort order of regions inside a snapshot. */
export function compareRegions(a: Region, b: Region): number {
  return cmp(a.adapter, b.adapter) || cmp(a.kind, b.kind) ||
    cmp(a.name, b.name);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
