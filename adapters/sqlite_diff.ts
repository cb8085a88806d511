/**
 * Compare two SQLite databases page by page and row by row, without
 * building either snapshot: the sqlite half of a state delta in bounded
 * memory. Pure over two {@linkcode PageSource}s (random access to pages).
 *
 * For every table read in rowid order (an `INTEGER PRIMARY KEY`, or no
 * primary key), both b-trees are walked through their interior pages only,
 * giving each table's leaf pages in key order. A leaf page that is a leaf
 * of the same table on both sides, at the same page number, with the same
 * bytes (the caller says which pages differ) holds the same rows on both
 * sides: it is skipped without being decoded. The remaining leaves are
 * streamed in rowid order on both sides and merge-compared: rows with the
 * same rowid and the same record bytes are equal without decoding; only
 * rows that differ are decoded (with the same record decoder as the
 * snapshot reader) and compared field by field after masking. Memory holds
 * the pages being read, the list of leaf page numbers and the differences
 * (the evidence), never all rows.
 *
 * A `WITHOUT ROWID` table is an index b-tree keyed by its primary key,
 * whose interior cells hold rows too: its leaves and interior cells are
 * listed in key order, those on pages identical on both sides skipped,
 * and the rest merge-compared in the key's order (collations BINARY,
 * NOCASE and RTRIM; ascending or descending), each side checked to be in
 * that order as it is read. Records at the same place are the same row
 * when their keys are the same values (the snapshot's identity), else one
 * row was removed and another added (NOCASE `'a'` and `'A'`).
 *
 * A rowid table identified by another primary key (`TEXT PRIMARY KEY`,
 * composite keys) is merged by rowid as above; rows whose rowid or key
 * changed are kept by key (the changed rows only) and matched at the end.
 *
 * Anything this reader does not handle (generated columns, a short record
 * whose missing column has a default, NULL primary keys, a non-UTF-8
 * database, a malformed tree, keys out of the order computed here) throws
 * {@linkcode PageWalkError} with the reason; the caller then compares full
 * snapshots (docs/state.md lists every reason).
 *
 * @module
 */
import { bytesToBase64 } from "../lib/state/keys.ts";
import {
  diffFields,
  emptyRegionDiff,
  type RecordChange,
  type RecordFieldChange,
  type RegionDiff,
  structureChange,
} from "../lib/state/delta.ts";
import {
  compareText as compareStrings,
  compareValues,
  valuesEqual,
} from "../lib/state/keys.ts";
import { maskRow } from "../lib/state/normalize.ts";
import type { Category, StateRecord } from "../lib/state/types.ts";
import type { MaskRule } from "../lib/definition/types.ts";
import type { SqlEngine } from "./sql_engine.ts";
import { PageWalkError, planTable, type TablePlan } from "./_sqlite_table.ts";

/** Random access to the pages of one database (WAL already applied). */
export interface PageSource {
  readonly pageSize: number;
  /** Pages in the database. */
  readonly pageCount: number;
  /**
   * Page `pgno` (1-based), `pageSize` bytes. A source may reuse memory:
   * the bytes stay valid for at least the next 64 reads of other pages of
   * the same source (a reader holds one leaf at a time, and reads it
   * again after following an overflow chain).
   */
  page(pgno: number): Uint8Array;
}

/** A page source over a database image in memory. */
export function imagePageSource(image: Uint8Array): PageSource {
  const pageSize = image.length >= 100
    ? (((image[16]! << 8) | image[17]!) === 1
      ? 65536
      : (image[16]! << 8) | image[17]!)
    : 4096;
  if (pageSize < 512 || image.length % pageSize !== 0) {
    throw new PageWalkError("unexpected image size");
  }
  return {
    pageSize,
    pageCount: image.length / pageSize,
    page(pgno: number): Uint8Array {
      if (pgno < 1 || pgno > this.pageCount) {
        throw new PageWalkError(`bad page ${pgno}`);
      }
      return image.subarray((pgno - 1) * pageSize, pgno * pageSize);
    },
  };
}

/** One row of `sqlite_schema`. */
export interface SchemaRow {
  type: string;
  name: string;
  rootpage: number;
  sql: string;
}

/** Where the last {@linkcode varint} ended. */
export let varintEnd = 0;
/** A SQLite varint at `at` (its end in {@linkcode varintEnd}). */
export function varint(b: Uint8Array, at: number): number {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const x = b[at + i];
    if (x === undefined) throw new PageWalkError("varint past the page end");
    v = v * 128 + (x & 0x7f);
    if (x < 0x80) {
      varintEnd = at + i + 1;
      return v;
    }
  }
  const last = b[at + 8];
  if (last === undefined) throw new PageWalkError("varint past the page end");
  varintEnd = at + 9;
  return v * 256 + last;
}

export const u16 = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;
export const u32 = (b: Uint8Array, o: number) =>
  ((b[o]! << 24) >>> 0) + (b[o + 1]! << 16) + (b[o + 2]! << 8) + b[o + 3]!;

/** Geometry shared by every page of one database. */
export interface Geometry {
  usable: number;
  /** Largest local payload of a table leaf cell. */
  maxLocal: number;
  /** Largest local payload of an index cell (leaf or interior). */
  maxLocalIndex: number;
  minLocal: number;
}

export function geometry(src: PageSource): Geometry {
  const p1 = src.page(1);
  if (p1[56] !== 0 || p1[57] !== 0 || p1[58] !== 0 || (p1[59] !== 1)) {
    throw new PageWalkError("text encoding is not UTF-8");
  }
  const usable = src.pageSize - p1[20]!;
  if (usable < 480) throw new PageWalkError("unusable page size");
  return {
    usable,
    maxLocal: usable - 35,
    maxLocalIndex: Math.floor(((usable - 12) * 64) / 255) - 23,
    minLocal: Math.floor(((usable - 12) * 32) / 255) - 23,
  };
}

/**
 * Local bytes of a payload of `size` bytes: `max` is the page kind's
 * largest local payload (`maxLocal` for table leaves, `maxLocalIndex` for
 * index pages).
 */
export function localSize(g: Geometry, size: number, max = g.maxLocal): number {
  if (size <= max) return size;
  const k = g.minLocal + ((size - g.minLocal) % (g.usable - 4));
  return k <= max ? k : g.minLocal;
}

/** The whole payload of a cell whose local part starts at `at` in `page`. */
export function assemble(
  src: PageSource,
  g: Geometry,
  page: Uint8Array,
  at: number,
  size: number,
  local: number,
): Uint8Array {
  const out = new Uint8Array(size);
  out.set(page.subarray(at, at + local));
  let next = u32(page, at + local);
  let done = local;
  let hops = 0;
  while (done < size) {
    if (next === 0 || ++hops > src.pageCount) {
      throw new PageWalkError("broken overflow chain");
    }
    const p = src.page(next);
    const n = Math.min(g.usable - 4, size - done);
    out.set(p.subarray(4, 4 + n), done);
    done += n;
    next = u32(p, 0);
  }
  return out;
}

/** Header offset of page `pgno` (page 1 has the 100-byte file header). */
export const hdrOf = (pgno: number) => (pgno === 1 ? 100 : 0);

/** Cells of one page at most (a cell takes at least 4 bytes and its pointer 2). */
const CELLS_PER_PAGE = 65536;

/** Cell `cell` of interior page `pgno`, as a negative number in a leaf list. */
const cellRef = (pgno: number, cell: number) => -(pgno * CELLS_PER_PAGE + cell);

/**
 * What walking one database's trees found. Pages whose bytes are equal on
 * the other side of a comparison have the same kind and children there, so
 * a walk can take them from here instead of reading them again.
 */
export interface TreeIndex {
  /**
   * Per page: the 1-based position of the observed table whose tree holds
   * it, or -1 index, -2 freelist, -3 sqlite_schema, -4 another table; 0:
   * none (an overflow page, or unused).
   */
  mark: Int32Array;
  /** Per page: 1 table interior, 2 table leaf, 3 index interior, 4 index leaf; 0 not walked. */
  kind: Uint8Array;
  /** Children of interior pages (the right-most last). */
  kids: Map<number, number[]>;
  /**
   * Leaf pages of each observed table, in key order. For a `WITHOUT
   * ROWID` table (an index b-tree, whose interior cells hold rows too) the
   * interior cells are listed between their children's leaves, as
   * {@linkcode cellRef}s (negative numbers).
   */
  leaves: Map<string, number[]>;
}

/** Walks the b-trees of one database, reusing what another walk knows of identical pages. */
class Walker {
  #src: PageSource;
  #reuse: TreeIndex | null;
  #same: (pgno: number) => boolean;
  readonly ix: TreeIndex;
  /** Pages read by this walk. */
  pagesRead = 0;

  constructor(
    src: PageSource,
    reuse: TreeIndex | null,
    same: (pgno: number) => boolean,
  ) {
    this.#src = src;
    this.#reuse = reuse;
    this.#same = same;
    this.ix = {
      mark: new Int32Array(src.pageCount + 1),
      kind: new Uint8Array(src.pageCount + 1),
      kids: new Map(),
      leaves: new Map(),
    };
  }

  /** Kind (and children) of page `pgno` of a table (`table`) or index tree. */
  #node(pgno: number, table: boolean): number {
    const ix = this.ix;
    const r = this.#reuse;
    if (
      r !== null && pgno < r.kind.length && r.kind[pgno] !== 0 &&
      this.#same(pgno)
    ) {
      const k = r.kind[pgno]!;
      if ((k <= 2) !== table) {
        throw new PageWalkError(`page ${pgno} is in two kinds of tree`);
      }
      ix.kind[pgno] = k;
      const kids = r.kids.get(pgno);
      if (kids !== undefined) ix.kids.set(pgno, kids);
      return k;
    }
    const page = this.#src.page(pgno);
    this.pagesRead++;
    const h = hdrOf(pgno);
    const type = page[h];
    let k: number;
    if (table && type === 0x0d) k = 2;
    else if (table && type === 0x05) k = 1;
    else if (!table && type === 0x0a) k = 4;
    else if (!table && type === 0x02) k = 3;
    else {
      throw new PageWalkError(
        `page ${pgno} is not a${table ? " table" : "n index"} b-tree page`,
      );
    }
    ix.kind[pgno] = k;
    if (k === 1 || k === 3) {
      const cells = u16(page, h + 3);
      const kids: number[] = new Array(cells + 1);
      for (let i = 0; i < cells; i++) {
        kids[i] = u32(page, u16(page, h + 12 + 2 * i));
      }
      kids[cells] = u32(page, h + 8);
      ix.kids.set(pgno, kids);
    }
    return k;
  }

  /**
   * Walk a tree from `root`, marking its pages with `tag`; its leaves in
   * key order, with the interior cells between them when `cells`.
   */
  tree(root: number, tag: number, table: boolean, cells = false): number[] {
    const leaves: number[] = [];
    const { mark, kind } = this.ix;
    const pages = this.#src.pageCount;
    const visit = (pgno: number, depth: number): void => {
      if (pgno < 1 || pgno > pages || depth > 64 || mark[pgno] !== 0) {
        throw new PageWalkError(`bad page ${pgno}`);
      }
      mark[pgno] = tag;
      const k = this.#node(pgno, table);
      if (k === 2 || k === 4) {
        leaves.push(pgno);
        return;
      }
      const kids = this.ix.kids.get(pgno)!;
      visit(kids[0]!, depth + 1);
      const leaf = kind[kids[0]!] === 2 || kind[kids[0]!] === 4;
      for (let i = 1; i < kids.length; i++) {
        const kid = kids[i]!;
        if (cells) leaves.push(cellRef(pgno, i - 1));
        if (!leaf) {
          visit(kid, depth + 1);
          continue;
        }
        // A b-tree is balanced: the siblings of a leaf are leaves (checked
        // when a leaf is read).
        if (kid < 1 || kid > pages || mark[kid] !== 0) {
          throw new PageWalkError(`bad page ${kid}`);
        }
        mark[kid] = tag;
        kind[kid] = table ? 2 : 4;
        leaves.push(kid);
      }
    };
    visit(root, 0);
    return leaves;
  }

  /** Mark the freelist's trunk and leaf pages. */
  freelist(): void {
    const src = this.#src;
    const mark = this.ix.mark;
    let trunk = u32(src.page(1), 32);
    let hops = 0;
    while (trunk !== 0) {
      if (trunk > src.pageCount || ++hops > src.pageCount) {
        throw new PageWalkError("broken freelist");
      }
      if (mark[trunk] === 0) mark[trunk] = -2;
      const t = src.page(trunk);
      this.pagesRead++;
      const n = u32(t, 4);
      if (n > (src.pageSize >> 2) - 2) {
        throw new PageWalkError("broken freelist");
      }
      for (let i = 0; i < n; i++) {
        const leaf = u32(t, 8 + 4 * i);
        if (leaf >= 1 && leaf <= src.pageCount && mark[leaf] === 0) {
          mark[leaf] = -2;
        }
      }
      trunk = u32(t, 0);
    }
  }
}

