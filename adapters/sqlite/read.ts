/**
 * The sqlite adapter's snapshot: a database image (plus its `-wal`)
 * turned into typed, sorted records, one region per table, read by the
 * page reader (`stream.ts`), so the observed file is never
 * opened by SQLite (which would checkpoint the WAL). A sound database the
 * page reader cannot read whole (generated columns, a short record whose
 * missing column has a default, NULL primary keys, a UTF-16 database, ...)
 * is not observed: {@linkcode PageWalkError} says why. No real state has
 * needed more (every seed of the fixtures and published targets, and every
 * write their audits send, reads by pages). A damaged one (SQLite cannot
 * read it either) is a problem.
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
import { makeKey, sortRecords } from "../../lib/state/keys.ts";
import type { StateRecord } from "../../lib/state/types.ts";
import { readSchema, readSqliteMeta } from "./btree.ts";
import { imagePageSource, type PageSource } from "./format.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { planSchema, type TablePlan } from "./plan.ts";
import { damage } from "./sql.ts";
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
   * Decoded leaves shared with the other snapshots read with this cache
   * (their records are shared: never modify them). @default null
   */
  cache?: PageCache | null;
}

/**
 * Read every table of a database image (with its WAL merged) into sorted
 * records. An image that is no database (a bad header, or damage SQLite
 * finds too) is a problem; a sound database the page reader cannot read
 * throws {@linkcode PageWalkError} naming `label` and why.
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
  let src: PageSource;
  try {
    src = imagePageSource(bytes);
  } catch (e) {
    if (!(e instanceof PageWalkError)) throw e;
    problems.push(`${label}: not a readable SQLite database: ${e.message}`);
    return { tables: [], problems };
  }
  let read: SqliteTable[];
  try {
    read = fromPages(src, options.records !== false, options.cache ?? null);
  } catch (e) {
    if (!(e instanceof PageWalkError)) throw e;
    // A damaged database is a state of its own; a sound one the pages do
    // not read is not observed.
    const wrong = damage(bytes);
    if (wrong === null) {
      throw new PageWalkError(`${label}: not read: ${e.message}`);
    }
    problems.push(`${label}: not a readable SQLite database: ${wrong}`);
    return { tables: [], problems };
  }
  try {
    read.push(...metaTables(src, options.records !== false));
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

/** Every table read by the page reader (throws PageWalkError for one it cannot read). */
function fromPages(
  src: PageSource,
  records: boolean,
  cache: PageCache | null,
): SqliteTable[] {
  const schema = readSchema(src);
  const planned = planSchema(schema, false);
  if (!records) return planned.map((t) => table(t.plan, []));
  const unread = planned.find((t) => t.needsSql !== undefined);
  if (unread !== undefined) throw new PageWalkError(unread.needsSql!);
  return streamTables({ src, schema, tables: planned }, cache).map((s, i) =>
    table(planned[i]!.plan, s.records())
  );
}

function table(plan: TablePlan, records: StateRecord[]): SqliteTable {
  return {
    name: plan.name,
    columns: plan.columns,
    identity: plan.identity,
    records,
  };
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
 * (the database is never copied into SQLite); throws PageWalkError when
 * the schema cannot be read so. Internal and virtual tables are left out
 * (as {@linkcode readSqlite} leaves them).
 */
export function columnsFromPages(src: PageSource): SqliteTable[] {
  return planSchema(readSchema(src), false).map((t) => table(t.plan, []));
}
