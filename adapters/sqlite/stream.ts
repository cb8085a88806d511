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
 * - A rowid table identified by another primary key whose primary-key index
 *   lists the key columns BINARY ascending (`TEXT PRIMARY KEY`, composite
 *   keys) is streamed in that index's order, each row looked up by rowid.
 * - Any other table (`INTEGER PRIMARY KEY DESC`, a primary key with a
 *   NOCASE, RTRIM or DESC column, rowid or `WITHOUT ROWID`) is
 *   stored in an order that is not the snapshot's: its records are read
 *   (page by page) and sorted by key, that table alone held in memory.
 *
 * Anything the page reader does not handle throws
 * {@linkcode PageWalkError} (the caller then reads the database whole, as a
 * snapshot does).
 *
 * @module
 */
import { compareValues } from "../../lib/state/keys.ts";
import type { StateRecord } from "../../lib/state/types.ts";
import type { MaskRule } from "../../lib/definition/types.ts";
import {
  type DiffSide,
  LeafCursor,
  leafOverflows,
  walkTrees,
} from "./btree.ts";
import {
  assemble,
  type Geometry,
  geometry,
  hdrOf,
  localSize,
  type PageSource,
  RecordHeader,
  u16,
  u32,
  valueAt,
  VarintReader,
} from "./format.ts";
import { KeyCursor, KeyWriter } from "./keyed.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { type PlannedTable, RowDecoder } from "./plan.ts";

/** How a table's records are streamed. */
export type StreamOrder =
  /** Plain rowid table: leaves in rowid order. */
  | "rowid"
  /**
   * Rowid table identified by another primary key whose index lists the
   * key BINARY ascending: that index in order, each row looked up by rowid.
   */
  | "pk-index"
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
  /** All of them at once (a rowid table: faster, from the cache when given). */
  all?(): StateRecord[];
}

/**
 * The observed tables of one database (`side` from `readSchema` and
 * `planSchema`), in the snapshot reader's order, each streamable. The
 * trees are walked now (throws PageWalkError on a malformed tree).
 */
export function streamTables(
  side: DiffSide,
  masks: ReadonlyMap<string, readonly MaskRule[]>,
  cache: PageCache | null = null,
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
    const ix = t.keyCols !== null && t.pkIndex
      ? side.schema.find((r) => r.type === "index" && r.name === t.pkIndex)
      : undefined;
    if (ix !== undefined && ix.rootpage > 0) {
      return {
        ...base,
        order: "pk-index",
        records: () => pkIndexRecords(side.src, g, leaves, ix.rootpage, t, m),
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
      all: () => {
        const out: StateRecord[] = [];
        rowidLeaves(side.src, g, leaves, t, m, cache, out);
        return out;
      },
    };
  });
}

/**
 * The records of a plain rowid table's leaves `leaves`, in rowid order
 * (each above `after`), appended to `out`; leaves seen before taken from
 * `cache` (none with masks). Returns the last rowid.
 */
