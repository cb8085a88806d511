/**
 * The sqlite adapter's snapshot: a database image (plus its `-wal`)
 * turned into typed, sorted records, one region per table, read by the
 * page reader (`stream.ts`), so the observed file is never
 * opened by SQLite (which would checkpoint the WAL). A table the pages do
 * not decode (generated columns, a short record whose missing column has a
 * default, NULL primary keys, a UTF-16 database, ...) is read by SQLite on
 * a copy of the image in memory.
 *
 * Rows are keyed by their primary key columns, else by rowid, in BINARY
 * order (`compareKeys`). Values keep their SQLite type: integers and reals
 * as numbers (integers beyond 2^53 as `{"$int": "…"}`), text as strings,
 * blobs as `{"$bytes": base64}`, NULL as null.
 *
 * SQLite's own state is observed beside the tables, read page by page
 * (`readSqliteMeta`): the `sqlite_schema` region (header fields, indexes,
 * triggers, views) and each internal table (`sqlite_sequence`,
 * `sqlite_stat1`, …) by rowid. Virtual tables are skipped (their shadow
 * tables are ordinary tables and are observed).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { dedupeSorted, makeKey, sortRecords } from "../../lib/state/keys.ts";
import type { StateRecord } from "../../lib/state/types.ts";
import { readSchema, readSqliteMeta } from "./btree.ts";
import { imagePageSource, type PageSource } from "./format.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { isObserved, planSchema, planTable, type TablePlan } from "./plan.ts";
import { encodeValue, imageDatabase, queryRows, quoteIdent } from "./sql.ts";
import { type PageCache, streamTables } from "./stream.ts";
import { mergeWal } from "./wal.ts";

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
  /** Label used in problem messages. @default "database" */
  label?: string;
  /**
   * False: tables and their columns only, no rows read (what checking a
   * definition against its seed needs, at any size). @default true
   */
  records?: boolean;
  /**
   * False: every table read by SQLite, none by pages (the reference the
   * page reader is tested against). @default true
   */
  pages?: boolean;
  /**
   * Decoded leaves shared with the other snapshots read with this cache
   * (their records are shared: never modify them). @default null
   */
  cache?: PageCache | null;
}

/**
 * Read every table of a database image (with its WAL merged) into sorted
 * records. Never throws for a bad image: problems are reported instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DatabaseSync } from "node:sqlite";
 *
 * const db = new DatabaseSync(":memory:");
 * db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a');");
 * const { tables, problems } = readSqlite(db.serialize());
 * assert.deepEqual(problems, []);
 * assert.deepEqual(tables.find((t) => t.name === "t")?.records, [{ key: "[1]", value: { id: 1, name: "a" } }]);
 * // SQLite's own state beside the tables
 * assert.deepEqual(tables.map((t) => t.name), ["sqlite_schema", "t"]);
 * ```
 */
export function readSqlite(
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
  const before = problems.length;
  const records = options.records !== false;
  const sql = new LazyDatabase(bytes);
  let read: SqliteTable[];
  try {
    read = (options.pages === false
      ? null
      : fromPages(bytes, records, sql, options.cache ?? null)) ??
      fromSql(sql, label, problems, records);
  } finally {
    sql.close();
    options.cache?.nextGeneration();
  }
  // A file SQLite cannot read at all has no state of its own to read.
  if (read.length === 0 && problems.length > before) {
    return { tables: read, problems };
  }
  try {
    read.push(...metaTables(imagePageSource(bytes), records));
  } catch (e) {
    problems.push(
      `${label}: SQLite's own state (header, schema objects, internal tables) unreadable: ${
        (e as Error).message
      }`,
    );
  }
  read.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { tables: read, problems };
}

/** The image opened by SQLite when first needed. */
class LazyDatabase {
  #image: Uint8Array;
  #db: DatabaseSync | null = null;
  constructor(image: Uint8Array) {
    this.#image = image;
  }
  get db(): DatabaseSync {
    return this.#db ??= imageDatabase(this.#image);
  }
  close(): void {
    this.#db?.close();
  }
}

/**
 * Every table read by the page reader (a table it declines read by SQL);
 * null when the schema or the trees cannot be read so.
 */
