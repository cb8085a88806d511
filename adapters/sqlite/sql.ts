/**
 * SQLite itself (Deno's built-in `node:sqlite`), for what the page reader
 * leaves to SQL: planning tables (`pragma_table_info` of a schema replayed
 * into an empty database) and reading tables the pages do not decode.
 * Every database opened here is read-only to SQL (`query_only`), refuses
 * `ATTACH` and `load_extension` (the schema of an observed database is
 * hostile input), and trusts no function in its schema.
 *
 * @module
 */
import { constants, DatabaseSync } from "node:sqlite";

/** The parts of node:sqlite in Deno 2.9's runtime but not yet in its types. */
interface Unlisted {
  setAuthorizer(
    callback: (action: number, a: string | null, b: string | null) => number,
  ): void;
}
interface ArrayStatement {
  setReturnArrays(on: boolean): void;
  setReadBigInts(on: boolean): void;
  all(): unknown[][];
}
const codes = constants as unknown as Record<
  | "SQLITE_ATTACH"
  | "SQLITE_DETACH"
  | "SQLITE_FUNCTION"
  | "SQLITE_OK"
  | "SQLITE_DENY",
  number
>;

/**
 * Refuse, in SQLite itself, what reaches beyond this database: `ATTACH`
 * (which `VACUUM INTO` also asks for), `DETACH` and `load_extension`.
 * Returns what was refused first, if anything (SQLite's own error only
 * says "not authorized").
 */
export function refuseOutside(db: DatabaseSync): () => string | null {
  let refused: string | null = null;
  const authorizing = db as unknown as Partial<Unlisted>;
  if (typeof authorizing.setAuthorizer !== "function") {
    throw new Error("this Deno's node:sqlite has no authorizer");
  }
  authorizing.setAuthorizer((action, _a, b) => {
    const what = action === codes.SQLITE_ATTACH
      ? "ATTACH"
      : action === codes.SQLITE_DETACH
      ? "DETACH"
      : action === codes.SQLITE_FUNCTION &&
          b?.toLowerCase() === "load_extension"
      ? "load_extension"
      : null;
    if (what === null) return codes.SQLITE_OK;
    refused ??= what;
    return codes.SQLITE_DENY;
  });
  return () => refused;
}

/** {@linkcode refuseOutside}, and no function in the schema trusted. */
function guard(db: DatabaseSync): DatabaseSync {
  refuseOutside(db);
  db.exec("PRAGMA trusted_schema = OFF");
  return db;
}

/** An empty in-memory database, to replay a schema into. */
export function emptyDatabase(): DatabaseSync {
  return guard(new DatabaseSync(":memory:"));
}

/**
 * A database image (rollback-journal header, bytes 18-19 = 1; a WAL
 * merged first) opened in memory, read-only. Throws SQLite's error when
 * the image is no database.
 */
export function imageDatabase(image: Uint8Array): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  try {
    // Before the guard: deserializing asks the authorizer for a DETACH.
    db.deserialize(image);
    guard(db).exec("PRAGMA query_only = ON");
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * The rows of a query as arrays, in order. Integers beyond 2^53 come as
 * bigints (the query is run again when one is met). Never `iterate()`:
 * in Deno 2.9 it ends early, without an error, at such an integer.
 */
export function queryRows(db: DatabaseSync, sql: string): unknown[][] {
  const run = (big: boolean) => {
    const st = db.prepare(sql) as unknown as ArrayStatement;
    st.setReturnArrays(true);
    st.setReadBigInts(big);
    return st.all();
  };
  try {
    return run(false);
  } catch (e) {
    if ((e as { code?: string }).code !== "ERR_OUT_OF_RANGE") throw e;
    return run(true);
  }
}

/** A value from SQL as a snapshot holds it (see `valueAt` of format.ts). */
export function encodeValue(v: unknown): unknown {
  if (v === null || typeof v === "string") return v;
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : { $real: String(v) };
  }
  if (typeof v === "bigint") {
    return Number.isSafeInteger(Number(v)) ? Number(v) : { $int: v.toString() };
  }
  if (v instanceof Uint8Array) return { $bytes: v.toBase64() };
  return v;
}

/** An SQL identifier. */
export function quoteIdent(s: string): string {
  return '"' + s.replaceAll('"', '""') + '"';
}

/** An SQL string literal. */
export function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'";
}
