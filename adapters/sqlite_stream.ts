/**
 * One database's tables as streams of records in key order, read page by
 * page (never the whole image, never all rows at once): what a snapshot of
 * the database holds, table by table, masks applied, for hashing a seed
 * without building its snapshot. Pure over a {@linkcode PageSource}.
 *
 * - A plain rowid table (an `INTEGER PRIMARY KEY` alias, or no primary
 *   key) is streamed leaf by leaf in rowid order, which is its key order
 *   (`[rowid]`).
 * - A `WITHOUT ROWID` table whose key columns are all BINARY and ascending
 *   is streamed in the order of its index b-tree (leaves and interior
 *   cells), which is SQLite's BINARY order of the key values, the order
 *   `compareKeys` defines; each record is checked to be above the previous
 *   one as it is read.
 * - Any other table (a rowid table identified by another primary key:
 *   `TEXT PRIMARY KEY`, composite keys, `INTEGER PRIMARY KEY DESC`; a
 *   `WITHOUT ROWID` table with a NOCASE, RTRIM or DESC key column) is
 *   stored in an order that is not the snapshot's: its records are read
 *   (page by page) and sorted by key, that table alone held in memory.
 *
 * Anything the page reader does not handle throws
 * {@linkcode PageWalkError} (the caller then reads the database whole, as a
 * snapshot does).
 *
 * @module
 */
import { compareValues } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import type { MaskRule } from "../lib/definition/types.ts";
import {
  type DiffSide,
  type Geometry,
  geometry,
  KeyCursor,
  keyStringOf,
  LeafCursor,
  parseHeader,
  type PlannedTable,
  rowValue,
  walkTrees,
} from "./sqlite_diff.ts";
import { PageWalkError } from "./_sqlite_table.ts";

/** How a table's records are streamed. */
export type StreamOrder =
  /** Plain rowid table: leaves in rowid order. */
  | "rowid"
  /** `WITHOUT ROWID`, every key column BINARY ascending: index order. */
  | "index"
  /** Stored in another order: read whole, sorted by key (the table alone in memory). */
  | "sorted";

/** One table of a database, ready to be streamed. */
export interface StreamTable {
  name: string;
  columns: string[];
  order: StreamOrder;
  /** Why `sorted`; undefined otherwise. */
  why?: string;
  /** The table's records in key order (masked). May be called more than once. */
  records(): Iterable<StateRecord>;
}

/**
 * The observed tables of one database (`side` from `readSchema` and
 * `planSchema`), in the snapshot reader's order, each streamable. The
 * trees are walked now (throws PageWalkError on a malformed tree).
 */
export function streamTables(
  side: DiffSide,
  masks: ReadonlyMap<string, readonly MaskRule[]>,
): StreamTable[] {
  const g = geometry(side.src);
  const { index } = walkTrees(side);
  return side.tables.map((t): StreamTable => {
    const leaves = index.leaves.get(t.name)!;
    const m = masks.get(t.name);
    const base = { name: t.name, columns: t.plan.columns };
    if (t.key !== null) {
      if (t.key.binaryAsc) {
        return {
          ...base,
          order: "index",
          records: () => indexRecords(side, g, leaves, t, m),
        };
      }
      return {
        ...base,
        order: "sorted",
        why: "WITHOUT ROWID key with a NOCASE, RTRIM or DESC column",
        records: () => sortRecords(indexRecords(side, g, leaves, t, m)),
      };
    }
    if (t.keyCols !== null) {
      return {
        ...base,
        order: "sorted",
        why: "rowid table identified by another primary key",
        records: () => sortRecords(keyedRowidRecords(side, g, leaves, t, m)),
      };
    }
    return {
      ...base,
      order: "rowid",
      records: () => rowidRecords(side, g, leaves, t, m),
    };
  });
}

function* rowidRecords(
  side: DiffSide,
  g: Geometry,
  leaves: number[],
  t: PlannedTable,
  masks: readonly MaskRule[] | undefined,
): Generator<StateRecord> {
  const c = new LeafCursor(side.src, g, leaves, () => false);
  while (c.next()) {
    yield {
      key: "[" + c.rowid + "]",
      value: rowValue(c.payload(), c.rowid, t.plan, masks),
    };
  }
}

function* indexRecords(
  side: DiffSide,
  g: Geometry,
  units: number[],
  t: PlannedTable,
  masks: readonly MaskRule[] | undefined,
): Generator<StateRecord> {
  const c = new KeyCursor(side.src, g, units, () => false, { t });
  const colField = t.key!.colField;
  while (c.next()) {
    const key = c.keyString();
    yield { key, value: rowValue(c.payload(), 0, t.plan, masks, colField) };
  }
}

function* keyedRowidRecords(
  side: DiffSide,
  g: Geometry,
  leaves: number[],
  t: PlannedTable,
  masks: readonly MaskRule[] | undefined,
): Generator<StateRecord> {
  const plan = t.plan;
  const n = plan.columns.length;
  const types = new Int32Array(n + 1);
  const offs = new Int32Array(n + 1);
  const c = new LeafCursor(side.src, g, leaves, () => false);
  while (c.next()) {
    const p = c.payload();
    const count = parseHeader(p, 0, p.length, n, types, offs);
    if (count < 0) throw new PageWalkError("record needs SQL");
    for (const k of plan.keyIdx) {
      // Several NULL keys: the snapshot numbers them in SQL's order.
      if (k >= count || types[k] === 0) {
        throw new PageWalkError(`table ${plan.name}: a NULL primary key`);
      }
    }
    const key = keyStringOf(p, types, offs, plan.keyIdx.length, plan.keyIdx);
    yield { key, value: rowValue(p, c.rowid, plan, masks) };
  }
}

/** Records sorted by key (compareKeys order); two records with one key throw. */
function sortRecords(it: Iterable<StateRecord>): StateRecord[] {
  const d: { r: StateRecord; k: unknown }[] = [];
  for (const r of it) d.push({ r, k: JSON.parse(r.key) });
  d.sort((p, q) => compareValues(p.k, q.k));
  for (let i = 1; i < d.length; i++) {
    if (d[i]!.r.key === d[i - 1]!.r.key) {
      throw new PageWalkError("two rows with one key");
    }
  }
  return d.map((p) => p.r);
}
