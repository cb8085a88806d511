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
 * SQLite's own state is observed beside the tables, read page by page
 * (`readSqliteMeta`): the `sqlite_schema` region (header fields, indexes,
 * triggers, views) and each internal table (`sqlite_sequence`,
 * `sqlite_stat1`, …) by rowid. Virtual tables are skipped (their shadow
 * tables are ordinary tables and are observed).
 *
 * @module
 */
import { dedupeSorted, makeKey, sortRecords } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import type { SqlDatabase, SqlEngine } from "./sql_engine.ts";
import { type PageCache, pageCache } from "./sqlite_page_cache.ts";
import { PageWalkError, planTable, readRows } from "./_sqlite_table.ts";
import { readTableCached } from "./_sqlite_pages.ts";
import { mergeWal } from "./wal.ts";
import {
  imagePageSource,
  type PageSource,
  readSchema,
  readSqliteMeta,
  type SchemaRow,
} from "./sqlite_diff.ts";

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
   * Decoded leaf pages to reuse (records of byte-identical pages are shared
   * between snapshots); null reads every row. With a cache, `image` (and
   * `wal`) must not be modified afterwards: pages are kept by reference.
   * @default the process-wide {@linkcode pageCache}
   */
  cache?: PageCache | null;
  /**
   * False: tables and their columns only, no rows read (what checking a
   * definition against its seed needs, at any size). @default true
   */
  records?: boolean;
}

/**
 * Read every table of a database image (with its WAL merged) into sorted
 * records. Never throws for a bad image: problems are reported instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadSqlEngine } from "./sql_engine.ts";
 * import { buildSqliteImage } from "./sqlite_seed.ts";
 *
 * const SQL = await loadSqlEngine();
 * const image = buildSqliteImage(
 *   SQL,
 *   "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a');",
 * );
 * const { tables, problems } = readSqlite(SQL, image);
 * assert.deepEqual(problems, []);
 * assert.deepEqual(tables.find((t) => t.name === "t")?.records, [{ key: "[1]", value: { id: 1, name: "a" } }]);
 * // SQLite's own state beside the tables
 * assert.deepEqual(tables.map((t) => t.name), ["sqlite_schema", "t"]);
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
  const before = problems.length;
  const read = readTables(SQL, bytes, label, problems, options);
  // A file SQLite cannot read at all has no state of its own to read.
  if (read.length === 0 && problems.length > before) {
    return { tables: read, problems };
  }
  try {
    read.push(
      ...metaTables(imagePageSource(bytes), options.records !== false),
    );
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

function readTables(
  SQL: SqlEngine,
  bytes: Uint8Array,
  label: string,
  problems: string[],
  options: ReadSqliteOptions,
): SqliteTable[] {
  if (options.records === false) {
    let tables: SqliteTable[] | null = null;
    try {
      tables = columnsFromPages(SQL, imagePageSource(bytes));
    } catch (e) {
      if (!(e instanceof PageWalkError)) throw e;
    }
    if (tables !== null) return tables;
  }
  let db: SqlDatabase;
  try {
    db = new SQL.Database(bytes);
  } catch (e) {
    problems.push(`${label}: cannot open: ${(e as Error).message}`);
    return [];
  }
  const tables: SqliteTable[] = [];
  try {
    let list: unknown[][];
    try {
      list = db.exec(
        "SELECT name, sql, rootpage FROM sqlite_schema WHERE type = 'table' ORDER BY name",
      )[0]?.values ?? [];
    } catch (e) {
      problems.push(
        `${label}: not a readable SQLite database: ${(e as Error).message}`,
      );
      return [];
    }
    const cache = options.cache === undefined ? pageCache : options.cache;
    for (const [nameV, sqlV, rootV] of list) {
      const name = String(nameV);
      const sql = typeof sqlV === "string" ? sqlV : "";
      // Internal tables are read with SQLite's own state (metaTables).
      if (name.startsWith("sqlite_")) continue;
      if (/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(sql)) continue;
      try {
        tables.push(
          options.records === false
            ? columnsOnly(db, name, sql)
            : readTable(db, name, sql, bytes, Number(rootV ?? 0), cache),
        );
      } catch (e) {
        problems.push(`${label}: table ${name}: ${(e as Error).message}`);
      }
    }
  } finally {
    db.close();
    (options.cache === undefined ? pageCache : options.cache)?.nextGeneration();
  }
  return tables;
}

/**
 * Tables and their columns from a database's `sqlite_schema` read page by
 * page (from an image in memory or a file), each schema replayed into an
 * empty database (the database is never copied into the SQL engine); null
 * when the schema cannot be read so. Internal `sqlite_` tables only when
 * `include` names them; virtual tables never (as {@linkcode readSqlite}).
 */
export function columnsFromPages(
  SQL: SqlEngine,
  src: PageSource,
): SqliteTable[] | null {
  let schema: SchemaRow[];
  try {
    schema = readSchema(src);
  } catch (e) {
    if (e instanceof PageWalkError) return null;
    throw e;
  }
  const db = new SQL.Database();
  try {
    const tables: SqliteTable[] = [];
    for (
      const t of schema.filter((r) => r.type === "table").sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0
      )
    ) {
      if (t.name.startsWith("sqlite_")) continue; // see metaTables
      if (/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql)) continue;
      db.exec(t.sql);
      tables.push(columnsOnly(db, t.name, t.sql));
    }
    return tables;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

function columnsOnly(db: SqlDatabase, name: string, sql: string): SqliteTable {
  const plan = planTable(db, name, sql);
  return { name, columns: plan.columns, identity: plan.identity, records: [] };
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
