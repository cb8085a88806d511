/**
 * The sqlite adapter: a database image (plus its `-wal`) turned into typed,
 * sorted records, one region per table, using SQLite compiled to WASM
 * (`npm:sql.js`), so no native library is needed and the observed file is
 * never opened by a native client (which would checkpoint the WAL).
 *
 * Rows are keyed by their primary key columns, else by rowid; SQL does the
 * sorting (`ORDER BY` with BINARY collation, matching `compareKeys`).
 * Values keep their SQLite type: integers and reals as numbers (integers
 * beyond 2^53 as `{"$int": "…"}`), text as strings, blobs as
 * `{"$bytes": base64}`, NULL as null.
 *
 * Internal tables (`sqlite_sequence`, `sqlite_stat1`, …) are skipped unless
 * named in `include`; virtual tables are skipped (their shadow tables are
 * ordinary tables and are observed).
 *
 * @module
 */
import initSqlJs from "sql.js";
import { Buffer } from "node:buffer";
import { bytesToBase64, dedupeSorted } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import { imagePageSize, mergeWal } from "./wal.ts";

/** The part of sql.js this adapter uses. */
interface SqlStatement {
  step(): boolean;
  get(params?: unknown, config?: { useBigInt?: boolean }): unknown[];
  free(): void;
}
interface SqlDatabase {
  prepare(sql: string): SqlStatement;
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  export(): Uint8Array;
  close(): void;
}
/** The sql.js module. */
export interface SqlEngine {
  Database: new (data?: Uint8Array) => SqlDatabase;
}

let engine: Promise<SqlEngine> | null = null;

/**
 * Load the WASM SQLite engine once per process. Requires `--allow-read` on
 * the npm cache (the `.wasm` file) unless given the wasm bytes.
 */
export function loadSqlEngine(
  options: { wasmBinary?: Uint8Array } = {},
): Promise<SqlEngine> {
  if (engine === null) {
    const init = initSqlJs as unknown as (
      o?: { wasmBinary?: ArrayBuffer },
    ) => Promise<SqlEngine>;
    const p = options.wasmBinary
      ? init({ wasmBinary: options.wasmBinary.slice().buffer })
      : init();
    engine = p.catch((e) => {
      engine = null;
      throw e;
    });
  }
  return engine;
}

/** One table's records. */
export interface SqliteTable {
  name: string;
  /** Column names in declaration order. */
  columns: string[];
  /** How rows are identified: primary key column names, or ["rowid"]. */
  identity: string[];
  records: StateRecord[];
}

/** What the adapter saw in one database. */
export interface SqliteObservation {
  tables: SqliteTable[];
  problems: string[];
}

/** Options of {@linkcode readSqlite}. */
export interface ReadSqliteOptions {
  /** The `-wal` file's bytes, when one exists. @default null */
  wal?: Uint8Array | null;
  /** Internal `sqlite_*` tables to observe anyway. @default [] */
  include?: readonly string[];
  /** Label used in problem messages. @default "database" */
  label?: string;
  /**
   * Decoded leaf pages to reuse (records of byte-identical pages are shared
   * between snapshots); null reads every row. With a cache, `image` (and
   * `wal`) must not be modified afterwards: pages are kept by reference.
   * @default the process-wide {@linkcode pageCache}
   */
  cache?: PageCache | null;
}

function quoteIdent(s: string): string {
  return '"' + s.replaceAll('"', '""') + '"';
}

function encodeValue(v: unknown): unknown {
  if (v === null || typeof v === "string") return v;
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : { $real: String(v) };
  }
  if (typeof v === "bigint") {
    return Number.isSafeInteger(Number(v)) ? Number(v) : { $int: v.toString() };
  }
  if (v instanceof Uint8Array) return { $bytes: bytesToBase64(v) };
  return v;
}

/**
 * Read every table of a database image (with its WAL merged) into sorted
 * records. Never throws for a bad image: problems are reported instead.
 *
 * @example
 * ```ts
 * const SQL = await loadSqlEngine();
 * const { tables } = readSqlite(SQL, await Deno.readFile("state.db"));
 * ```
 */