/**
 * Walk every tree of one side: sqlite_schema, each observed table (its
 * leaves in key order), every other table and index, the freelist.
 */
export function walkTrees(
  side: DiffSide,
  reuse: TreeIndex | null = null,
  same: (pgno: number) => boolean = () => false,
): { index: TreeIndex; pagesRead: number } {
  const w = new Walker(side.src, reuse, same);
  w.tree(1, -3, true);
  side.tables.forEach((t, i) =>
    w.ix.leaves.set(
      t.name,
      t.key === null
        ? w.tree(t.rootpage, i + 1, true)
        : w.tree(t.rootpage, i + 1, false, true),
    )
  );
  for (const r of side.schema) {
    if (r.rootpage < 1 || w.ix.mark[r.rootpage] !== 0) continue;
    if (r.type === "index") w.tree(r.rootpage, -1, false);
    else if (r.type === "table") w.tree(r.rootpage, -4, true);
  }
  w.freelist();
  return { index: w.ix, pagesRead: w.pagesRead };
}

/**
 * Parse a record header (the SQLite record format) at `buf[at .. at+size)`:
 * each field's serial type into `types` and its body offset into `offs`
 * (`offs[count]` is the end of the body). Returns the number of fields, or
 * -1 when the record holds something only SQL should interpret (reserved
 * serial types, a body longer than the record, more fields than `max`).
 */
export function parseHeader(
  buf: Uint8Array,
  at: number,
  size: number,
  max: number,
  types: Int32Array,
  offs: Int32Array,
): number {
  const end = at + size;
  let q = at;
  let headerSize = buf[q]!;
  if (headerSize < 0x80) q++;
  else {
    headerSize = varint(buf, q);
    q = varintEnd;
  }
  const headerEnd = at + headerSize;
  if (headerEnd > end) return -1;
  let body = headerEnd;
  let i = 0;
  while (q < headerEnd) {
    let t = buf[q]!;
    if (t < 0x80) q++;
    else {
      t = varint(buf, q);
      q = varintEnd;
    }
    if (i >= max) return -1;
    let len: number;
    if (t < 12) {
      len = SERIAL_LEN[t]!;
      if (len < 0) return -1;
    } else len = (t - (t & 1 ? 13 : 12)) / 2;
    types[i] = t;
    offs[i] = body;
    body += len;
    i++;
  }
  if (body > end) return -1;
  offs[i] = body;
  return i;
}

/** Body length of serial types 0-11 (-1: reserved, left to SQL). */
const SERIAL_LEN = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1];

/**
 * The value of one field (serial type `t` at `off`), as the snapshot reader
 * gives it; `view` (over `buf`) is made here when null and needed.
 */
export function valueAt(
  buf: Uint8Array,
  view: DataView | null,
  t: number,
  off: number,
) {
  switch (t) {
    case 0:
      return null;
    case 1:
      return (buf[off]! << 24) >> 24;
    case 2:
      return ((buf[off]! << 24) >> 16) | buf[off + 1]!;
    case 3:
      return ((buf[off]! << 24) >> 8) | (buf[off + 1]! << 8) | buf[off + 2]!;
    case 4:
      return (buf[off]! << 24) | (buf[off + 1]! << 16) |
        (buf[off + 2]! << 8) | buf[off + 3]!;
    case 5:
    case 6:
    case 7:
      return wideAt(
        view ?? new DataView(buf.buffer, buf.byteOffset, buf.byteLength),
        t,
        off,
      );
    case 8:
      return 0;
    case 9:
      return 1;
  }
  const len = (t - (t & 1 ? 13 : 12)) / 2;
  if (t & 1) {
    if (len <= 256) {
      // ASCII: one flat string from its bytes (no decoder call, no chain
      // of concatenations kept alive with the value).
      for (let k = off; k < off + len; k++) {
        if (buf[k]! > 0x7f) return utf8.decode(buf.subarray(off, off + len));
      }
      return String.fromCharCode.apply(
        null,
        buf.subarray(off, off + len) as unknown as number[],
      );
    }
    return utf8.decode(buf.subarray(off, off + len));
  }
  return { $bytes: bytesToBase64(buf.subarray(off, off + len)) };
}

/** A 6- or 8-byte integer (serial types 5, 6) or a real (7). */
function wideAt(view: DataView, t: number, off: number) {
  if (t === 5) return view.getInt16(off) * 4294967296 + view.getUint32(off + 2);
  if (t === 6) {
    const x = view.getInt32(off) * 4294967296 + view.getUint32(off + 4);
    return Number.isSafeInteger(x)
      ? x
      : { $int: view.getBigInt64(off).toString() };
  }
  const x = view.getFloat64(off);
  return Number.isFinite(x) ? x : { $real: String(x) };
}

const utf8 = new TextDecoder();

/** Serial types and offsets of the record being decoded (reused). */
let decodeTypes = new Int32Array(64);
let decodeOffs = new Int32Array(64);

/** Decode a whole record into `fields`; returns the field count or -1 (see {@linkcode parseHeader}). */
function decodeRecord(
  buf: Uint8Array,
  at: number,
  size: number,
  max: number,
  fields: unknown[],
): number {
  if (decodeTypes.length < max + 1) {
    decodeTypes = new Int32Array(max + 1);
    decodeOffs = new Int32Array(max + 1);
  }
  const types = decodeTypes;
  const offs = decodeOffs;
  const n = parseHeader(buf, at, size, max, types, offs);
  if (n < 0) return -1;
  let view: DataView | null = null;
  for (let i = 0; i < n; i++) {
    const t = types[i]!;
    if (t >= 5 && t <= 7) {
      view ??= new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    }
    fields[i] = valueAt(buf, view, t, offs[i]!);
  }
  return n;
}

/**
 * Every row of a small rowid table read from its b-tree at `root`: its
 * rowid and its first `columns` fields (a fresh array per row), in rowid
 * order. For `sqlite_schema` and SQLite's internal tables; the tables a
 * session changes are read by the diff's cursors.
 */
function* tableRows(
  src: PageSource,
  root: number,
  columns: number,
  what: string,
): Generator<{ rowid: number; fields: unknown[] }> {
  const g = geometry(src);
  for (const pgno of new Walker(src, null, () => false).tree(root, 1, true)) {
    // A copy: following an overflow chain reads other pages.
    const page = src.page(pgno).slice();
    const h = hdrOf(pgno);
    if (page[h] !== 0x0d) {
      throw new PageWalkError(`page ${pgno} is not a table leaf`);
    }
    const cells = u16(page, h + 3);
    for (let c = 0; c < cells; c++) {
      let p = u16(page, h + 8 + 2 * c);
      const size = varint(page, p);
      const rowid = varint(page, varintEnd);
      p = varintEnd;
      const local = localSize(g, size);
      const buf = local === size
        ? page.subarray(p, p + size)
        : assemble(src, g, page, p, size, local);
      const fields: unknown[] = new Array(columns).fill(null);
      if (decodeRecord(buf, 0, size, columns, fields) < 0) {
        throw new PageWalkError(`unreadable ${what} row`);
      }
      yield { rowid, fields };
    }
  }
}

/** Read `sqlite_schema` (the table b-tree rooted at page 1). */
export function readSchema(src: PageSource): SchemaRow[] {
  const rows: SchemaRow[] = [];
  for (const { fields } of tableRows(src, 1, 5, "sqlite_schema")) {
    rows.push({
      type: String(fields[0]),
      name: String(fields[1]),
      rootpage: typeof fields[3] === "number" ? fields[3] : 0,
      sql: typeof fields[4] === "string" ? fields[4] : "",
    });
  }
  return rows;
}

/** The region of SQLite's own schema objects and header fields. */
export const SCHEMA_REGION = "sqlite_schema";

/** One of SQLite's own regions: `sqlite_schema`, or an internal table. */
export interface MetaTable {
  name: string;
  /** An internal table's columns; absent for `sqlite_schema`. */
  columns?: string[];
  /** Unsorted. */
  records: { key: unknown[]; value: Record<string, unknown> }[];
}

/** Column names of an internal table from its CREATE statement. */
function internalColumns(sql: string): string[] {
  const inner = sql.slice(sql.indexOf("(") + 1, sql.lastIndexOf(")"));
  return inner.split(",").map((c) => c.trim().split(/\s+/)[0]!).filter((c) =>
    c !== ""
  );
}

/**
 * SQLite's own state beside the tables, read page by page: the
 * `sqlite_schema` region (the header's `user_version` and
 * `application_id`, and every index, trigger and view with its SQL) and
 * each internal table (`sqlite_sequence`, `sqlite_stat1`, ...) with its
 * rows by rowid. A read-only claim is judged on these too.
 */
export function readSqliteMeta(src: PageSource): MetaTable[] {
  const schema = readSchema(src);
  const header = src.page(1);
  const u32s = (o: number) => u32(header, o) | 0;
  const meta: MetaTable = {
    name: SCHEMA_REGION,
    records: [
      { key: ["header", "application_id"], value: { value: u32s(68) } },
      { key: ["header", "user_version"], value: { value: u32s(60) } },
    ],
  };
  for (const r of schema) {
    if (r.type === "table") continue;
    meta.records.push({
      key: [r.type, r.name],
      value: { sql: r.sql === "" ? null : r.sql },
    });
  }
  const out: MetaTable[] = [meta];
  for (const t of schema) {
    if (t.type !== "table" || !t.name.startsWith("sqlite_")) continue;
    const columns = internalColumns(t.sql);
    const records: MetaTable["records"] = [];
    if (t.rootpage > 0) {
      for (
        const { rowid, fields } of tableRows(
          src,
          t.rootpage,
          columns.length,
          t.name,
        )
      ) {
        const value: Record<string, unknown> = {};
        columns.forEach((c, i) => (value[c] = fields[i] ?? null));
        records.push({ key: [rowid], value });
      }
    }
    out.push({ name: t.name, columns, records });
  }
  return out;
}

