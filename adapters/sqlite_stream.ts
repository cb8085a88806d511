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
  valueAt,
  walkTrees,
} from "./sqlite_diff.ts";
import type { TablePlan } from "./_sqlite_table.ts";
import { maskRow } from "../lib/state/normalize.ts";
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
  const d = new RowDecoder(t.plan, masks);
  while (c.next()) {
    yield { key: "[" + c.rowid + "]", value: d.decode(c.payload(), c.rowid) };
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
  const d = new RowDecoder(t.plan, masks, t.key!.colField);
  while (c.next()) {
    const key = c.keyString();
    yield { key, value: d.decode(c.payload(), 0) };
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
  const d = new RowDecoder(plan, masks);
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
    yield { key, value: d.decode(p, c.rowid) };
  }
}

/**
 * Decodes rows of one table as `rowValue` of sqlite_diff.ts does (the same
 * values, masks applied), reusing its header arrays and the view of the
 * page memory the payloads lie in: a stream decodes millions of rows.
 */
class RowDecoder {
  #plan: TablePlan;
  #masks: readonly MaskRule[] | undefined;
  #colField: Int32Array | null;
  #n: number;
  #types: Int32Array;
  #offs: Int32Array;
  #rec: unknown[];
  #fields: unknown[];
  #buffer: ArrayBufferLike | null = null;
  #whole: Uint8Array = new Uint8Array();
  #view: DataView = new DataView(new ArrayBuffer(0));

  constructor(
    plan: TablePlan,
    masks: readonly MaskRule[] | undefined,
    colField: Int32Array | null = null,
  ) {
    this.#plan = plan;
    this.#masks = masks;
    this.#colField = colField;
    this.#n = plan.columns.length;
    this.#types = new Int32Array(this.#n + 1);
    this.#offs = new Int32Array(this.#n + 1);
    this.#rec = new Array(this.#n);
    this.#fields = new Array(this.#n);
  }

  decode(p: Uint8Array, rowid: number): Record<string, unknown> {
    if (p.buffer !== this.#buffer) {
      this.#buffer = p.buffer;
      this.#whole = new Uint8Array(p.buffer);
      this.#view = new DataView(p.buffer);
    }
    const plan = this.#plan;
    const n = this.#n;
    const types = this.#types;
    const offs = this.#offs;
    const whole = this.#whole;
    const view = this.#view;
    const count = parseHeader(whole, p.byteOffset, p.length, n, types, offs);
    if (count < 0) throw new PageWalkError("record needs SQL");
    const fields = this.#fields;
    const cf = this.#colField;
    if (cf !== null) {
      // Record order (key columns first) to declaration order.
      for (let i = 0; i < n; i++) {
        const f = cf[i]!;
        if (f < count) fields[i] = valueAt(whole, view, types[f]!, offs[f]!);
        else if (plan.hasDefault[i]) {
          throw new PageWalkError("short record with default");
        } else fields[i] = null;
      }
    } else {
      for (let i = 0; i < count; i++) {
        fields[i] = valueAt(whole, view, types[i]!, offs[i]!);
      }
      for (let i = count; i < n; i++) {
        if (plan.hasDefault[i]) {
          throw new PageWalkError("short record with default");
        }
        fields[i] = null;
      }
    }
    if (plan.aliasIdx !== -1) {
      if (fields[plan.aliasIdx] !== null) {
        throw new PageWalkError("stored INTEGER PRIMARY KEY value");
      }
      fields[plan.aliasIdx] = rowid;
    }
    const value = plan.make(fields);
    return this.#masks ? maskRow(value, this.#masks) : value;
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