export function readSqlite(
  SQL: SqlEngine,
  image: Uint8Array,
  options: ReadSqliteOptions = {},
): SqliteObservation {
  const label = options.label ?? "database";
  const problems: string[] = [];
  let bytes = image;
  if (options.wal && options.wal.length > 0) {
    const m = mergeWal(image, options.wal);
    bytes = m.image;
    for (const p of m.problems) problems.push(`${label}: ${p}`);
    if (m.framesUncommitted > 0) {
      problems.push(
        `${label}: ${m.framesUncommitted} WAL frame(s) after the last commit ignored (uncommitted transaction)`,
      );
    }
  } else if (image.length >= 100 && (image[18] === 2 || image[19] === 2)) {
    bytes = mergeWal(image, new Uint8Array()).image;
  }
  if (bytes.length === 0) return { tables: [], problems };
  let db: SqlDatabase;
  try {
    db = new SQL.Database(bytes);
  } catch (e) {
    problems.push(`${label}: cannot open: ${(e as Error).message}`);
    return { tables: [], problems };
  }
  const tables: SqliteTable[] = [];
  try {
    const include = new Set(options.include ?? []);
    let list: unknown[][];
    try {
      list = db.exec(
        "SELECT name, sql, rootpage FROM sqlite_schema WHERE type = 'table' ORDER BY name",
      )[0]?.values ?? [];
    } catch (e) {
      problems.push(
        `${label}: not a readable SQLite database: ${(e as Error).message}`,
      );
      return { tables: [], problems };
    }
    const cache = options.cache === undefined ? pageCache : options.cache;
    for (const [nameV, sqlV, rootV] of list) {
      const name = String(nameV);
      const sql = typeof sqlV === "string" ? sqlV : "";
      if (name.startsWith("sqlite_") && !include.has(name)) continue;
      if (/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(sql)) continue;
      try {
        tables.push(readTable(db, name, sql, bytes, Number(rootV ?? 0), cache));
      } catch (e) {
        problems.push(`${label}: table ${name}: ${(e as Error).message}`);
      }
    }
  } finally {
    db.close();
    (options.cache === undefined ? pageCache : options.cache)?.nextGeneration();
  }
  return { tables, problems };
}

/** How one table is read. */
interface TablePlan {
  name: string;
  columns: string[];
  identity: string[];
  /** Columns selected: the table's, then (if any) the rowid alias. */
  select: string;
  /** Full-scan ORDER BY. */
  order: string;
  /** Indexes (into a selected row) of the identity values. */
  keyIdx: number[];
  /** Rowid column name usable in SQL, when rows can be read in rowid order. */
  rowidName: string | null;
  /** Index of the rowid in a selected row (fast path only). */
  rowidIdx: number;
  /** Whether the single integer primary key must equal the rowid (checked per row). */
  intPk: boolean;
  /** The table's CREATE statement (part of the page-cache signature). */
  sql: string;
  /**
   * Whether leaf pages can be decoded in JS: a rowid table without hidden
   * (generated) columns. Anything else goes through SQL.
   */
  decodable: boolean;
  /** Index of the INTEGER PRIMARY KEY column (stored as NULL, value = rowid), or -1. */
  aliasIdx: number;
  /** Whether each column has a non-NULL default (short records then need SQL). */
  hasDefault: boolean[];
  /** Build a value object from decoded fields (fixed shape). */
  make: (fields: unknown[]) => Record<string, unknown>;
}

/** A value-object constructor with a fixed shape for these column names. */
function valueMaker(
  columns: readonly string[],
): (fields: unknown[]) => Record<string, unknown> {
  if (columns.some((c) => c === "__proto__") || columns.length > 200) {
    return (f) => {
      const o: Record<string, unknown> = {};
      columns.forEach((c, i) =>
        Object.defineProperty(o, c, {
          value: f[i],
          enumerable: true,
          writable: true,
          configurable: true,
        })
      );
      return o;
    };
  }
  // Column names are embedded as JSON string literals: no code can be injected.
  const body = "return {" +
    columns.map((c, i) => `${JSON.stringify(c)}: f[${i}]`).join(", ") + "};";
  return new Function("f", body) as (
    fields: unknown[],
  ) => Record<string, unknown>;
}