/**
 * How a `WITHOUT ROWID` table is stored: an index b-tree whose records hold
 * the primary-key columns first (in key order), then the other columns,
 * ordered by the key columns under their collations and directions.
 */
export interface KeyOrder {
  /** Per table column (declaration order): the record field holding it. */
  colField: Int32Array;
  /** Key columns (the first fields of a record). */
  nKey: number;
  /** Per key column: 0 BINARY, 1 NOCASE, 2 RTRIM. */
  coll: Uint8Array;
  /** Per key column: 1 when descending. */
  desc: Uint8Array;
  /** Whether the key order is the snapshot's (every key column BINARY, ascending). */
  binaryAsc: boolean;
}

/** The tables a snapshot observes, in the snapshot reader's order, with their plans. */
export interface PlannedTable {
  name: string;
  rootpage: number;
  plan: TablePlan;
  /** How a `WITHOUT ROWID` table's records are keyed; null: a rowid table. */
  key: KeyOrder | null;
  /**
   * A rowid table identified by a primary key other than its rowid (`TEXT
   * PRIMARY KEY`, composite keys): the key's columns; null otherwise.
   */
  keyCols: number[] | null;
  /**
   * Of such a table: its primary-key index when that lists the key
   * columns in the snapshot's order (the key's columns in order, BINARY,
   * ascending; then the rowid), so the index gives rowids in key order.
   */
  pkIndex?: string | null;
}

const COLLATIONS: Record<string, number> = { BINARY: 0, NOCASE: 1, RTRIM: 2 };

/**
 * The key order of a `WITHOUT ROWID` table, from its primary-key index as
 * the SQL engine describes it (`pragma_index_xinfo` of the table). Throws
 * PageWalkError when the layout is not the one this reader compares (a
 * collation other than BINARY, NOCASE and RTRIM, columns missing).
 */
function keyOrder(
  db: { exec(sql: string): { values: unknown[][] }[] },
  plan: TablePlan,
): KeyOrder {
  const name = plan.name;
  const rows = db.exec(
    `SELECT seqno, cid, "desc", coll, "key" FROM pragma_index_xinfo(${
      sqlString(name)
    }) ORDER BY seqno`,
  )[0]?.values ?? [];
  const n = plan.columns.length;
  const colField = new Int32Array(n).fill(-1);
  const keyCols: number[] = [];
  const coll: number[] = [];
  const desc: number[] = [];
  rows.forEach((r, f) => {
    const cid = Number(r[1]);
    if (!(cid >= 0 && cid < n) || colField[cid] !== -1) {
      throw new PageWalkError(`table ${name}: unexpected key layout`);
    }
    colField[cid] = f;
    if (Number(r[4]) === 1) {
      if (keyCols.length !== f) {
        throw new PageWalkError(`table ${name}: unexpected key layout`);
      }
      const c = COLLATIONS[String(r[3] ?? "BINARY").toUpperCase()];
      if (c === undefined) {
        throw new PageWalkError(
          `table ${name}: key collation ${String(r[3])} is not compared here`,
        );
      }
      keyCols.push(cid);
      coll.push(c);
      desc.push(Number(r[2]) ? 1 : 0);
    }
  });
  if (
    rows.length !== n || keyCols.length === 0 ||
    keyCols.length !== plan.keyIdx.length ||
    keyCols.some((c, i) => c !== plan.keyIdx[i])
  ) {
    throw new PageWalkError(`table ${name}: unexpected key layout`);
  }
  return {
    colField,
    nKey: keyCols.length,
    coll: Uint8Array.from(coll),
    desc: Uint8Array.from(desc),
    binaryAsc: coll.every((c) => c === 0) && desc.every((d) => d === 0),
  };
}

/**
 * The primary-key index of a rowid table when its records are the key's
 * columns `keyIdx` in that order, BINARY and ascending, then the rowid;
 * else null.
 */
function pkIndexInKeyOrder(
  db: { exec(sql: string): { values: unknown[][] }[] },
  table: string,
  keyIdx: readonly number[],
): string | null {
  const name = db.exec(
    `SELECT name FROM pragma_index_list(${
      sqlString(table)
    }) WHERE origin = 'pk'`,
  )[0]?.values[0]?.[0];
  if (typeof name !== "string") return null;
  const xs = db.exec(
    `SELECT cid, "desc", coll, "key" FROM pragma_index_xinfo(${
      sqlString(name)
    }) ORDER BY seqno`,
  )[0]?.values ?? [];
  const n = keyIdx.length;
  const ok = xs.length === n + 1 &&
    keyIdx.every((c, i) =>
      Number(xs[i]![0]) === c && Number(xs[i]![1]) === 0 &&
      String(xs[i]![2] ?? "BINARY").toUpperCase() === "BINARY" &&
      Number(xs[i]![3]) === 1
    ) && Number(xs[n]![0]) === -1 && Number(xs[n]![3]) === 0;
  return ok ? name : null;
}

function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'";
}

/**
 * Plan every observed table of a schema with the SQL engine on an empty
 * database holding only the schema's tables (the rows are never given to
 * SQL). Throws PageWalkError when a table needs SQL to be read (keys not
 * in rowid order, generated columns). Internal tables are left to
 * {@linkcode readSqliteMeta}.
 */
export function planSchema(
  SQL: SqlEngine,
  schema: readonly SchemaRow[],
): PlannedTable[] {
  const tables = schema.filter((r) => r.type === "table").sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  );
  const db = new SQL.Database();
  try {
    const out: PlannedTable[] = [];
    for (const t of tables) {
      if (t.name.startsWith("sqlite_")) continue;
      if (/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql)) continue;
      try {
        db.exec(t.sql);
      } catch (e) {
        throw new PageWalkError(
          `schema of ${t.name} not replayable: ${(e as Error).message}`,
        );
      }
      const plan = planTable(db, t.name, t.sql);
      if (t.rootpage < 1) {
        throw new PageWalkError(`table ${t.name} has no b-tree`);
      }
      if (plan.hidden > 0) {
        throw new PageWalkError(`table ${t.name} has generated columns`);
      }
      if (plan.withoutRowid) {
        const key = keyOrder(db, plan);
        out.push({
          name: t.name,
          rootpage: t.rootpage,
          plan,
          key,
          keyCols: null,
        });
        continue;
      }
      // `INTEGER PRIMARY KEY DESC` is no rowid alias: the key is stored,
      // with an index of its own.
      const alias = plan.intPk &&
        Number(
            db.exec(
              `SELECT count(*) FROM pragma_index_list(${
                sqlString(t.name)
              }) WHERE origin = 'pk'`,
            )[0]?.values[0]?.[0] ?? 0,
          ) === 0;
      // A primary key (its columns are the identity), not the rowid.
      const pk = plan.rowidIdx !== -1 &&
        plan.keyIdx.every((i) => i < plan.columns.length);
      if (pk && !alias) {
        // Stored by rowid, identified by its primary key.
        out.push({
          name: t.name,
          rootpage: t.rootpage,
          plan: { ...plan, aliasIdx: -1 },
          key: null,
          keyCols: plan.keyIdx,
          pkIndex: pkIndexInKeyOrder(db, t.name, plan.keyIdx),
        });
        continue;
      }
      if (plan.rowidName === null) {
        throw new PageWalkError(
          `table ${t.name} has no rowid name (rowid, _rowid_ and oid are all columns)`,
        );
      }
      if (!plan.decodable) {
        throw new PageWalkError(`table ${t.name} is not read in rowid order`);
      }
      out.push({
        name: t.name,
        rootpage: t.rootpage,
        plan,
        key: null,
        keyCols: null,
      });
    }
    return out;
  } finally {
    db.close();
  }
}

/** One side of a comparison: a database and its planned tables. */
export interface DiffSide {
  src: PageSource;
  /** Its sqlite_schema (from {@linkcode readSchema}). */
  schema: SchemaRow[];
  /** Its tables (from {@linkcode planSchema}). */
  tables: PlannedTable[];
}

/** Options of {@linkcode diffSqlitePair}. */
export interface SqliteDiffOptions {
  /** The adapter's label (region ids are `label:table`). */
  label: string;
  /** A table's category. */
  categoryOf: (table: string) => Category;
  /** Masks by table name. */
  masks: ReadonlyMap<string, readonly MaskRule[]>;
  /**
   * Pages whose bytes differ between the two sides (index = page number,
   * non-zero = differs; pages beyond the array differ); null: treat every
   * page as different (nothing is skipped).
   */
  changed: Uint8Array | null;
  /**
   * The before side's trees, walked earlier (the same bytes: a seed
   * compared with many sessions); walked now when absent.
   */
  beforeIndex?: TreeIndex | null;
  /**
   * Keep the full rows of every change (`RegionDiff.rows`: the after
   * side's added and changed rows, the before side's changed and removed
   * ones). @default false
   */
  keepRows?: boolean;
}

/**
 * The full rows of one table's changes, kept when asked: a row this
 * reader cannot decode leaves them unknown for the table (no fallback).
 */
class RowKeeper {
  put: StateRecord[] = [];
  was: StateRecord[] = [];
  ok: boolean;
  constructor(on: boolean) {
    this.ok = on;
  }
  keep(
    list: "put" | "was",
    key: string,
    value: () => Record<string, unknown>,
  ): void {
    if (!this.ok) return;
    try {
      this[list].push({ key, value: value() });
    } catch (e) {
      if (!(e instanceof PageWalkError)) throw e;
      this.ok = false;
    }
  }
  /** Put the rows on `part` (sorted by key when found in another order). */
  done(part: RegionDiff, sort: boolean): void {
    if (!this.ok) return;
    part.rows = sort
      ? { put: sortByKey(this.put), was: sortByKey(this.was) }
      : { put: this.put, was: this.was };
  }
}

/** What {@linkcode diffSqlitePair} did, for benchmarks and tests. */
export interface SqliteDiffStats {
  /** Leaf pages skipped because they are identical on both sides. */
  leavesSkipped: number;
  /** Leaf pages read (on either side). */
  leavesRead: number;
  /** Rows decoded (they differ, or could not be compared as bytes). */
  rowsDecoded: number;
  /** Tree pages read to walk the trees (the rest were known from the other side). */
  treePagesRead: number;
  /** Keyed rowid tables whose changed rows were put in key order by their primary-key index. */
  orderedByIndex: number;
}

/** Iterates the cells of a table's leaf pages in rowid order, skipping some leaves. */
export class LeafCursor {
  #src: PageSource;
  #g: Geometry;
  #leaves: number[];
  #skip: (pgno: number) => boolean;
  #li = -1;
  #cells = 0;
  #ci = 0;
  #h = 0;
  page: Uint8Array = new Uint8Array();
  rowid = 0;
  /** Start of the payload in `page`. */
  at = 0;
  size = 0;
  local = 0;
  #last = -Infinity;
  leavesRead = 0;
  /** Cells read (rows of the leaves read). */
  cellsRead = 0;

  constructor(
    src: PageSource,
    g: Geometry,
    leaves: number[],
    skip: (pgno: number) => boolean,
  ) {
    this.#src = src;
    this.#g = g;
    this.#leaves = leaves;
    this.#skip = skip;
  }

  /** Leaves listed (read or skipped). */
  get leafCount(): number {
    return this.#leaves.length;
  }

