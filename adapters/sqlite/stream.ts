/**
 * One database's tables as records in key order, read page by page (the
 * page reader behind the sqlite snapshot, `read.ts`). Pure over a
 * {@linkcode PageSource}.
 *
 * - A plain rowid table (an `INTEGER PRIMARY KEY` alias, or no primary
 *   key) is read leaf by leaf in rowid order, which is its key order
 *   (`[rowid]`); leaves seen before come from a {@linkcode PageCache}.
 * - A `WITHOUT ROWID` table whose key columns are all BINARY and ascending
 *   is read in the order of its index b-tree, which is SQLite's BINARY
 *   order of the key values, the order `compareKeys` defines; each record
 *   is checked to be above the previous one as it is read.
 * - Any other table (a rowid table identified by another primary key,
 *   `INTEGER PRIMARY KEY DESC`, a key with a NOCASE, RTRIM or DESC column)
 *   is stored in an order that is not the snapshot's: its records are read
 *   and sorted by key.
 *
 * Anything the page reader does not handle throws
 * {@linkcode PageWalkError} (the caller then reads the table by SQL).
 *
 * @module
 */
import { compareValues } from "../../lib/state/keys.ts";
import type { StateRecord } from "../../lib/state/types.ts";
import {
  type DiffSide,
  LeafCursor,
  leafOverflows,
  walkTrees,
} from "./btree.ts";
import {
  type Geometry,
  geometry,
  type PageSource,
  RecordHeader,
} from "./format.ts";
import { KeyCursor, KeyWriter } from "./keyed.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { type PlannedTable, RowDecoder } from "./plan.ts";

/** One table of a database, ready to be read. */
export interface StreamTable {
  name: string;
  /** The table's records in key order (throws PageWalkError for what the pages do not decode). */
  records(): StateRecord[];
}

/**
 * The observed tables of one database (`side` from `readSchema` and
 * `planSchema`), in the snapshot reader's order. The trees are walked now
 * (throws PageWalkError on a malformed tree).
 */
export function streamTables(
  side: DiffSide,
  cache: PageCache | null = null,
): StreamTable[] {
  const g = geometry(side.src);
  const { index } = walkTrees(side);
  return side.tables.map((t): StreamTable => {
    const leaves = index.leaves.get(t.name)!;
    const records = (): StateRecord[] => {
      if (t.key !== null) {
        const it = indexRecords(side, g, leaves, t);
        return t.key.binaryAsc ? [...it] : sortRecords(it);
      }
      if (t.keyCols !== null) {
        return sortRecords(keyedRowidRecords(side, g, leaves, t));
      }
      const out: StateRecord[] = [];
      rowidLeaves(side.src, g, leaves, t, cache, out);
      return out;
    };
    return { name: t.name, records };
  });
}

/**
 * The records of a plain rowid table's leaves `leaves`, in rowid order
 * appended to `out`; leaves seen before taken from `cache`.
 */
function rowidLeaves(
  src: PageSource,
  g: Geometry,
  leaves: number[],
  t: PlannedTable,
  cache: PageCache | null,
  out: StateRecord[],
): void {
  let after = -Infinity;
  const d = new RowDecoder(t.plan, undefined);
  const decode = (pgnos: number[]) => {
    const c = new LeafCursor(src, g, pgnos, () => false, after);
    while (c.next()) {
      out.push({
        key: "[" + c.rowid + "]",
        value: c.local === c.size
          ? d.decodeAt(c.page, c.at, c.size, c.rowid, c.pageLoads)
          : d.decode(c.payload(), c.rowid),
      });
      after = c.rowid;
    }
  };
  if (cache === null) {
    decode(leaves);
    return;
  }
  const sig = t.plan.sql;
  for (const pgno of leaves) {
    const records = cache.get(sig, src.page(pgno));
    if (records === undefined) {
      const from = out.length;
      decode([pgno]);
      // A leaf with a cell on overflow pages is more than its bytes.
      if (!leafOverflows(src.page(pgno), pgno, g)) {
        cache.set(sig, src.page(pgno), out.slice(from));
      }
      continue;
    }
    if (records.length === 0) continue;
    if (Number(records[0]!.key.slice(1, -1)) <= after) {
      throw new PageWalkError("rowids not in order or beyond 2^53");
    }
    for (const r of records) out.push(r);
    after = Number(records[records.length - 1]!.key.slice(1, -1));
  }
}

/**
 * Decoded leaves of rowid tables shared by the snapshots read with one
 * cache (a pair compared whole): a leaf with the same bytes, of a table
 * with the same CREATE statement, has the same records (shared, never
 * modified: snapshots are immutable values).
 */
export class PageCache {
  #entries = new Map<string, { page: Int32Array; records: StateRecord[] }>();
  /** A leaf's records, when its bytes were seen under this signature. */
  get(sig: string, page: Uint8Array): StateRecord[] | undefined {
    const w = words(page);
    const e = this.#entries.get(sig + "\0" + pageHash(w));
    if (e === undefined || e.page.length !== w.length) return undefined;
    for (let i = 0; i < w.length; i++) if (e.page[i] !== w[i]) return undefined;
    return e.records;
  }
  set(sig: string, page: Uint8Array, records: StateRecord[]): void {
    const w = words(page);
    this.#entries.set(sig + "\0" + pageHash(w), { page: w.slice(), records });
  }
}

/** A page's bytes as 32-bit words (pages are at least 512 bytes, a power of two). */
function words(page: Uint8Array): Int32Array {
  return page.byteOffset % 4 === 0
    ? new Int32Array(page.buffer, page.byteOffset, page.length >> 2)
    : new Int32Array(page.slice().buffer);
}

function pageHash(page: Int32Array): number {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x27d4eb2f | 0;
  for (let i = 0; i < page.length; i++) {
    const w = page[i]!;
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h2 = Math.imul(h2 + w, 0x5bd1e995) ^ (h2 >>> 13);
  }
  return (h1 >>> 0) * 0x200000 + (h2 >>> 11);
}

function* indexRecords(
  side: DiffSide,
  g: Geometry,
  units: number[],
  t: PlannedTable,
): Generator<StateRecord> {
  const c = new KeyCursor(side.src, g, units, () => false, { t });
  const d = new RowDecoder(t.plan, undefined, t.key!.colField);
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
): Generator<StateRecord> {
  const plan = t.plan;
  const h = new RecordHeader(plan.columns.length);
  const { types, offs } = h;
  const keys = new KeyWriter();
  const c = new LeafCursor(side.src, g, leaves, () => false);
  const d = new RowDecoder(plan, undefined);
  while (c.next()) {
    const p = c.payload();
    const count = h.parse(p, 0, p.length);
    if (count < 0) throw new PageWalkError("record needs SQL");
    for (const k of plan.keyIdx) {
      // Several NULL keys: the snapshot numbers them in SQL's order.
      if (k >= count || types[k] === 0) {
        throw new PageWalkError(`table ${plan.name}: a NULL primary key`);
      }
    }
    const key = keys.write(p, types, offs, plan.keyIdx.length, plan.keyIdx);
    yield { key, value: d.decode(p, c.rowid) };
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