function planTable(db: SqlDatabase, name: string, sql: string): TablePlan {
  const info = db.exec(
    `SELECT name, type, pk, dflt_value FROM pragma_table_info(${
      sqlString(name)
    }) ORDER BY cid`,
  )[0]
    ?.values ?? [];
  const hidden = Number(
    db.exec(
      `SELECT count(*) FROM pragma_table_xinfo(${
        sqlString(name)
      }) WHERE hidden != 0`,
    )[0]?.values[0]?.[0] ?? 0,
  );
  const columns = info.map((r) => String(r[0]));
  const hasDefault = info.map((r) =>
    r[3] !== null && String(r[3]).toUpperCase() !== "NULL"
  );
  const make = valueMaker(columns);
  const pkCols = info.filter((r) => Number(r[2]) > 0).sort((a, b) =>
    Number(a[2]) - Number(b[2])
  ).map((r) => String(r[0]));
  let hasRowid = true;
  try {
    db.prepare(`SELECT rowid FROM ${quoteIdent(name)} LIMIT 0`).free();
  } catch {
    hasRowid = false;
  }
  const shadowed = new Set(columns.map((c) => c.toLowerCase()));
  const rowidAlias = hasRowid
    ? ["rowid", "_rowid_", "oid"].find((a) => !shadowed.has(a)) ?? null
    : null;
  const intPk = pkCols.length === 1 && hasRowid &&
    String(info.find((r) => r[0] === pkCols[0])?.[1] ?? "").toUpperCase() ===
      "INTEGER";
  const n = columns.length;
  const cols = columns.map(quoteIdent);
  if (pkCols.length > 0) {
    return {
      name,
      columns,
      identity: pkCols,
      select: [...cols, ...(intPk && rowidAlias ? [rowidAlias] : [])].join(
        ", ",
      ),
      order: intPk
        ? quoteIdent(pkCols[0]!)
        : pkCols.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", "),
      keyIdx: pkCols.map((c) => columns.indexOf(c)),
      rowidName: intPk ? rowidAlias : null,
      rowidIdx: n,
      intPk,
      sql,
      decodable: intPk && rowidAlias !== null && hidden === 0,
      aliasIdx: intPk ? columns.indexOf(pkCols[0]!) : -1,
      hasDefault,
      make,
    };
  }
  if (rowidAlias !== null) {
    return {
      name,
      columns,
      identity: ["rowid"],
      select: [...cols, rowidAlias].join(", "),
      order: rowidAlias,
      keyIdx: [n],
      rowidName: rowidAlias,
      rowidIdx: n,
      intPk: false,
      sql,
      decodable: hidden === 0,
      aliasIdx: -1,
      hasDefault,
      make,
    };
  }
  // No usable identity: rows are identified by their whole value.
  return {
    name,
    columns,
    identity: columns,
    select: cols.join(", "),
    order: columns.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", "),
    keyIdx: columns.map((_, i) => i),
    rowidName: null,
    rowidIdx: -1,
    intPk: false,
    sql,
    decodable: false,
    aliasIdx: -1,
    hasDefault,
    make,
  };
}