function fromPages(
  bytes: Uint8Array,
  records: boolean,
  sql: LazyDatabase,
  cache: PageCache | null,
): SqliteTable[] | null {
  try {
    const src = imagePageSource(bytes);
    const schema = readSchema(src);
    const planned = planSchema(schema, false);
    if (!records) return planned.map((t) => table(t.plan, []));
    const paged = planned.filter((t) => t.needsSql === undefined);
    const streams = new Map(
      streamTables({ src, schema, tables: paged }, cache).map((
        s,
      ) => [s.name, s]),
    );
    return planned.map((t) => {
      const s = streams.get(t.name);
      if (s !== undefined) {
        try {
          return table(t.plan, s.records());
        } catch (e) {
          if (!(e instanceof PageWalkError)) throw e;
        }
      }
      return table(t.plan, readRows(sql.db, t.plan));
    });
  } catch (e) {
    if (e instanceof PageWalkError) return null;
    throw e;
  }
}

/** Every table read by SQLite; problems when the image is no readable database. */
function fromSql(
  sql: LazyDatabase,
  label: string,
  problems: string[],
  records: boolean,
): SqliteTable[] {
  let db: DatabaseSync;
  try {
    db = sql.db;
  } catch (e) {
    problems.push(`${label}: cannot open: ${(e as Error).message}`);
    return [];
  }
  let list: unknown[][];
  try {
    list = queryRows(
      db,
      "SELECT type, name, rootpage, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name",
    );
  } catch (e) {
    problems.push(
      `${label}: not a readable SQLite database: ${(e as Error).message}`,
    );
    return [];
  }
  const tables: SqliteTable[] = [];
  for (const [type, name, rootpage, text] of list) {
    const row = {
      type: String(type),
      name: String(name),
      rootpage: Number(rootpage ?? 0),
      sql: typeof text === "string" ? text : "",
    };
    if (!isObserved(row)) continue;
    try {
      const plan = planTable(db, row.name, row.sql);
      tables.push(table(plan, records ? readRows(db, plan) : []));
    } catch (e) {
      problems.push(`${label}: table ${row.name}: ${(e as Error).message}`);
    }
  }
  return tables;
}

function table(plan: TablePlan, records: StateRecord[]): SqliteTable {
  return {
    name: plan.name,
    columns: plan.columns,
    identity: plan.identity,
    records,
  };
}

/** A table's records read by SQL, in key order (duplicate keys numbered). */
function readRows(db: DatabaseSync, plan: TablePlan): StateRecord[] {
  const n = plan.columns.length;
  const keyIdx = plan.keyIdx;
  const records: StateRecord[] = [];
  for (
    const row of queryRows(
      db,
      `SELECT ${plan.select} FROM ${
        quoteIdent(plan.name)
      } ORDER BY ${plan.order}`,
    )
  ) {
    for (let i = 0; i < row.length; i++) row[i] = encodeValue(row[i]);
    // Encoded values ({$bytes}, {$int}, {$real}) have one key, so plain JSON is canonical.
    const key = "[" + keyIdx.map((i) => JSON.stringify(row[i])).join(",") +
      "]";
    records.push({ key, value: plan.make(row.slice(0, n)) });
  }
  return plan.rowidName !== null ? records : dedupeSorted(records);
}

/**
 * SQLite's own regions as tables: `sqlite_schema` (no columns) and each
 * internal table, records sorted (none when `records` is false).
 */
export function metaTables(src: PageSource, records = true): SqliteTable[] {
  return readSqliteMeta(src).map((m) => ({
    name: m.name,
    columns: m.columns ?? [],
    identity: m.columns === undefined ? ["type", "name"] : ["rowid"],
    records: records
      ? sortRecords(
        m.records.map((r) => ({ key: makeKey(r.key), value: r.value })),
      )
      : [],
  }));
}

/**
 * Tables and their columns from a database's `sqlite_schema` read page by
 * page (from an image in memory or a file), planned on an empty database
 * (the database is never copied into SQLite); null when the schema cannot
 * be read so. Internal and virtual tables are left out (as
 * {@linkcode readSqlite} leaves them).
 */
export function columnsFromPages(src: PageSource): SqliteTable[] | null {
  try {
    return planSchema(readSchema(src), false).map((t) => table(t.plan, []));
  } catch (e) {
    if (e instanceof PageWalkError) return null;
    throw e;
  }
}
