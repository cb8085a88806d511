/**
 * A session's changeset: every path its server changed outside the declared
 * state, as the overlay's upper layer showed it (`lib/state_io/changeset.ts`
 * reads it), each with its content before (the host's, below the overlay)
 * and after, decoded by what it is. Turned into the same typed deltas the
 * declared adapters give, so every check judges it. Pure.
 *
 * A path becomes regions named after it (`<path>:<name>`): `.` holds one
 * record of what the path is (type, mode; size and digest when its content
 * is kept as bytes), and a decoded file adds its content: one region per
 * SQLite table, `$` for a JSON or JSONL document. Every region is business
 * state.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type CategoryDelta, computeDelta, type Delta } from "./delta.ts";
import { canonicalStateJson } from "./keys.ts";
import {
  compareRegions,
  type Region,
  type Snapshot,
  type StateRecord,
} from "./types.ts";

/** One file system object, as a changeset keeps it. */
export interface FileView {
  type: "file" | "dir" | "symlink" | "other";
  /** Permission bits (`mode & 0o7777`). */
  mode: number;
  /** A regular file's size in bytes. */
  size?: number;
  /** A regular file kept as bytes: `sha256:<hex>`, null when it was larger than the read budget. */
  digest?: string | null;
  /** A symbolic link's target. */
  target?: string;
  /** What a regular file was decoded as; absent: bytes. */
  format?: "sqlite" | "json" | "jsonl";
  /** The decoded content: SQLite tables, or the document (`$`). */
  regions?: { name: string; records: StateRecord[]; columns?: string[] }[];
}

/** One changed path: what it was (null: absent) and what it became (null: deleted). */
export interface PathChange {
  /** Absolute, as the server saw it. */
  path: string;
  before: FileView | null;
  after: FileView | null;
}

/** Everything one session changed outside its state directory. */
export interface Changeset {
  /** Sorted by path. */
  changes: PathChange[];
  /**
   * Something was not read whole (a budget, an unreadable entry): the
   * changeset may miss changes, so no verdict that needs it can pass.
   */
  lossy: boolean;
  /** What was not read, and why. */
  problems: string[];
}

/** A changeset's digest: `sha256:` over its canonical JSON (what `report verify` checks). */
export function changesetDigest(c: Changeset): string {
  return `sha256:${
    createHash("sha256").update(canonicalStateJson(c)).digest("hex")
  }`;
}

/** The paths a set of changesets touch (the control sessions': start-up and shutdown writes). */
export function changedPaths(
  changesets: readonly (Changeset | null | undefined)[],
): Set<string> {
  const out = new Set<string>();
  for (const c of changesets) for (const p of c?.changes ?? []) out.add(p.path);
  return out;
}

/** The record of what a path is (its `.` region). */
function describe(v: FileView): Record<string, unknown> {
  const out: Record<string, unknown> = { type: v.type, mode: v.mode };
  if (v.format !== undefined) out.format = v.format;
  else if (v.type === "file") {
    out.size = v.size ?? null;
    out.digest = v.digest ?? null;
  }
  if (v.target !== undefined) out.target = v.target;
  return out;
}

function regionsOf(path: string, v: FileView | null): Region[] {
  const meta: Region = {
    adapter: path,
    kind: "fs",
    name: ".",
    category: "business",
    records: v === null ? [] : [{ key: "[]", value: describe(v) }],
  };
  return [
    meta,
    ...(v?.regions ?? []).map((r): Region => ({
      adapter: path,
      kind: v?.format === "sqlite" ? "sqlite" : "json",
      name: r.name,
      category: "business",
      records: r.records,
      ...(r.columns ? { columns: r.columns } : {}),
    })),
  ];
}

/**
 * What differs between the states two sessions left outside their state
 * directories, given their changesets (null: nothing changed). A path only
 * one of them changed is, on the other side, what it was before (the same
 * host file below every session's overlay). Paths in `exclude` (those the
 * control sessions change too) are left out. Regions are business state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const was = { type: "file" as const, mode: 0o644, format: "json" as const,
 *   regions: [{ name: "$", records: [{ key: '["a"]', value: { id: "a" } }] }] };
 * const emptied = { ...was, regions: [{ name: "$", records: [] }] };
 * const once = { changes: [{ path: "/srv/notes.json", before: was, after: emptied }], lossy: false, problems: [] };
 * const d = changesetDelta(null, once, new Set());
 * assert.deepEqual(d.business.removed, [{ region: "/srv/notes.json:$", key: '["a"]' }]);
 * assert.equal(d.business.lossy, true);
 * assert.equal(changesetDelta(null, once, new Set(["/srv/notes.json"])).empty, true);
 * ```
 */
export function changesetDelta(
  a: Changeset | null,
  b: Changeset | null,
  exclude: ReadonlySet<string>,
): Delta {
  const byPath = (c: Changeset | null) =>
    new Map((c?.changes ?? []).map((p) => [p.path, p]));
  const inA = byPath(a);
  const inB = byPath(b);
  const sideA: Region[] = [];
  const sideB: Region[] = [];
  for (const path of new Set([...inA.keys(), ...inB.keys()])) {
    if (exclude.has(path)) continue;
    const ca = inA.get(path);
    const cb = inB.get(path);
    sideA.push(...regionsOf(path, ca ? ca.after : cb!.before));
    sideB.push(...regionsOf(path, cb ? cb.after : ca!.before));
  }
  const snap = (regions: Region[]): Snapshot => ({
    regions: regions.sort(compareRegions),
    problems: [],
  });
  return computeDelta(snap(sideA), snap(sideB));
}

/** Two deltas over different regions as one (the declared state's and a changeset's). */
export function mergeDelta(a: Delta, b: Delta): Delta {
  const cat = (x: CategoryDelta, y: CategoryDelta): CategoryDelta => ({
    added: [...x.added, ...y.added],
    removed: [...x.removed, ...y.removed],
    changed: [...x.changed, ...y.changed],
    structure: [...x.structure, ...y.structure],
    lossy: x.lossy || y.lossy,
    empty: x.empty && y.empty,
  });
  return {
    business: cat(a.business, b.business),
    append_only: cat(a.append_only, b.append_only),
    unclassified: cat(a.unclassified, b.unclassified),
    empty: a.empty && b.empty,
  };
}