/** Run a SELECT of `plan.select` and turn its rows into records (and rowids, for the fast path). */
function readRows(
  db: SqlDatabase,
  plan: TablePlan,
  where: string,
  order: string,
  rowids: number[] | null,
): StateRecord[] {
  const st = db.prepare(
    `SELECT ${plan.select} FROM ${
      quoteIdent(plan.name)
    }${where} ORDER BY ${order}`,
  );
  const n = plan.columns.length;
  const keyIdx = plan.keyIdx;
  const single = keyIdx.length === 1 ? keyIdx[0]! : -1;
  const records: StateRecord[] = [];
  try {
    while (st.step()) {
      let row = st.get();
      for (let i = 0; i < row.length; i++) {
        const v = row[i];
        if (
          typeof v === "number" && Number.isInteger(v) &&
          !Number.isSafeInteger(v)
        ) {
          row = st.get(null, { useBigInt: true });
          break;
        }
      }
      for (let i = 0; i < n; i++) {
        const v = row[i];
        if (
          !(v === null || typeof v === "string" ||
            (typeof v === "number" && Number.isFinite(v)))
        ) {
          row[i] = encodeValue(v);
        }
      }
      const value = plan.make(row);
      let key: string;
      if (single !== -1) {
        const k = row[single];
        key = typeof k === "number" && Number.isFinite(k)
          ? "[" + k + "]"
          : "[" + JSON.stringify(encodeValue(k)) + "]";
      } else {
        // Encoded values ({$bytes}, {$int}, {$real}) have one key, so plain JSON is canonical.
        key = "[" + keyIdx.map((i) =>
          JSON.stringify(encodeValue(row[i]))
        ).join(",") + "]";
      }
      if (rowids !== null) {
        const rid = row[plan.rowidIdx];
        if (
          typeof rid !== "number" || (plan.intPk && row[keyIdx[0]!] !== rid)
        ) {
          throw new PageWalkError(
            `rowid ${String(rid)} is not a safe integer key`,
          );
        }
        rowids.push(rid);
      }
      records.push({ key, value });
    }
  } finally {
    st.free();
  }
  return records;
}

function readTable(
  db: SqlDatabase,
  name: string,
  sql: string,
  image: Uint8Array,
  rootpage: number,
  cache: PageCache | null,
): SqliteTable {
  const plan = planTable(db, name, sql);
  const base = { name, columns: plan.columns, identity: plan.identity };
  if (cache !== null && plan.rowidName !== null && rootpage > 0) {
    try {
      return {
        ...base,
        records: readTableCached(db, plan, image, rootpage, cache),
      };
    } catch (e) {
      if (!(e instanceof PageWalkError)) throw e;
      // Fall back to a plain scan below.
    }
  }
  const records = readRows(db, plan, "", plan.order, null);
  return {
    ...base,
    records: plan.rowidName !== null ? records : dedupeSorted(records),
  };
}

/** The b-tree walk met something it does not handle; the plain scan is used instead. */
class PageWalkError extends Error {}

/** One leaf page of a table b-tree. */
interface Leaf {
  /** Byte offset of the page in the image. */
  offset: number;
  cells: number;
  minRowid: number;
  maxRowid: number;
  /** Whether some cell spills to overflow pages (then the page alone does not determine its rows). */
  overflow: boolean;
}

/** Where the last {@linkcode varint} ended (avoids allocating a pair per call). */
let varintEnd = 0;

/** Read a SQLite varint at `at`; its end is left in `varintEnd`. */
function varint(b: Uint8Array, at: number): number {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const x = b[at + i];
    if (x === undefined) {
      throw new PageWalkError("varint past the end of the image");
    }
    v = v * 128 + (x & 0x7f);
    if (x < 0x80) {
      varintEnd = at + i + 1;
      return v;
    }
  }
  const last = b[at + 8];
  if (last === undefined) {
    throw new PageWalkError("varint past the end of the image");
  }
  varintEnd = at + 9;
  return v * 256 + last;
}