function rowidLeaves(
  src: PageSource,
  g: Geometry,
  leaves: number[],
  t: PlannedTable,
  masks: readonly MaskRule[] | undefined,
  cache: PageCache | null,
  out: StateRecord[],
  after = -Infinity,
): number {
  const d = new RowDecoder(t.plan, masks);
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
  if (cache === null || masks !== undefined) {
    decode(leaves);
    return after;
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
  return after;
}

/** {@linkcode rowidLeaves} a leaf at a time (memory: one leaf's records). */
function* rowidRecords(
  side: DiffSide,
  g: Geometry,
  leaves: number[],
  t: PlannedTable,
  masks: readonly MaskRule[] | undefined,
): Generator<StateRecord> {
  let after = -Infinity;
  for (const pgno of leaves) {
    const part: StateRecord[] = [];
    after = rowidLeaves(side.src, g, [pgno], t, masks, null, part, after);
    yield* part;
  }
}

/**
 * Decoded leaves of rowid tables kept between snapshots: a leaf with the
 * same bytes, of a table with the same CREATE statement, has the same
 * records (shared, never modified: snapshots are immutable values). Kept
 * for the `keep` snapshots after the one that last saw them.
 */
export class PageCache {
  #entries = new Map<
    string,
    { page: Int32Array; records: StateRecord[]; seen: number }
  >();
  #generation = 0;
  /** Snapshots a leaf is kept without being seen. @default 2 */
  readonly keep: number;
  constructor(keep = 2) {
    this.keep = keep;
  }
  /** A leaf's records, when its bytes were seen under this signature. */
  get(sig: string, page: Uint8Array): StateRecord[] | undefined {
    const w = words(page);
    const e = this.#entries.get(sig + "\0" + pageHash(w));
    if (e === undefined || e.page.length !== w.length) return undefined;
    for (let i = 0; i < w.length; i++) if (e.page[i] !== w[i]) return undefined;
    e.seen = this.#generation;
    return e.records;
  }
  set(sig: string, page: Uint8Array, records: StateRecord[]): void {
    const w = words(page);
    this.#entries.set(sig + "\0" + pageHash(w), {
      page: w.slice(),
      records,
      seen: this.#generation,
    });
  }
  /** The end of a snapshot: forget leaves not seen in the last `keep`. */
  nextGeneration(): void {
    this.#generation++;
    for (const [k, e] of this.#entries) {
      if (e.seen < this.#generation - this.keep) this.#entries.delete(k);
    }
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
  const h = new RecordHeader(plan.columns.length);
  const { types, offs } = h;
  const keys = new KeyWriter();
  const c = new LeafCursor(side.src, g, leaves, () => false);
  const d = new RowDecoder(plan, masks);
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

/**
 * The records of a rowid table identified by another primary key, in key
 * order: its primary-key index (key columns BINARY ascending, then the
 * rowid) walked in order, each key checked to be above the previous one
 * (`compareValues`, the snapshot's order), each row looked up by rowid in
 * the table's b-tree and checked to hold that key; the index must list as
 * many rows as the table holds (so every row comes exactly once).
 */
function* pkIndexRecords(
  src: PageSource,
  g: Geometry,
  leaves: number[],
  ixRoot: number,
  t: PlannedTable,
  masks: readonly MaskRule[] | undefined,
): Generator<StateRecord> {
  const plan = t.plan;
  const nKey = plan.keyIdx.length;
  // Rows in the table: the cell counts of its leaves.
  let rows = 0;
  for (const pgno of leaves) {
    const page = src.page(pgno);
    if (page[hdrOf(pgno)] !== 0x0d) {
      throw new PageWalkError(`page ${pgno} is not a table leaf`);
    }
    rows += u16(page, hdrOf(pgno) + 3);
  }
  const ih = new RecordHeader(nKey + 1);
  const { types: it, offs: io } = ih;
  const rh = new RecordHeader(plan.columns.length);
  const { types: rt, offs: ro } = rh;
  const v = new VarintReader();
  const keys = new KeyWriter();
  const d = new RowDecoder(plan, masks);
  let prev: unknown[] | null = null;
  let seen = 0;
  const emit = (buf: Uint8Array, at: number, size: number): StateRecord => {
    const count = ih.parse(buf, at, size);
    const rt0 = it[nKey]!;
    if (
      count !== nKey + 1 || !((rt0 >= 1 && rt0 <= 6) || rt0 === 8 || rt0 === 9)
    ) {
      throw new PageWalkError("unexpected index record");
    }
    for (let i = 0; i < nKey; i++) {
      if (it[i] === 0) {
        throw new PageWalkError(`table ${plan.name}: a NULL primary key`);
      }
    }
    const key = keys.write(buf, it, io, nKey, null);
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const vals: unknown[] = new Array(nKey);
    for (let i = 0; i < nKey; i++) vals[i] = valueAt(buf, view, it[i]!, io[i]!);
    if (prev !== null && compareValues(prev, vals) >= 0) {
      throw new PageWalkError(`table ${plan.name}: index keys not in order`);
    }
    prev = vals;
    const rowid = valueAt(buf, view, rt0, io[nKey]!);
    if (typeof rowid !== "number") {
      throw new PageWalkError("rowid beyond 2^53");
    }
    const p = rowPayload(src, g, t.rootpage, rowid, v);
    if (rh.parse(p, 0, p.length) < 0) {
      throw new PageWalkError("record needs SQL");
    }
    if (keys.write(p, rt, ro, nKey, plan.keyIdx) !== key) {
      throw new PageWalkError(
        `table ${plan.name}: a row does not hold its index key`,
      );
    }
    seen++;
    return { key, value: d.decode(p, rowid) };
  };
  // In order: a leaf's cells; an interior page's children with its cells
  // between them. Pages are copied (reading others may reuse their memory).
  function* visit(pgno: number, depth: number): Generator<StateRecord> {
    if (depth > 64 || pgno < 1 || pgno > src.pageCount) {
      throw new PageWalkError(`bad page ${pgno}`);
    }
    const page = src.page(pgno).slice();
    const h = hdrOf(pgno);
    const type = page[h];
    const cells = u16(page, h + 3);
    if (type !== 0x0a && type !== 0x02) {
      throw new PageWalkError(`page ${pgno} is not an index page`);
    }
    const leaf = type === 0x0a;
    for (let c = 0; c < cells; c++) {
      let p = u16(page, h + (leaf ? 8 : 12) + 2 * c);
      if (!leaf) {
        yield* visit(u32(page, p), depth + 1);
        p += 4;
      }
      const size = v.read(page, p);
      p = v.end;
      const local = localSize(g, size, g.maxLocalIndex);
      if (p + local > page.length) {
        throw new PageWalkError("cell past the page end");
      }
      if (local < size) {
        yield emit(assemble(src, g, page, p, size, local), 0, size);
      } else yield emit(page, p, size);
    }
    if (!leaf) yield* visit(u32(page, h + 8), depth + 1);
  }
  yield* visit(ixRoot, 0);
  if (seen !== rows) {
    throw new PageWalkError(
      `table ${plan.name}: its index lists ${seen} rows, the table ${rows}`,
    );
  }
}

/** The payload of the row `rowid` of the table b-tree at `root` (a copy when it overflows). */
function rowPayload(
  src: PageSource,
  g: Geometry,
  root: number,
  rowid: number,
  v: VarintReader,
): Uint8Array {
  let pgno = root;
  for (let depth = 0; depth <= 64; depth++) {
    const page = src.page(pgno);
    const h = hdrOf(pgno);
    const type = page[h];
    const cells = u16(page, h + 3);
    if (type === 0x05) {
      // The first cell whose key is at least the rowid leads to it.
      let lo = 0, hi = cells;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const at = u16(page, h + 12 + 2 * mid) + 4;
        if (v.read(page, at) < rowid) lo = mid + 1;
        else hi = mid;
      }
      pgno = lo < cells
        ? u32(page, u16(page, h + 12 + 2 * lo))
        : u32(page, h + 8);
      continue;
    }
    if (type !== 0x0d) {
      throw new PageWalkError(`page ${pgno} is not a table page`);
    }
    let lo = 0, hi = cells - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      let p = u16(page, h + 8 + 2 * mid);
      const size = v.read(page, p);
      const r = v.read(page, v.end);
      p = v.end;
      if (r === rowid) {
        const local = localSize(g, size);
        if (p + local > page.length) {
          throw new PageWalkError("cell past the page end");
        }
        return local < size
          ? assemble(src, g, page, p, size, local)
          : page.subarray(p, p + size);
      }
      if (r < rowid) lo = mid + 1;
      else hi = mid - 1;
    }
    throw new PageWalkError(`rowid ${rowid} not in the table`);
  }
  throw new PageWalkError("table b-tree too deep");
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