  next(): boolean {
    while (this.#ci >= this.#cells) {
      if (++this.#li >= this.#leaves.length) return false;
      const pgno = this.#leaves[this.#li]!;
      if (this.#skip(pgno)) {
        this.#cells = 0;
        continue;
      }
      this.page = this.#src.page(pgno);
      this.leavesRead++;
      this.#h = hdrOf(pgno);
      if (this.page[this.#h] !== 0x0d) {
        throw new PageWalkError(`page ${pgno} is not a table leaf`);
      }
      this.#cells = u16(this.page, this.#h + 3);
      this.#ci = 0;
    }
    const page = this.page;
    let p = u16(page, this.#h + 8 + 2 * this.#ci++);
    let size = page[p]!;
    if (size < 0x80) p++;
    else {
      size = varint(page, p);
      p = varintEnd;
    }
    let rowid = page[p]!;
    if (rowid < 0x80) p++;
    else {
      rowid = varint(page, p);
      p = varintEnd;
    }
    if (!Number.isSafeInteger(rowid) || rowid <= this.#last) {
      throw new PageWalkError("rowids not in order or beyond 2^53");
    }
    this.#last = rowid;
    this.cellsRead++;
    this.rowid = rowid;
    this.at = p;
    this.size = size;
    this.local = size <= this.#g.maxLocal ? size : localSize(this.#g, size);
    if (p + this.local > page.length) {
      throw new PageWalkError("cell past the page end");
    }
    return true;
  }

  /** The current row's whole payload (a view into the page when it does not overflow). */
  payload(): Uint8Array {
    if (this.local === this.size) {
      return this.page.subarray(this.at, this.at + this.size);
    }
    const out = assemble(
      this.#src,
      this.#g,
      this.page,
      this.at,
      this.size,
      this.local,
    );
    // A long chain may have pushed the leaf out of the source's memory.
    this.page = this.#src.page(this.#leaves[this.#li]!);
    return out;
  }
}

/** Tuning of the comparison, for tests. */
export const deltaTuning = {
  /**
   * Put a keyed rowid table's changed rows in key order by its primary-key
   * index whenever it can (not only when that is cheaper than a sort).
   */
  indexOrderAlways: false,
};

/**
 * Deliberate faults, for the test that shows the differential test catches
 * a wrong answer. Never set outside that test.
 */
export const deltaFaults = {
  /**
   * Take two `WITHOUT ROWID` records whose keys are equal under the key's
   * collation as the same row, without checking that the keys are the
   * same values (wrong under NOCASE: 'a' replaced by 'A' is a row removed
   * and a row added).
   */
  collationEqualIsSameRow: false,
  /**
   * Take the changed rows of a rowid table identified by another primary
   * key, found in rowid order, as in key order without checking (wrong
   * when rows inserted out of key order change).
   */
  changedRowsInKeyOrder: false,
};

/** One record of a `WITHOUT ROWID` table: where its key fields are. */
class KeyView {
  /** The bytes holding the record's header and key fields (a page, or the whole payload). */
  buf: Uint8Array = new Uint8Array();
  /** Start of the record in `buf`. */
  at = 0;
  /** Fields in the record. */
  count = 0;
  /** Whether `buf` is this record's own copy (not a page of the source, which may be reused). */
  owned = false;
  types: Int32Array;
  offs: Int32Array;
  constructor(max: number) {
    this.types = new Int32Array(max + 1);
    this.offs = new Int32Array(max + 1);
  }
}

/**
 * Iterates the records of a `WITHOUT ROWID` table (an index b-tree) in key
 * order: the cells of its leaves and, between them, its interior cells,
 * skipping pages identical on both sides. Checks that every record's key
 * is above the previous one under the table's key order (so a merge of
 * two cursors is exact even where this order and SQLite's might differ:
 * they would disagree here first, and the comparison falls back).
 */
export class KeyCursor {
  #src: PageSource;
  #g: Geometry;
  #units: number[];
  #skip: (pgno: number) => boolean;
  #ui = -1;
  #cells = 0;
  #ci = 0;
  #h = 0;
  #pgno = 0;
  #n: number;
  readonly plan: TablePlan | null;
  readonly order: KeyOrder | null;
  page: Uint8Array = new Uint8Array();
  /** Start of the payload in `page`. */
  at = 0;
  size = 0;
  local = 0;
  /** The current record's key; `prev`: the previous one. */
  key: KeyView;
  #prev: KeyView;
  #started = false;
  #full: Uint8Array | null = null;
  leavesRead = 0;

  constructor(
    src: PageSource,
    g: Geometry,
    units: number[],
    skip: (pgno: number) => boolean,
    table: { t: PlannedTable } | undefined,
  ) {
    this.#src = src;
    this.#g = g;
    this.#units = units;
    this.#skip = skip;
    this.plan = table?.t.plan ?? null;
    this.order = table?.t.key ?? null;
    this.#n = this.plan?.columns.length ?? 0;
    this.key = new KeyView(this.#n);
    this.#prev = new KeyView(this.#n);
  }

  next(): boolean {
    let p: number;
    for (;;) {
      if (this.#ci < this.#cells) {
        p = u16(this.page, this.#h + 8 + 2 * this.#ci++);
        break;
      }
      if (++this.#ui >= this.#units.length) return false;
      const u = this.#units[this.#ui]!;
      if (u > 0) {
        if (this.#skip(u)) {
          this.#cells = 0;
          continue;
        }
        this.page = this.#src.page(u);
        this.leavesRead++;
        this.#pgno = u;
        this.#h = hdrOf(u);
        if (this.page[this.#h] !== 0x0a) {
          throw new PageWalkError(`page ${u} is not an index leaf`);
        }
        this.#cells = u16(this.page, this.#h + 3);
        this.#ci = 0;
        continue;
      }
      // An interior cell: a record between two subtrees.
      this.#cells = 0;
      const pgno = Math.floor(-u / CELLS_PER_PAGE);
      const cell = -u % CELLS_PER_PAGE;
      if (this.#skip(pgno)) continue;
      this.page = this.#src.page(pgno);
      this.#pgno = pgno;
      const h = hdrOf(pgno);
      if (this.page[h] !== 0x02 || cell >= u16(this.page, h + 3)) {
        throw new PageWalkError(`page ${pgno} is not an index interior page`);
      }
      p = u16(this.page, h + 12 + 2 * cell) + 4;
      break;
    }
    const page = this.page;
    let size = page[p]!;
    if (size < 0x80) p++;
    else {
      size = varint(page, p);
      p = varintEnd;
    }
    this.at = p;
    this.size = size;
    this.local = localSize(this.#g, size, this.#g.maxLocalIndex);
    if (p + this.local > page.length) {
      throw new PageWalkError("cell past the page end");
    }
    this.#full = null;
    const k = this.#prev;
    this.#prev = this.key;
    this.key = k;
    if (this.local < this.size && !this.#prev.owned && this.#started) {
      // Following this record's chain may reuse the previous one's page.
      this.#prev.buf = this.#prev.buf.slice();
      this.#prev.owned = true;
    }
    this.#parseKey();
    if (this.#started) {
      if (compareRecordKeys(this.#prev, this.key, this.order!) >= 0) {
        throw new PageWalkError(
          `table ${this.plan!.name}: keys not in the order of their collations`,
        );
      }
    }
    this.#started = true;
    return true;
  }

  /** Parse the current record's header; its key fields must be in `key.buf`. */
  #parseKey(): void {
    const k = this.key;
    const order = this.order!;
    let buf = this.page;
    let at = this.at;
    let avail = this.local;
    for (let pass = 0; pass < 2; pass++) {
      // The header size, then the header, then the key fields, all local.
      const hs = buf[at]! < 0x80 ? buf[at]! : varint(buf, at);
      if (hs <= avail) {
        const count = parseHeader(
          buf,
          at,
          this.size,
          this.#n,
          k.types,
          k.offs,
        );
        if (count < 0) throw new PageWalkError("record needs SQL");
        if (count < order.nKey) {
          throw new PageWalkError("record shorter than its key");
        }
        if (k.offs[order.nKey]! <= at + avail) {
          k.buf = buf;
          k.owned = buf !== this.page;
          k.at = at;
          k.count = count;
          return;
        }
      }
      if (pass === 1) break;
      // A long key: read the whole payload.
      buf = this.payload();
      at = 0;
      avail = buf.length;
    }
    throw new PageWalkError("malformed record");
  }

  /** The current record's whole payload (a view into the page when it does not overflow). */
  payload(): Uint8Array {
    if (this.local === this.size) {
      return this.page.subarray(this.at, this.at + this.size);
    }
    if (this.#full !== null) return this.#full;
    const before = this.page;
    const out = assemble(
      this.#src,
      this.#g,
      this.page,
      this.at,
      this.size,
      this.local,
    );
    // A long chain may have pushed the page out of the source's memory.
    this.page = this.#src.page(this.#pgno);
    if (this.key.buf === before) this.key.buf = this.page;
    this.#full = out;
    return out;
  }

  /** The current record's key as the snapshot reader writes it. */
  keyString(): string {
    const k = this.key;
    return keyStringOf(k.buf, k.types, k.offs, this.order!.nKey, null);
  }
}

/** Where a key string is assembled (one character per element). */
const keyChars = new Uint16Array(512);

/**
 * A record's key as the snapshot reader writes it (`[v1,v2,…]`, encoded
 * values as JSON): the first `n` fields, or the fields `fields` lists.
 * A key of integers (up to 6 bytes) and texts that JSON writes as they
 * stand (printable ASCII without `"` or `\\`) is assembled from its bytes
 * as one string; any other as the snapshot reader decodes its values.
 */
export function keyStringOf(
  buf: Uint8Array,
  types: Int32Array,
  offs: Int32Array,
  n: number,
  fields: readonly number[] | null,
): string {
  const out = keyChars;
  let m = 0;
  out[m++] = 0x5b;
  for (let i = 0; i < n; i++) {
    const f = fields === null ? i : fields[i]!;
    const t = types[f]!;
    const off = offs[f]!;
    if (i > 0) out[m++] = 0x2c;
    if ((t >= 1 && t <= 5) || t === 8 || t === 9) {
      if (m + 16 > out.length) {
        return keyStringSlow(buf, types, offs, n, fields);
      }
      const v = numberAt(buf, t, off) as number;
      const d = String(v);
      for (let j = 0; j < d.length; j++) out[m++] = d.charCodeAt(j);
      continue;
    }
    if (t < 13 || !(t & 1)) return keyStringSlow(buf, types, offs, n, fields);
    const len = (t - 13) / 2;
    if (m + len + 4 > out.length) {
      return keyStringSlow(buf, types, offs, n, fields);
    }
    out[m++] = 0x22;
    for (let j = off; j < off + len; j++) {
      const c = buf[j]!;
      if (c > 0x7f || c < 0x20 || c === 0x22 || c === 0x5c) {
        return keyStringSlow(buf, types, offs, n, fields);
      }
      out[m++] = c;
    }
    out[m++] = 0x22;
  }
  out[m++] = 0x5d;
  return String.fromCharCode.apply(
    null,
    out.subarray(0, m) as unknown as number[],
  );
}

/** {@linkcode keyStringOf} of any key, value by value. */
function keyStringSlow(
  buf: Uint8Array,
  types: Int32Array,
  offs: Int32Array,
  n: number,
  fields: readonly number[] | null,
): string {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let out = "[";
  for (let i = 0; i < n; i++) {
    const f = fields === null ? i : fields[i]!;
    const t = types[f]!;
    const off = offs[f]!;
    if (t >= 13 && t & 1) {
      const len = (t - 13) / 2;
      for (let j = off; j < off + len; j++) {
        if (buf[j]! > 0x7f) {
          try {
            strictUtf8.decode(buf.subarray(off, off + len));
          } catch {
            throw new PageWalkError("key text is not valid UTF-8");
          }
          break;
        }
      }
    }
    const v = valueAt(buf, view, t, off);
    if (i > 0) out += ",";
    out += typeof v === "number" ? String(v) : JSON.stringify(v);
  }
  return out + "]";
}

/**
 * {@linkcode compareValues} of two keys' values (arrays of the same
 * length), numbers and texts compared directly.
 */
function compareKeyVals(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === "number" && typeof y === "number") {
      if (x !== y) return x < y ? -1 : 1;
    } else if (typeof x === "string" && typeof y === "string") {
      if (x !== y) return compareStrings(x, y);
    } else {
      const c = compareValues(x, y);
      if (c !== 0) return c;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Rank of a serial type in SQLite's order: NULL, numbers, text, blobs. */
const classOf = (t: number) => t === 0 ? 0 : t < 10 ? 1 : t & 1 ? 2 : 3;

/** A numeric field: a number, or a bigint for integers beyond 2^53. */
function numberAt(buf: Uint8Array, t: number, off: number): number | bigint {
  switch (t) {
    case 1:
      return (buf[off]! << 24) >> 24;
    case 2:
      return ((buf[off]! << 24) >> 16) | buf[off + 1]!;
    case 3:
      return ((buf[off]! << 24) >> 8) | (buf[off + 1]! << 8) | buf[off + 2]!;
    case 4:
      return (buf[off]! << 24) | (buf[off + 1]! << 16) |
        (buf[off + 2]! << 8) | buf[off + 3]!;
    case 8:
      return 0;
    case 9:
      return 1;
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (t === 7) {
    const x = view.getFloat64(off);
    if (Number.isNaN(x)) throw new PageWalkError("NaN in a key");
    return x;
  }
  if (t === 6) {
    const x = view.getInt32(off) * 4294967296 + view.getUint32(off + 4);
    return Number.isSafeInteger(x) ? x : view.getBigInt64(off);
  }
  return valueAt(buf, view, t, off) as number;
}

/** An integer against a float, exactly. */
function intVersusFloat(i: number | bigint, r: number): number {
  if (typeof i === "number") return i < r ? -1 : i > r ? 1 : 0;
  if (!Number.isFinite(r)) return r > 0 ? -1 : 1;
  if (Number.isInteger(r)) {
    const y = BigInt(r);
    return i < y ? -1 : i > y ? 1 : 0;
  }
  // A float with a fraction is below 2^52 in magnitude; i is beyond 2^53.
  return i > 0n ? 1 : -1;
}

function compareNumeric(
  a: number | bigint,
  fa: boolean,
  b: number | bigint,
  fb: boolean,
): number {
  if (fa === fb || (typeof a === "number" && typeof b === "number")) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    // Two integers, one beyond 2^53.
    const x = BigInt(a), y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return fa ? -intVersusFloat(b, a as number) : intVersusFloat(a, b as number);
}

/**
 * Text under a collation: 0 BINARY (bytes), 1 NOCASE (ASCII letters folded
 * to lower case, byte by byte), 2 RTRIM (trailing spaces ignored, then
 * bytes); then the shorter first.
 */
function compareText(
  a: Uint8Array,
  ai: number,
  al: number,
  b: Uint8Array,
  bi: number,
  bl: number,
  coll: number,
): number {
  if (coll === 2) {
    while (al > 0 && a[ai + al - 1] === 0x20) al--;
    while (bl > 0 && b[bi + bl - 1] === 0x20) bl--;
  }
  const n = al < bl ? al : bl;
  for (let k = 0; k < n; k++) {
    let x = a[ai + k]!;
    let y = b[bi + k]!;
    if (x === y) continue;
    if (coll === 1) {
      if (x >= 0x41 && x <= 0x5a) x += 0x20;
      if (y >= 0x41 && y <= 0x5a) y += 0x20;
      if (x === y) continue;
    }
    return x < y ? -1 : 1;
  }
  return al < bl ? -1 : al > bl ? 1 : 0;
}

/** Two records' keys in a `WITHOUT ROWID` table's key order. */
function compareRecordKeys(x: KeyView, y: KeyView, order: KeyOrder): number {
  for (let i = 0; i < order.nKey; i++) {
    const ta = x.types[i]!;
    const tb = y.types[i]!;
    const ca = classOf(ta);
    const cb = classOf(tb);
    let c: number;
    if (ca !== cb) c = ca < cb ? -1 : 1;
    else if (ca === 0) c = 0;
    else if (ca === 1) {
      c = compareNumeric(
        numberAt(x.buf, ta, x.offs[i]!),
        ta === 7,
        numberAt(y.buf, tb, y.offs[i]!),
        tb === 7,
      );
    } else {
      c = compareText(
        x.buf,
        x.offs[i]!,
        x.offs[i + 1]! - x.offs[i]!,
        y.buf,
        y.offs[i]!,
        y.offs[i + 1]! - y.offs[i]!,
        ca === 2 ? order.coll[i]! : 0,
      );
    }
    if (c !== 0) return order.desc[i] ? -c : c;
  }
  return 0;
}

/**
 * Compare a rowid table identified by another primary key: rows are
 * merge-compared by rowid as usual (equal rowids with equal bytes are the
 * same row: a key is unique, so such rows are nowhere else); the others
 * are the same row when they have the same rowid and key, else they are
 * kept by key (the changed rows only) and matched by key at the end (a
 * row whose rowid changed, `REPLACE`). The lists are then put in key
 * order, as the snapshot lists them.
 */
function diffRekeyed(
  part: RegionDiff,
  cb: LeafCursor,
  ca: LeafCursor,
  planB: TablePlan | undefined,
  planA: TablePlan | undefined,
  comparer: RowComparer | null,
  masks: readonly MaskRule[] | undefined,
  stats: SqliteDiffStats,
  rows: RowKeeper,
  pkIndex: PkIndex | null,
): void {
  const id = part.region;
  const nb = planB?.columns.length ?? 0;
  const na = planA?.columns.length ?? 0;
  const tb = new Int32Array(nb + 1), ob = new Int32Array(nb + 1);
  const ta = new Int32Array(na + 1), oa = new Int32Array(na + 1);
  /** Parse the record at `buf[at, at + size)`: its field count (offsets into `buf`). */
  const parse = (
    buf: Uint8Array,
    at: number,
    size: number,
    plan: TablePlan,
    types: Int32Array,
    offs: Int32Array,
  ): number => {
    const n = plan.columns.length;
    const count = parseHeader(buf, at, size, n, types, offs);
    if (count < 0) throw new PageWalkError("record needs SQL");
    for (const c of plan.keyIdx) {
      // Several rows may have a NULL key (a rowid table allows it): the
      // snapshot then numbers them in an order this reader does not know.
      if (c >= count || types[c] === 0) {
        throw new PageWalkError(`table ${plan.name}: a NULL primary key`);
      }
    }
    return count;
  };
  const str = (
    buf: Uint8Array,
    plan: TablePlan,
    types: Int32Array,
    offs: Int32Array,
  ): string => keyStringOf(buf, types, offs, plan.keyIdx.length, plan.keyIdx);
  // The current record of a cursor: in its page when it does not overflow
  // (no copy), else its assembled payload.
  let buf: Uint8Array = cb.page;
  let at = 0;
  const record = (c: LeafCursor): void => {
    if (c.local === c.size) {
      buf = c.page;
      at = c.at;
    } else {
      buf = c.payload();
      at = 0;
    }
  };
  const sameKeyIdx = planB !== undefined && planA !== undefined &&
    planB.keyIdx.length === planA.keyIdx.length &&
    planB.keyIdx.every((c, i) => c === planA.keyIdx[i]);
  // Whether the changed rows, found in rowid order, are in key order too
  // (then they need no sort): each key against the last one's, as bytes.
  let changedInOrder = true;
  const last = planB === undefined ? null : new LastKey(planB.keyIdx);
  // The rowid of each changed row found in the merge (ascending); whether
  // some changed row was matched by key instead (its rowid changed).
  const changedRowids: number[] = [];
  let rematched = false;
  const compare = (
    pb: Uint8Array,
    pa: Uint8Array,
  ): RecordFieldChange[] => {
    if (
      comparer !== null && pb.length === pa.length &&
      sameBytes(pb, 0, pa, 0, pb.length)
    ) return NO_CHANGES;
    stats.rowsDecoded += 2;
    return comparer !== null
      ? comparer.compare(pb, 0, pb.length, pa, 0, pa.length, 0)
      : diffFields(
        rowValue(pb, 0, planB!, masks),
        rowValue(pa, 0, planA!, masks),
      );
  };
  const changed = (
    key: string,
    fields: RecordFieldChange[],
    pb: Uint8Array,
    atB: number,
    sizeB: number,
    pa: Uint8Array,
    atA: number,
    sizeA: number,
  ) => {
    part.changed.push({
      region: id,
      key,
      fields,
      lossy: anyLossy(fields),
    });
    if (rows.ok) {
      rows.keep(
        "was",
        key,
        () => rowValue(pb.subarray(atB, atB + sizeB), 0, planB!, masks),
      );
      rows.keep(
        "put",
        key,
        () => rowValue(pa.subarray(atA, atA + sizeA), 0, planA!, masks),
      );
    }
  };
  // Rows that differ, kept by key until the other side's is found.
  const keptB = new Map<string, Uint8Array>();
  const keptA = new Map<string, Uint8Array>();
  // A table on one side only: nothing to match, its keys are the answer.
  const oneSided = planB === undefined || planA === undefined;
  const seen = new Set<string>();
  const keep = (
    m: Map<string, Uint8Array>,
    key: string,
    b: Uint8Array,
    from: number,
    size: number,
  ) => {
    if (oneSided) {
      if (seen.has(key)) throw new PageWalkError("two rows with one key");
      seen.add(key);
      (m === keptB ? part.removed : part.added).push({ region: id, key });
      rows.keep(
        m === keptB ? "was" : "put",
        key,
        () =>
          rowValue(
            b.subarray(from, from + size),
            0,
            (m === keptB ? planB : planA)!,
            masks,
          ),
      );
      return;
    }
    if (m.has(key)) throw new PageWalkError("two rows with one key");
    // A copy: the page's memory is reused.
    m.set(key, b.slice(from, from + size));
  };
  let hb = cb.next();
  let ha = ca.next();
  while (hb || ha) {
    if (hb && ha && cb.rowid === ca.rowid) {
      if (
        comparer !== null && cb.size === ca.size && cb.local === cb.size &&
        ca.local === ca.size &&
        sameBytes(cb.page, cb.at, ca.page, ca.at, cb.size)
      ) {
        hb = cb.next();
        ha = ca.next();
        continue;
      }
      record(cb);
      const pb = buf, atB = at;
      record(ca);
      const pa = buf, atA = at;
      const countB = parse(pb, atB, cb.size, planB!, tb, ob);
      const countA = parse(pa, atA, ca.size, planA!, ta, oa);
      let same = sameKeyIdx;
      for (let i = 0; same && i < planB!.keyIdx.length; i++) {
        const c = planB!.keyIdx[i]!;
        const s = ob[c]!, e = ob[c + 1]!, s2 = oa[c]!;
        if (
          tb[c] !== ta[c] || e - s !== oa[c + 1]! - s2 ||
          !sameBytes(pb, s, pa, s2, e - s)
        ) {
          same = false;
          break;
        }
      }
      // Keys with other bytes may still be the same values (1 and 1.0).
      const kb = same ? null : str(pb, planB!, tb, ob);
      if (same || kb === str(pa, planA!, ta, oa)) {
        let fields: RecordFieldChange[];
        if (comparer === null) {
          stats.rowsDecoded += 2;
          fields = diffFields(
            rowValue(pb.subarray(atB, atB + cb.size), 0, planB!, masks),
            rowValue(pa.subarray(atA, atA + ca.size), 0, planA!, masks),
          );
        } else if (
          cb.size === ca.size && sameBytes(pb, atB, pa, atA, cb.size)
        ) fields = NO_CHANGES;
        else {
          stats.rowsDecoded += 2;
          fields = comparer.compareParsed(
            pb,
            countB,
            tb,
            ob,
            pa,
            countA,
            ta,
            oa,
            0,
          );
        }
        if (fields.length > 0) {
          if (changedInOrder && !deltaFaults.changedRowsInKeyOrder) {
            changedInOrder = last!.below(pb, tb, ob);
          }
          changedRowids.push(cb.rowid);
          changed(
            kb ?? str(pb, planB!, tb, ob),
            fields,
            pb,
            atB,
            cb.size,
            pa,
            atA,
            ca.size,
          );
        }
      } else {
        keep(keptB, kb!, pb, atB, cb.size);
        keep(keptA, str(pa, planA!, ta, oa), pa, atA, ca.size);
      }
      hb = cb.next();
      ha = ca.next();
    } else if (hb && (!ha || cb.rowid < ca.rowid)) {
      record(cb);
      parse(buf, at, cb.size, planB!, tb, ob);
      keep(keptB, str(buf, planB!, tb, ob), buf, at, cb.size);
      hb = cb.next();
    } else {
      record(ca);
      parse(buf, at, ca.size, planA!, ta, oa);
      keep(keptA, str(buf, planA!, ta, oa), buf, at, ca.size);
      ha = ca.next();
    }
  }
  for (const [key, pb] of keptB) {
    const pa = keptA.get(key);
    if (pa === undefined) {
      part.removed.push({ region: id, key });
      rows.keep("was", key, () => rowValue(pb, 0, planB!, masks));
    } else {
      keptA.delete(key);
      const fields = compare(pb, pa);
      if (fields.length > 0) {
        changedInOrder = false;
        rematched = true;
        changed(key, fields, pb, 0, pb.length, pa, 0, pa.length);
      }
    }
  }
  for (const [key, pa] of keptA) {
    part.added.push({ region: id, key });
    rows.keep("put", key, () => rowValue(pa, 0, planA!, masks));
  }
  rows.done(part, true);
  stats.leavesRead += cb.leavesRead + ca.leavesRead;
  // Found in rowid order; a snapshot lists them in key order.
  part.added = sortByKey(part.added);
  part.removed = sortByKey(part.removed);
  if (!changedInOrder && !deltaFaults.changedRowsInKeyOrder) {
    // Many changed rows out of key order: the primary-key index lists the
    // rowids in key order, in time linear in the table's rows rather than
    // a sort's c log c comparisons (random keys, every row changed).
    const c = part.changed.length;
    const rowsEstimate = ca.leavesRead > 0
      ? (ca.cellsRead / ca.leavesRead) * ca.leafCount
      : Infinity;
    let byIndex: RecordChange[] | null = null;
    if (
      pkIndex !== null && !rematched && changedRowids.length === c &&
      c > 1 &&
      (deltaTuning.indexOrderAlways || c * Math.log2(c) >= rowsEstimate)
    ) byIndex = inIndexOrder(part.changed, changedRowids, pkIndex);
    if (byIndex !== null) stats.orderedByIndex++;
    part.changed = byIndex ?? sortByKey(part.changed);
  }
}

/** Where a keyed rowid table's primary-key index is, on the after side. */
interface PkIndex {
  src: PageSource;
  g: Geometry;
  root: number;
  /** Key columns (the index's records are these, then the rowid). */
  nKey: number;
}

/**
 * `xs` (the changed rows of rowids `rowids`, ascending) in the order of the
 * primary-key index: its records read in key order (leaves and interior
 * cells), each checked to be above the one before (so the order is the
 * snapshot's even where the index were not), each rowid looked up among
 * the changed ones. Null when the index is not as expected.
 */
function inIndexOrder<T>(
  xs: readonly T[],
  rowids: readonly number[],
  ix: PkIndex,
): T[] | null {
  const { src, g, nKey } = ix;
  const out: T[] = [];
  const last = new LastKey(Array.from({ length: nKey }, (_, i) => i));
  const types = new Int32Array(nKey + 2);
  const offs = new Int32Array(nKey + 2);
  /** Take the record of the cell at `p`; whether it overflowed (pages were read). */
  const record = (page: Uint8Array, p: number): boolean => {
    let size = page[p]!;
    if (size < 0x80) p++;
    else {
      size = varint(page, p);
      p = varintEnd;
    }
    const local = localSize(g, size, g.maxLocalIndex);
    if (p + local > page.length) {
      throw new PageWalkError("cell past the page end");
    }
    let buf = page;
    let at = p;
    if (local < size) {
      buf = assemble(src, g, page, p, size, local);
      at = 0;
    }
    const count = parseHeader(buf, at, size, nKey + 1, types, offs);
    const t = types[nKey]!;
    if (count !== nKey + 1 || !((t >= 1 && t <= 6) || t === 8 || t === 9)) {
      throw new PageWalkError("unexpected index record");
    }
    if (!last.below(buf, types, offs)) {
      throw new PageWalkError("index keys not in order");
    }
    const rowid = numberAt(buf, t, offs[nKey]!);
    if (typeof rowid !== "number") return local < size;
    // Binary search among the changed rowids.
    let lo = 0, hi = rowids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = rowids[mid]!;
      if (r === rowid) {
        out.push(xs[mid]!);
        break;
      }
      if (r < rowid) lo = mid + 1;
      else hi = mid - 1;
    }
    return local < size;
  };
  const visit = (pgno: number, depth: number): void => {
    if (depth > 64 || pgno < 1 || pgno > src.pageCount) {
      throw new PageWalkError(`bad page ${pgno}`);
    }
    let page = src.page(pgno);
    const h = hdrOf(pgno);
    const type = page[h];
    const cells = u16(page, h + 3);
    if (type === 0x0a) {
      for (let i = 0; i < cells; i++) {
        if (record(page, u16(page, h + 8 + 2 * i))) page = src.page(pgno);
      }
      return;
    }
    if (type !== 0x02) throw new PageWalkError(`page ${pgno} is no index page`);
    for (let i = 0; i < cells; i++) {
      const ptr = u16(page, h + 12 + 2 * i);
      visit(u32(page, ptr), depth + 1);
      // Reading the subtree may have reused this page's memory.
      page = src.page(pgno);
      if (record(page, ptr + 4)) page = src.page(pgno);
    }
    visit(u32(page, h + 8), depth + 1);
  };
  try {
    visit(ix.root, 0);
  } catch (e) {
    if (e instanceof PageWalkError) return null;
    throw e;
  }
  return out.length === xs.length ? out : null;
}

/**
 * The key of the last changed row of a rowid table identified by another
 * primary key (a copy of its key fields), to tell whether the next one is
 * above it in BINARY order (the snapshot's order of key values).
 */
class LastKey {
  #keyIdx: readonly number[];
  #buf = new Uint8Array(64);
  #types: Int32Array;
  #start: Int32Array;
  #end: Int32Array;
  #set = false;
  constructor(keyIdx: readonly number[]) {
    this.#keyIdx = keyIdx;
    this.#types = new Int32Array(keyIdx.length);
    this.#start = new Int32Array(keyIdx.length);
    this.#end = new Int32Array(keyIdx.length);
  }

  /**
   * Whether the key of the record in `buf` (serial types and offsets as
   * `parseHeader` gives them) is above the last one; it is the last one
   * then.
   */
  below(buf: Uint8Array, types: Int32Array, offs: Int32Array): boolean {
    const k = this.#keyIdx;
    if (this.#set) {
      let c = 0;
      for (let i = 0; i < k.length && c === 0; i++) {
        const f = k[i]!;
        const tx = this.#types[i]!;
        const ty = types[f]!;
        const cx = classOf(tx);
        const cy = classOf(ty);
        if (cx !== cy) c = cx < cy ? -1 : 1;
        else if (cx === 0) c = 0;
        else if (cx === 1) {
          c = compareNumeric(
            numberAt(this.#buf, tx, this.#start[i]!),
            tx === 7,
            numberAt(buf, ty, offs[f]!),
            ty === 7,
          );
        } else {
          c = compareText(
            this.#buf,
            this.#start[i]!,
            this.#end[i]! - this.#start[i]!,
            buf,
            offs[f]!,
            offs[f + 1]! - offs[f]!,
            0,
          );
        }
      }
      if (c >= 0) return false;
    }
    let n = 0;
    for (const f of k) n += offs[f + 1]! - offs[f]!;
    if (n > this.#buf.length) this.#buf = new Uint8Array(n * 2);
    let p = 0;
    for (let i = 0; i < k.length; i++) {
      const f = k[i]!;
      const s = offs[f]!, e = offs[f + 1]!;
      this.#buf.set(buf.subarray(s, e), p);
      this.#types[i] = types[f]!;
      this.#start[i] = p;
      p += e - s;
      this.#end[i] = p;
    }
    this.#set = true;
    return true;
  }
}

/** Records sorted by key as the snapshot orders them (each key parsed once). */
export function sortByKey<T extends { key: string }>(xs: T[]): T[] {
  if (xs.length < 2) return xs;
  const order = Array.from(xs, (_, i) => i);
  const texts = plainTextKeys(xs);
  if (texts !== null) {
    // One ASCII text each: code point order is the strings' own order.
    order.sort((i, j) => {
      const x = texts[i]!, y = texts[j]!;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    return order.map((i) => xs[i]!);
  }
  const ints = integerKeys(xs);
  if (ints !== null) {
    const k = ints.length / xs.length;
    order.sort((i, j) => {
      for (let c = 0; c < k; c++) {
        const x = ints[i * k + c]!, y = ints[j * k + c]!;
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    });
    return order.map((i) => xs[i]!);
  }
  const vals = xs.map((x) => JSON.parse(x.key) as unknown[]);
  order.sort((i, j) => compareKeyVals(vals[i]!, vals[j]!));
  return order.map((i) => xs[i]!);
}

/**
 * The texts of keys that are each one text written as it stands
 * (`["…"]`, printable ASCII without `"` or `\\`), or null when any other.
 */
function plainTextKeys(xs: readonly { key: string }[]): string[] | null {
  const out: string[] = new Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const key = xs[i]!.key;
    const n = key.length;
    if (
      n < 4 || key.charCodeAt(0) !== 0x5b || key.charCodeAt(1) !== 0x22 ||
      key.charCodeAt(n - 2) !== 0x22 || key.charCodeAt(n - 1) !== 0x5d
    ) return null;
    for (let j = 2; j < n - 2; j++) {
      const c = key.charCodeAt(j);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return null;
    }
    out[i] = key.slice(2, n - 2);
  }
  return out;
}

/**
 * The values of keys that are all integers of at most 15 digits, as many
 * in each key (`[1,-2]`), flat (key `i`'s at `i * k` on); or null when any
 * other.
 */
function integerKeys(xs: readonly { key: string }[]): Float64Array | null {
  const first = xs[0]!.key;
  let k = 1;
  for (let j = 0; j < first.length; j++) if (first[j] === ",") k++;
  const out = new Float64Array(xs.length * k);
  for (let i = 0; i < xs.length; i++) {
    const key = xs[i]!.key;
    const n = key.length;
    if (key.charCodeAt(0) !== 0x5b || key.charCodeAt(n - 1) !== 0x5d) {
      return null;
    }
    let p = 1;
    for (let c = 0; c < k; c++) {
      if (c > 0) {
        if (key.charCodeAt(p) !== 0x2c) return null;
        p++;
      }
      const neg = key.charCodeAt(p) === 0x2d;
      if (neg) p++;
      const start = p;
      let v = 0;
      for (; p < n - 1; p++) {
        const d = key.charCodeAt(p) - 0x30;
        if (d < 0 || d > 9) break;
        v = v * 10 + d;
      }
      const digits = p - start;
      // A number as JSON writes it: no leading zero, at most 15 digits.
      if (
        digits === 0 || digits > 15 ||
        (digits > 1 && key.charCodeAt(start) === 0x30)
      ) return null;
      out[i * k + c] = neg ? -v : v;
    }
    if (p !== n - 1) return null;
  }
  return out;
}

/** Whether two records' key fields have the same serial types and bytes. */
function sameKeyBytes(x: KeyView, y: KeyView, nKey: number): boolean {
  for (let i = 0; i < nKey; i++) {
    if (x.types[i] !== y.types[i]) return false;
  }
  const xs = x.offs[0]!, ys = y.offs[0]!;
  const n = x.offs[nKey]! - xs;
  return n === y.offs[nKey]! - ys && sameBytes(x.buf, xs, y.buf, ys, n);
}

function sameKeyOrder(x: KeyOrder, y: KeyOrder): boolean {
  return x.nKey === y.nKey &&
    x.coll.every((c, i) => c === y.coll[i] && x.desc[i] === y.desc[i]);
}

/**
 * Merge-compare a `WITHOUT ROWID` table's records on both sides in key
 * order: records at the same place with the same bytes are equal; at the
 * same place (keys equal under their collations) with the same key values
 * they are the same row, compared field by field; with other key values
 * (NOCASE 'a' and 'A') one row was removed and another added.
 */
function diffKeyed(
  part: RegionDiff,
  cb: KeyCursor,
  ca: KeyCursor,
  samePlan: boolean,
  masks: readonly MaskRule[] | undefined,
  stats: SqliteDiffStats,
  rows: RowKeeper,
): void {
  const id = part.region;
  const order = cb.order ?? ca.order!;
  const was = (key: string) =>
    rows.keep(
      "was",
      key,
      () => rowValue(cb.payload(), 0, cb.plan!, masks, cb.order!.colField),
    );
  const put = (key: string) =>
    rows.keep(
      "put",
      key,
      () => rowValue(ca.payload(), 0, ca.plan!, masks, ca.order!.colField),
    );
  if (cb.order && ca.order) {
    if (
      !sameKeyOrder(cb.order, ca.order) ||
      cb.plan!.identity.join("\0") !== ca.plan!.identity.join("\0")
    ) {
      throw new PageWalkError(`table ${cb.plan!.name}: its key changed`);
    }
  }
  const comparer = samePlan && flatOrder(cb.plan!.columns)
    ? new RowComparer(cb.plan!, masks, cb.order!.colField)
    : null;
  let hb = cb.next();
  let ha = ca.next();
  while (hb && ha) {
    const c = compareRecordKeys(cb.key, ca.key, order);
    if (c === 0) {
      if (
        samePlan && cb.size === ca.size && cb.local === cb.size &&
        ca.local === ca.size &&
        sameBytes(cb.page, cb.at, ca.page, ca.at, cb.size)
      ) {
        hb = cb.next();
        ha = ca.next();
        continue;
      }
      // Keys with the same serial types and bytes are the same values;
      // others may still be (an integer and an equal real).
      let kb: string | null = null;
      let ka: string | null = null;
      if (
        !sameKeyBytes(cb.key, ca.key, order.nKey) &&
        !deltaFaults.collationEqualIsSameRow
      ) {
        kb = cb.keyString();
        ka = ca.keyString();
      }
      if (kb !== ka) {
        part.removed.push({ region: id, key: kb! });
        part.added.push({ region: id, key: ka! });
        was(kb!);
        put(ka!);
      } else {
        const pb = cb.payload();
        const pa = ca.payload();
        let fields: RecordFieldChange[] = NO_CHANGES;
        if (
          !samePlan || pb.length !== pa.length ||
          !sameBytes(pb, 0, pa, 0, pb.length)
        ) {
          stats.rowsDecoded += 2;
          if (comparer !== null) {
            fields = comparer.compare(pb, 0, pb.length, pa, 0, pa.length, 0);
          } else {
            fields = diffFields(
              rowValue(pb, 0, cb.plan!, masks, cb.order!.colField),
              rowValue(pa, 0, ca.plan!, masks, ca.order!.colField),
            );
          }
        }
        if (fields.length > 0) {
          const key = kb ?? cb.keyString();
          part.changed.push({
            region: id,
            key,
            fields,
            lossy: anyLossy(fields),
          });
          rows.keep(
            "was",
            key,
            () => rowValue(pb, 0, cb.plan!, masks, cb.order!.colField),
          );
          rows.keep(
            "put",
            key,
            () => rowValue(pa, 0, ca.plan!, masks, ca.order!.colField),
          );
        }
      }
      hb = cb.next();
      ha = ca.next();
    } else if (c < 0) {
      const key = cb.keyString();
      part.removed.push({ region: id, key });
      was(key);
      hb = cb.next();
    } else {
      const key = ca.keyString();
      part.added.push({ region: id, key });
      put(key);
      ha = ca.next();
    }
  }
  for (; hb; hb = cb.next()) {
    const key = cb.keyString();
    part.removed.push({ region: id, key });
    was(key);
  }
  for (; ha; ha = ca.next()) {
    const key = ca.keyString();
    part.added.push({ region: id, key });
    put(key);
  }
  rows.done(part, !order.binaryAsc);
  stats.leavesRead += cb.leavesRead + ca.leavesRead;
  if (!order.binaryAsc) {
    // Found in the table's key order; a snapshot lists keys in BINARY
    // ascending order.
    part.added = sortByKey(part.added);
    part.removed = sortByKey(part.removed);
    part.changed = sortByKey(part.changed);
  }
}

/**
 * Decodes rows of one table as the snapshot reader builds them (masks
 * applied), reusing its header arrays and the view of the
 * page memory the payloads lie in: a stream decodes millions of rows.
 */
export class RowDecoder {
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

/** A row's value object, as the snapshot reader builds it (masks applied). */
export function rowValue(
  payload: Uint8Array,
  rowid: number,
  plan: TablePlan,
  masks: readonly MaskRule[] | undefined,
  colField: Int32Array | null = null,
): Record<string, unknown> {
  return new RowDecoder(plan, masks, colField).decode(payload, rowid);
}

/** Whether `for … in` over a row object visits its columns in declaration order. */
function flatOrder(columns: readonly string[]): boolean {
  return !columns.some((c) =>
    c === "__proto__" ||
    (/^(0|[1-9][0-9]*)$/.test(c) && Number(c) < 2 ** 32 - 1)
  ) && columns.length <= 200;
}

/**
 * Compares two versions of a row of one table (same schema) field by
 * field from their record bytes: a field whose serial type and bytes are
 * equal is equal without being decoded; the others are decoded, masked and
 * compared as values. Gives the same field changes as `diffFields` of the
 * two row objects.
 */
class RowComparer {
  #plan: TablePlan;
  #ph: (string | null)[];
  #tb: Int32Array;
  #ob: Int32Array;
  #ta: Int32Array;
  #oa: Int32Array;
  /** Per column, its record field (a `WITHOUT ROWID` table's records hold the key first). */
  #cf: Int32Array;
  constructor(
    plan: TablePlan,
    masks: readonly MaskRule[] | undefined,
    colField: Int32Array | null = null,
  ) {
    this.#plan = plan;
    this.#cf = colField ??
      Int32Array.from(plan.columns, (_, i) => i);
    const n = plan.columns.length;
    this.#ph = plan.columns.map((c) => {
      let ph: string | null = null;
      for (const m of masks ?? []) if (m.column === c) ph = `<${m.kind}>`;
      return ph;
    });
    this.#tb = new Int32Array(n + 1);
    this.#ob = new Int32Array(n + 1);
    this.#ta = new Int32Array(n + 1);
    this.#oa = new Int32Array(n + 1);
  }

  #value(
    buf: Uint8Array,
    view: DataView | null,
    i: number,
    count: number,
    types: Int32Array,
    offs: Int32Array,
    rowid: number,
  ): unknown {
    const plan = this.#plan;
    const f = this.#cf[i]!;
    let v: unknown;
    if (i === plan.aliasIdx) {
      if (f < count && types[f] !== 0) {
        throw new PageWalkError("stored INTEGER PRIMARY KEY value");
      }
      v = rowid;
    } else if (f >= count) {
      if (plan.hasDefault[i]) {
        throw new PageWalkError("short record with default");
      }
      v = null;
    } else v = valueAt(buf, view, types[f]!, offs[f]!);
    const ph = this.#ph[i];
    return ph != null && v !== null ? ph : v;
  }

  /** The field changes between the two records (empty when equal). */
  compare(
    pb: Uint8Array,
    atB: number,
    sizeB: number,
    pa: Uint8Array,
    atA: number,
    sizeA: number,
    rowid: number,
  ): RecordFieldChange[] {
    const n = this.#plan.columns.length;
    const tb = this.#tb, ob = this.#ob, ta = this.#ta, oa = this.#oa;
    const cb = parseHeader(pb, atB, sizeB, n, tb, ob);
    const ca = parseHeader(pa, atA, sizeA, n, ta, oa);
    if (cb < 0 || ca < 0) throw new PageWalkError("record needs SQL");
    return this.compareParsed(pb, cb, tb, ob, pa, ca, ta, oa, rowid);
  }

  /**
   * {@linkcode compare} of two records whose headers are parsed already
   * (`cb`/`ca` fields, serial types and offsets as `parseHeader` gives).
   */
  compareParsed(
    pb: Uint8Array,
    cb: number,
    tb: Int32Array,
    ob: Int32Array,
    pa: Uint8Array,
    ca: number,
    ta: Int32Array,
    oa: Int32Array,
    rowid: number,
  ): RecordFieldChange[] {
    const plan = this.#plan;
    const n = plan.columns.length;
    let out: RecordFieldChange[] | null = null;
    const cf = this.#cf;
    for (let i = 0; i < n; i++) {
      const f = cf[i]!;
      if (f < cb && f < ca && tb[f] === ta[f] && i !== plan.aliasIdx) {
        const s = ob[f]!, e = ob[f + 1]!, s2 = oa[f]!;
        if (sameBytes(pb, s, pa, s2, e - s)) continue;
      } else if (f >= cb && f >= ca && i !== plan.aliasIdx) continue;
      const x = this.#value(pb, null, i, cb, tb, ob, rowid);
      const y = this.#value(pa, null, i, ca, ta, oa, rowid);
      if (x === y || valuesEqual(x, y)) continue;
      (out ??= []).push({
        field: plan.columns[i]!,
        before: x,
        after: y,
        lossy: x !== null,
      });
    }
    return out ?? NO_CHANGES;
  }
}

const NO_CHANGES: RecordFieldChange[] = [];

function anyLossy(fields: readonly RecordFieldChange[]): boolean {
  for (let i = 0; i < fields.length; i++) if (fields[i]!.lossy) return true;
  return false;
}

function sameBytes(
  a: Uint8Array,
  ai: number,
  b: Uint8Array,
  bi: number,
  n: number,
): boolean {
  for (let k = 0; k < n; k++) if (a[ai + k] !== b[bi + k]) return false;
  return true;
}

/** Whether an index page (leaf or interior) has a cell spilling to overflow pages. */
function indexPageOverflows(
  page: Uint8Array,
  pgno: number,
  g: Geometry,
): boolean {
  const h = hdrOf(pgno);
  const type = page[h];
  if (type !== 0x0a && type !== 0x02) return true;
  const cells = u16(page, h + 3);
  const ptrs = h + (type === 0x02 ? 12 : 8);
  const skip = type === 0x02 ? 4 : 0;
  for (let c = 0; c < cells; c++) {
    if (varint(page, u16(page, ptrs + 2 * c) + skip) > g.maxLocalIndex) {
      return true;
    }
  }
  return false;
}

/** Whether a table leaf page has a cell spilling to overflow pages. */
function leafOverflows(page: Uint8Array, pgno: number, g: Geometry): boolean {
  const h = hdrOf(pgno);
  if (page[h] !== 0x0d) return true;
  const cells = u16(page, h + 3);
  for (let c = 0; c < cells; c++) {
    if (varint(page, u16(page, h + 8 + 2 * c)) > g.maxLocal) return true;
  }
  return false;
}

/**
 * The sqlite regions of a delta between two databases (`before` may be
 * the seed), one {@linkcode RegionDiff} per table on either side, equal to
 * what `computeDelta` finds between the two normalized snapshots. Throws
 * {@linkcode PageWalkError} when full snapshots must be compared instead.
 */
export function diffSqlitePair(
  before: DiffSide | null,
  after: DiffSide | null,
  options: SqliteDiffOptions,
): {
  regions: RegionDiff[];
  stats: SqliteDiffStats;
  /** The before side's trees, for `beforeIndex` of a later comparison. */
  beforeIndex: TreeIndex | null;
} {
  const stats: SqliteDiffStats = {
    leavesSkipped: 0,
    leavesRead: 0,
    rowsDecoded: 0,
    treePagesRead: 0,
    orderedByIndex: 0,
  };
  const gB = before ? geometry(before.src) : null;
  const gA = after ? geometry(after.src) : null;
  const changed = options.changed;
  const differs = (pgno: number) =>
    changed === null || pgno >= changed.length || changed[pgno] !== 0;
  const same = (pgno: number) => !differs(pgno);
  // Walk every tree on both sides; the after side takes what it can from
  // the before side (pages with equal bytes have equal kinds and children).
  let wb: TreeIndex | null = null;
  if (before) {
    if (options.beforeIndex) wb = options.beforeIndex;
    else {
      const r = walkTrees(before);
      wb = r.index;
      stats.treePagesRead += r.pagesRead;
    }
  }
  let wa: TreeIndex | null = null;
  if (after) {
    const r = walkTrees(after, wb, same);
    wa = r.index;
    stats.treePagesRead += r.pagesRead;
  }
  // A changed page that is no table, index or freelist page on either
  // side may be an overflow page of an unchanged leaf: then leaves with
  // overflow cells are never skipped.
  let suspect = changed === null;
  if (!suspect && wb && wa) {
    const n = Math.max(wb.mark.length, wa.mark.length);
    for (let p = 1; p < n && !suspect; p++) {
      if (!differs(p)) continue;
      if ((wb.mark[p] ?? 0) === 0 && (wa.mark[p] ?? 0) === 0) suspect = true;
    }
  }
  const regions: RegionDiff[] = [];
  const byName = (side: DiffSide | null) =>
    new Map((side?.tables ?? []).map((t, i) => [t.name, { t, i }]));
  const tb = byName(before);
  const ta = byName(after);
  const names = [...new Set([...tb.keys(), ...ta.keys()])];
  for (const name of names) {
    const id = `${options.label}:${name}`;
    const part = emptyRegionDiff(id, options.categoryOf(name));
    const xb = tb.get(name);
    const xa = ta.get(name);
    part.structure = structureChange(
      id,
      xb?.t.plan.columns ?? null,
      xa?.t.plan.columns ?? null,
    );
    const masks = options.masks.get(name);
    const leavesB = xb ? wb!.leaves.get(name)! : [];
    const leavesA = xa ? wa!.leaves.get(name)! : [];
    const planB = xb?.t.plan;
    const planA = xa?.t.plan;
    const samePlan = planB !== undefined && planA !== undefined &&
      planB.sql === planA.sql && planB.select === planA.select;
    const keyed = (xb?.t.key ?? xa?.t.key ?? null) !== null;
    if (xb && xa && (xb.t.key === null) !== (xa.t.key === null)) {
      throw new PageWalkError(
        `table ${name} is WITHOUT ROWID on one side only`,
      );
    }
    // Leaves identical on both sides, of this table on both sides.
    let common: (pgno: number) => boolean = () => false;
    if (samePlan && changed !== null) {
      const tagB = xb!.i + 1;
      const tagA = xa!.i + 1;
      const markB = wb!.mark;
      const markA = wa!.mark;
      const srcA = after!.src;
      const verdict = new Map<number, boolean>();
      common = (pgno) => {
        if (markB[pgno] !== tagB || markA[pgno] !== tagA || differs(pgno)) {
          return false;
        }
        if (!suspect) return true;
        let v = verdict.get(pgno);
        if (v === undefined) {
          v = !(keyed ? indexPageOverflows : leafOverflows)(
            srcA.page(pgno),
            pgno,
            gA!,
          );
          verdict.set(pgno, v);
        }
        return v;
      };
      for (const p of leavesA) if (p > 0 && common(p)) stats.leavesSkipped++;
    }
    if (keyed) {
      diffKeyed(
        part,
        new KeyCursor(before?.src ?? emptySource, gB!, leavesB, common, xb),
        new KeyCursor(after?.src ?? emptySource, gA!, leavesA, common, xa),
        samePlan,
        masks,
        stats,
        new RowKeeper(options.keepRows === true),
      );
      regions.push(part);
      continue;
    }
    const comparer = samePlan && flatOrder(planB!.columns)
      ? new RowComparer(planB!, masks)
      : null;
    const cb = new LeafCursor(before?.src ?? emptySource, gB!, leavesB, common);
    const ca = new LeafCursor(after?.src ?? emptySource, gA!, leavesA, common);
    const keyColsB = xb?.t.keyCols ?? null;
    const keyColsA = xa?.t.keyCols ?? null;
    if (keyColsB !== null || keyColsA !== null) {
      if (
        xb && xa && (keyColsB === null || keyColsA === null ||
          planB!.identity.join("\0") !== planA!.identity.join("\0"))
      ) {
        throw new PageWalkError(`table ${name}: its key changed`);
      }
      const ixName = xa?.t.pkIndex ?? null;
      const ixRow = ixName === null
        ? undefined
        : after!.schema.find((r) => r.type === "index" && r.name === ixName);
      diffRekeyed(
        part,
        cb,
        ca,
        planB,
        planA,
        comparer,
        masks,
        stats,
        new RowKeeper(options.keepRows === true),
        ixRow === undefined || ixRow.rootpage < 1 ? null : {
          src: after!.src,
          g: gA!,
          root: ixRow.rootpage,
          nKey: planA!.keyIdx.length,
        },
      );
      regions.push(part);
      continue;
    }
    // Added rows' values (masked, as a snapshot holds them), so a session
    // can be rebuilt from its seed; the delta names them by key only. A row
    // this reader cannot decode leaves them unknown (no fallback for it).
    let addedValues: Map<string, Record<string, unknown>> | undefined =
      planA === undefined ? undefined : new Map();
    const rows = new RowKeeper(options.keepRows === true);
    const removeRow = () => {
      const key = "[" + cb.rowid + "]";
      part.removed.push({ region: id, key });
      rows.keep(
        "was",
        key,
        () => rowValue(cb.payload(), cb.rowid, planB!, masks),
      );
    };
    const addRow = () => {
      const key = "[" + ca.rowid + "]";
      part.added.push({ region: id, key });
      // Decoded once for both the kept rows and addedValues.
      let value: Record<string, unknown> | undefined;
      const decoded = () =>
        value ??= rowValue(ca.payload(), ca.rowid, planA!, masks);
      rows.keep("put", key, decoded);
      if (addedValues === undefined) return;
      try {
        addedValues.set(key, decoded());
      } catch {
        addedValues = undefined;
      }
    };
    let hb = cb.next();
    let ha = ca.next();
    while (hb && ha) {
      if (cb.rowid === ca.rowid) {
        let fields: RecordFieldChange[];
        if (comparer !== null) {
          if (
            cb.size === ca.size && cb.local === cb.size &&
            sameBytes(cb.page, cb.at, ca.page, ca.at, cb.size)
          ) {
            fields = NO_CHANGES;
          } else if (cb.local === cb.size && ca.local === ca.size) {
            stats.rowsDecoded += 2;
            fields = comparer.compare(
              cb.page,
              cb.at,
              cb.size,
              ca.page,
              ca.at,
              ca.size,
              cb.rowid,
            );
          } else {
            const pb = cb.payload();
            const pa = ca.payload();
            fields =
              pb.length === pa.length && sameBytes(pb, 0, pa, 0, pb.length)
                ? NO_CHANGES
                : comparer.compare(
                  pb,
                  0,
                  pb.length,
                  pa,
                  0,
                  pa.length,
                  cb.rowid,
                );
            if (fields !== NO_CHANGES) stats.rowsDecoded += 2;
          }
        } else {
          stats.rowsDecoded += 2;
          const vb = rowValue(cb.payload(), cb.rowid, planB!, masks);
          const va = rowValue(ca.payload(), ca.rowid, planA!, masks);
          fields = diffFields(vb, va);
        }
        if (fields.length > 0) {
          const key = "[" + cb.rowid + "]";
          part.changed.push({
            region: id,
            key,
            fields,
            lossy: anyLossy(fields),
          });
          rows.keep(
            "was",
            key,
            () => rowValue(cb.payload(), cb.rowid, planB!, masks),
          );
          rows.keep(
            "put",
            key,
            () => rowValue(ca.payload(), ca.rowid, planA!, masks),
          );
        }
        hb = cb.next();
        ha = ca.next();
      } else if (cb.rowid < ca.rowid) {
        removeRow();
        hb = cb.next();
      } else {
        addRow();
        ha = ca.next();
      }
    }
    for (; hb; hb = cb.next()) removeRow();
    for (; ha; ha = ca.next()) addRow();
    rows.done(part, false);
    if (addedValues !== undefined) part.addedValues = addedValues;
    stats.leavesRead += cb.leavesRead + ca.leavesRead;
    regions.push(part);
  }
  return { regions, stats, beforeIndex: wb };
}

const emptySource: PageSource = {
  pageSize: 4096,
  pageCount: 0,
  page(pgno: number): Uint8Array {
    throw new PageWalkError(`bad page ${pgno}`);
  },
};