/** The leaves of a table b-tree, in rowid order. Throws PageWalkError on anything unexpected. */
function tableLeaves(image: Uint8Array, rootpage: number): Leaf[] {
  const pageSize = imagePageSize(image) ?? 0;
  if (pageSize === 0 || image.length % pageSize !== 0) {
    throw new PageWalkError("unexpected image size");
  }
  if (
    image[56] !== 0 || image[57] !== 0 || image[58] !== 0 ||
    (image[59] !== 1 && image[59] !== 0)
  ) {
    throw new PageWalkError("text encoding is not UTF-8");
  }
  const usable = pageSize - image[20]!;
  const maxLocal = usable - 35;
  const pages = image.length / pageSize;
  const leaves: Leaf[] = [];
  const seen = new Set<number>();
  const u16 = (o: number) => (image[o]! << 8) | image[o + 1]!;
  const u32 = (o: number) =>
    ((image[o]! << 24) >>> 0) + (image[o + 1]! << 16) + (image[o + 2]! << 8) +
    image[o + 3]!;
  function visit(pgno: number, depth: number): void {
    if (pgno < 1 || pgno > pages || seen.has(pgno) || depth > 64) {
      throw new PageWalkError(`bad page ${pgno}`);
    }
    seen.add(pgno);
    const start = (pgno - 1) * pageSize;
    const hdr = pgno === 1 ? start + 100 : start;
    const type = image[hdr];
    const cells = u16(hdr + 3);
    if (type === 0x05) {
      const ptrs = hdr + 12;
      for (let i = 0; i < cells; i++) {
        visit(u32(start + u16(ptrs + 2 * i)), depth + 1);
      }
      visit(u32(hdr + 8), depth + 1);
    } else if (type === 0x0d) {
      if (cells === 0) return;
      const ptrs = hdr + 8;
      let overflow = false;
      let minRowid = 0;
      let maxRowid = 0;
      for (let i = 0; i < cells; i++) {
        const payload = varint(image, start + u16(ptrs + 2 * i));
        if (payload > maxLocal) overflow = true;
        if (i === 0 || i === cells - 1) {
          const rowid = varint(image, varintEnd);
          if (!Number.isSafeInteger(rowid) || rowid > 2 ** 53) {
            throw new PageWalkError("rowid beyond 2^53");
          }
          if (i === 0) minRowid = rowid;
          if (i === cells - 1) maxRowid = rowid;
        }
      }
      leaves.push({ offset: start, cells, minRowid, maxRowid, overflow });
    } else {
      throw new PageWalkError(
        `page ${pgno} is not a table b-tree page (type ${type})`,
      );
    }
  }
  visit(rootpage, 0);
  return leaves;
}

