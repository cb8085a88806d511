/**
 * The b-tree walker of the page reader: every tree of a database walked
 * through its interior pages (reusing what a walk of another database
 * knows of byte-identical pages), a table's leaves in key order, the
 * cursor over a rowid table's cells, and `sqlite_schema` and SQLite's
 * internal tables read from their pages. Pure over a
 * {@linkcode PageSource}.
 *
 * @module
 */
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
import { PageWalkError } from "./page_walk_error.ts";
import type { PlannedTable, SchemaRow } from "./plan.ts";

/** One side of a comparison or a stream: a database and its planned tables. */
export interface DiffSide {
  src: PageSource;
  /** Its sqlite_schema (from {@linkcode readSchema}). */
  schema: SchemaRow[];
  /** Its tables (from `planSchema`). */
  tables: PlannedTable[];
}

/** Cells of one page at most (a cell takes at least 4 bytes and its pointer 2). */
export const CELLS_PER_PAGE = 65536;

/** Cell `cell` of interior page `pgno`, as a negative number in a leaf list. */
function cellRef(pgno: number, cell: number): number {
  return -(pgno * CELLS_PER_PAGE + cell);
}

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
  readonly #v = new VarintReader();
  leavesRead = 0;
  /** Pages loaded into `page` (the memory behind it may change at each). */
  pageLoads = 0;
  /** Cells read (rows of the leaves read). */
  cellsRead = 0;

  /** `after`: every rowid must be above it (the last one of leaves read before). */
  constructor(
    src: PageSource,
    g: Geometry,
    leaves: number[],
    skip: (pgno: number) => boolean,
    after = -Infinity,
  ) {
    this.#src = src;
    this.#g = g;
    this.#leaves = leaves;
    this.#skip = skip;
    this.#last = after;
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
      this.pageLoads++;
      this.#h = hdrOf(pgno);
      if (this.page[this.#h] !== 0x0d) {
        throw new PageWalkError(`page ${pgno} is not a table leaf`);
      }
      this.#cells = u16(this.page, this.#h + 3);
      this.#ci = 0;
    }
    const page = this.page;
    const v = this.#v;
    let p = u16(page, this.#h + 8 + 2 * this.#ci++);
    let size = page[p]!;
    if (size < 0x80) p++;
    else {
      size = v.read(page, p);
      p = v.end;
    }
    let rowid = page[p]!;
    if (rowid < 0x80) p++;
    else {
      rowid = v.read(page, p);
      p = v.end;
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
    this.pageLoads++;
    return out;
  }
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
  const v = new VarintReader();
  const h = new RecordHeader(columns);
  for (const pgno of new Walker(src, null, () => false).tree(root, 1, true)) {
    // A copy: following an overflow chain reads other pages.
    const page = src.page(pgno).slice();
    const hd = hdrOf(pgno);
    if (page[hd] !== 0x0d) {
      throw new PageWalkError(`page ${pgno} is not a table leaf`);
    }
    const cells = u16(page, hd + 3);
    for (let c = 0; c < cells; c++) {
      const size = v.read(page, u16(page, hd + 8 + 2 * c));
      const rowid = v.read(page, v.end);
      const p = v.end;
      const local = localSize(g, size);
      const buf = local === size
        ? page.subarray(p, p + size)
        : assemble(src, g, page, p, size, local);
      const n = h.parse(buf, 0, size);
      if (n < 0) throw new PageWalkError(`unreadable ${what} row`);
      const fields: unknown[] = new Array(columns).fill(null);
      for (let i = 0; i < n; i++) {
        fields[i] = valueAt(buf, null, h.types[i]!, h.offs[i]!);
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

/** Whether a table leaf page has a cell spilling to overflow pages. */
export function leafOverflows(
  page: Uint8Array,
  pgno: number,
  g: Geometry,
): boolean {
  const h = hdrOf(pgno);
  if (page[h] !== 0x0d) return true;
  const cells = u16(page, h + 3);
  const v = new VarintReader();
  for (let c = 0; c < cells; c++) {
    if (v.read(page, u16(page, h + 8 + 2 * c)) > g.maxLocal) return true;
  }
  return false;
}
