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
import { bytesToBase64, dedupeSorted } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import { mergeWal } from "./wal.ts";

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
        "SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name",
      )[0]?.values ?? [];
    } catch (e) {
      problems.push(
        `${label}: not a readable SQLite database: ${(e as Error).message}`,
      );
      return { tables: [], problems };
    }
    for (const [nameV, sqlV] of list) {
      const name = String(nameV);
      const sql = typeof sqlV === "string" ? sqlV : "";
      if (name.startsWith("sqlite_") && !include.has(name)) continue;
      if (/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(sql)) continue;
      try {
        tables.push(readTable(db, name));
      } catch (e) {
        problems.push(`${label}: table ${name}: ${(e as Error).message}`);
      }
    }
  } finally {
    db.close();
  }
  return { tables, problems };
}

function readTable(db: SqlDatabase, name: string): SqliteTable {
  const info = db.exec(
    `SELECT name, type, pk FROM pragma_table_info(${
      sqlString(name)
    }) ORDER BY cid`,
  )[0]?.values ?? [];
  const columns = info.map((r) => String(r[0]));
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
  const rowidAlias =
    ["rowid", "_rowid_", "oid"].find((a) => !shadowed.has(a)) ?? null;
  const intPk = pkCols.length === 1 && hasRowid &&
    String(info.find((r) => r[0] === pkCols[0])?.[1] ?? "").toUpperCase() ===
      "INTEGER";
  let identity: string[];
  let keyExpr: string[];
  let order: string;
  if (pkCols.length > 0) {
    identity = pkCols;
    keyExpr = [];
    order = intPk
      ? quoteIdent(pkCols[0]!)
      : pkCols.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", ");
  } else if (hasRowid && rowidAlias !== null) {
    identity = ["rowid"];
    keyExpr = [rowidAlias];
    order = rowidAlias;
  } else {
    // No usable identity: rows are identified by their whole value.
    identity = columns;
    keyExpr = [];
    order = columns.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", ");
  }
  const select = [...columns.map(quoteIdent), ...keyExpr].join(", ");
  const st = db.prepare(
    `SELECT ${select} FROM ${quoteIdent(name)} ORDER BY ${order}`,
  );
  const n = columns.length;
  const keyIdx = keyExpr.length > 0
    ? [n]
    : identity.map((c) => columns.indexOf(c));
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
      const value: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const v = row[i];
        value[columns[i]!] = v === null || typeof v === "string" ||
            (typeof v === "number" && Number.isFinite(v))
          ? v
          : encodeValue(v);
      }
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
      records.push({ key, value });
    }
  } finally {
    st.free();
  }
  return { name, columns, identity, records: dedupeSorted(records) };
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