/** A cache of decoded leaf pages, keyed by their exact bytes and the table's schema. */
export class PageCache {
  #entries = new Map<
    number,
    {
      sig: string;
      words: Int32Array;
      at: number;
      records: StateRecord[];
      gen: number;
    }
  >();
  #gen = 0;
  /** Generations a page survives without being seen. @default 2 */
  readonly keep: number;
  constructor(keep = 2) {
    this.keep = keep;
  }
  /** Records of an identical page seen before, or undefined. */
  get(
    hash: number,
    sig: string,
    words: Int32Array,
    at: number,
    len: number,
  ): StateRecord[] | undefined {
    const e = this.#entries.get(hash);
    if (!e || e.sig !== sig) return undefined;
    const w = e.words;
    const o = e.at;
    if (w !== words || o !== at) {
      for (let i = 0; i < len; i++) {
        if (w[o + i] !== words[at + i]) return undefined;
      }
    }
    e.gen = this.#gen;
    return e.records;
  }
  set(
    hash: number,
    sig: string,
    words: Int32Array,
    at: number,
    len: number,
    records: StateRecord[],
  ): void {
    // The page is kept by reference: images are private copies, never written after they are read.
    void len;
    this.#entries.set(hash, { sig, words, at, records, gen: this.#gen });
  }
  /** End of one observation: forget pages not seen in the last `keep` generations. */
  nextGeneration(): void {
    this.#gen++;
    for (const [k, e] of this.#entries) {
      if (e.gen < this.#gen - this.keep) this.#entries.delete(k);
    }
  }
  clear(): void {
    this.#entries.clear();
  }
  get size(): number {
    return this.#entries.size;
  }
}

/** The process-wide page cache used by snapshots. */
export const pageCache: PageCache = new PageCache();

function pageHash(words: Int32Array, at: number, len: number): number {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x27d4eb2f | 0;
  for (let i = at, e = at + len; i < e; i++) {
    const w = words[i]!;
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h2 = Math.imul(h2 + w, 0x5bd1e995) ^ (h2 >>> 13);
  }
  return (h1 >>> 0) * 0x200000 + (h2 >>> 11);
}

/** Exact Latin-1 (one byte per character) page text: only sliced where a text value is pure ASCII. */
function latin1(image: Uint8Array, start: number, end: number): string {
  return Buffer.from(image.buffer, image.byteOffset, image.byteLength).toString(
    "latin1",
    start,
    end,
  );
}
const utf8 = new TextDecoder();

/**
 * Decode one leaf page of a rowid table in JS (record format: serial types
 * 0-9 and text/blob), or return null when it holds something this decoder
 * leaves to SQL (a short record whose missing column has a default, a
 * stored value in the INTEGER PRIMARY KEY column, reserved serial types).
 * Leaves with overflow cells never come here.
 */
function decodeLeaf(
  image: Uint8Array,
  view: DataView,
  leaf: Leaf,
  plan: TablePlan,
): StateRecord[] | null {
  const start = leaf.offset;
  const hdr = start === 0 ? 100 : start;
  const pageSize = imagePageSize(image)!;
  const n = plan.columns.length;
  const alias = plan.aliasIdx;
  const out: StateRecord[] = new Array(leaf.cells);
  let pageText: string | null = null;
  const fields: unknown[] = new Array(n);
  for (let c = 0; c < leaf.cells; c++) {
    let p = start + ((image[hdr + 8 + 2 * c]! << 8) | image[hdr + 9 + 2 * c]!);
    let payload = image[p]!;
    if (payload < 0x80) p++;
    else {
      payload = varint(image, p);
      p = varintEnd;
    }
    let rowid = image[p]!;
    if (rowid < 0x80) p++;
    else {
      rowid = varint(image, p);
      p = varintEnd;
    }
    const end = p + payload;
    let q = p;
    let headerSize = image[q]!;
    if (headerSize < 0x80) q++;
    else {
      headerSize = varint(image, q);
      q = varintEnd;
    }
    const headerEnd = p + headerSize;
    let body = headerEnd;
    let i = 0;
    while (q < headerEnd) {
      let t = image[q]!;
      if (t < 0x80) q++;
      else {
        t = varint(image, q);
        q = varintEnd;
      }
      if (i >= n) return null;
      let v: unknown;
      switch (t) {
        case 0:
          v = null;
          break;
        case 1:
          v = view.getInt8(body);
          body += 1;
          break;
        case 2:
          v = view.getInt16(body);
          body += 2;
          break;
        case 3:
          v = (view.getInt8(body) << 16) | view.getUint16(body + 1);
          body += 3;
          break;
        case 4:
          v = view.getInt32(body);
          body += 4;
          break;
        case 5:
          v = view.getInt16(body) * 4294967296 + view.getUint32(body + 2);
          body += 6;
          break;
        case 6: {
          const hi = view.getInt32(body);
          const lo = view.getUint32(body + 4);
          const x = hi * 4294967296 + lo;
          v = Number.isSafeInteger(x)
            ? x
            : { $int: view.getBigInt64(body).toString() };
          body += 8;
          break;
        }
        case 7: {
          const x = view.getFloat64(body);
          v = Number.isFinite(x) ? x : { $real: String(x) };
          body += 8;
          break;
        }
        case 8:
          v = 0;
          break;
        case 9:
          v = 1;
          break;
        case 10:
        case 11:
          return null;
        default: {
          const len = (t - (t & 1 ? 13 : 12)) / 2;
          if (body + len > end) return null;
          if (t & 1) {
            let ascii = true;
            for (let k = body; k < body + len; k++) {
              if (image[k]! > 0x7f) {
                ascii = false;
                break;
              }
            }
            if (ascii) {
              pageText ??= latin1(image, start, start + pageSize);
              v = pageText.slice(body - start, body - start + len);
            } else v = utf8.decode(image.subarray(body, body + len));
          } else {v = {
              $bytes: bytesToBase64(image.subarray(body, body + len)),
            };}
          body += len;
        }
      }
      fields[i++] = v;
    }
    if (body > end) return null;
    for (; i < n; i++) {
      if (plan.hasDefault[i]) return null;
      fields[i] = null;
    }
    if (alias !== -1) {
      if (fields[alias] !== null) return null;
      fields[alias] = rowid;
    }
    out[c] = { key: "[" + rowid + "]", value: plan.make(fields) };
  }
  return out;
}

/**
 * Read a rowid-ordered table page by page: leaves whose exact bytes were
 * decoded before reuse those records; new leaves are decoded in JS, and
 * runs of leaves the JS decoder leaves alone (overflow cells, defaults)
 * are read by SQL (`WHERE rowid BETWEEN …`) and checked against the
 * leaves' cell counts and rowid bounds.
 */
function readTableCached(
  db: SqlDatabase,
  plan: TablePlan,
  image: Uint8Array,
  rootpage: number,
  cache: PageCache,
): StateRecord[] {
  const leaves = tableLeaves(image, rootpage);
  const aligned = image.byteOffset % 4 === 0 ? image : image.slice();
  const words = new Int32Array(
    aligned.buffer,
    aligned.byteOffset,
    aligned.byteLength >> 2,
  );
  const view = new DataView(
    aligned.buffer,
    aligned.byteOffset,
    aligned.byteLength,
  );
  const pageWords = (imagePageSize(image) ?? 4096) >> 2;
  const sig = plan.sql + "\0" + plan.select;
  // Each leaf's records, in leaf order; flattened once at the end.
  const parts: StateRecord[][] = [];
  // Leaves waiting for one SQL range read.
  let pending: { leaf: Leaf; hash: number }[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const lo = pending[0]!.leaf.minRowid;
    const hi = pending[pending.length - 1]!.leaf.maxRowid;
    const rowids: number[] = [];
    const rid = plan.rowidName!;
    const rows = readRows(
      db,
      plan,
      ` WHERE ${rid} BETWEEN ${lo} AND ${hi}`,
      rid,
      rowids,
    );
    let r = 0;
    for (const { leaf, hash } of pending) {
      const part = rows.slice(r, r + leaf.cells);
      if (
        part.length !== leaf.cells || rowids[r] !== leaf.minRowid ||
        rowids[r + leaf.cells - 1] !== leaf.maxRowid
      ) {
        throw new PageWalkError("page walk and SQL disagree");
      }
      if (!leaf.overflow) {
        cache.set(hash, sig, words, leaf.offset >> 2, pageWords, part);
      }
      parts.push(part);
      r += leaf.cells;
    }
    if (r !== rows.length) {
      throw new PageWalkError("page walk and SQL disagree on the row count");
    }
    pending = [];
  };
  for (const leaf of leaves) {
    const at = leaf.offset >> 2;
    if (leaf.overflow) {
      pending.push({ leaf, hash: 0 });
      continue;
    }
    const hash = pageHash(words, at, pageWords);
    let records = cache.get(hash, sig, words, at, pageWords);
    if (records === undefined && plan.decodable) {
      records = decodeLeaf(aligned, view, leaf, plan) ?? undefined;
      if (records !== undefined) {
        cache.set(hash, sig, words, at, pageWords, records);
      }
    }
    if (records === undefined) {
      pending.push({ leaf, hash });
      continue;
    }
    flush();
    parts.push(records);
  }
  flush();
  let total = 0;
  for (const p of parts) total += p.length;
  const out: StateRecord[] = new Array(total);
  let k = 0;
  for (const p of parts) for (let i = 0; i < p.length; i++) out[k++] = p[i]!;
  return out;
}

function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'";
}

/**
 * Build a database image from a SQL script in memory (the seed of a reset).
 * Throws an Error with SQLite's message when the script fails.
 */
export function buildSqliteImage(SQL: SqlEngine, script: string): Uint8Array {
  const db = new SQL.Database();
  try {
    db.exec(script);
    return db.export();
  } finally {
    db.close();
  }
}
