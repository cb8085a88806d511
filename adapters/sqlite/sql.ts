/**
 * SQLite itself (Deno's built-in `node:sqlite`), for what the page reader
 * leaves to SQL: planning tables (`pragma_table_info` of a schema replayed
 * into an empty database) and telling a damaged database from one the page
 * reader does not read. Every database opened here is read-only to SQL
 * (`query_only`), refuses `ATTACH` and `load_extension` (the schema of an
 * observed database is hostile input), and trusts no function in its
 * schema.
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
 * What SQLite finds wrong with a database image (rollback-journal header,
 * bytes 18-19 = 1; a WAL merged first), opened in memory, read-only: its
 * error, or `PRAGMA quick_check`'s first complaint; null when SQLite reads
 * it whole.
 */
export function damage(image: Uint8Array): string | null {
  const db = new DatabaseSync(":memory:");
  try {
    // Before the guard: deserializing asks the authorizer for a DETACH.
    db.deserialize(image);
    guard(db).exec("PRAGMA query_only = ON");
    const first = queryRows(db, "PRAGMA quick_check")[0]?.[0];
    return first === "ok" ? null : String(first);
  } catch (e) {
    return (e as Error).message;
  } finally {
    db.close();
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

/** An SQL identifier. */
export function quoteIdent(s: string): string {
  return '"' + s.replaceAll('"', '""') + '"';
}

/** An SQL string literal. */
export function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'";
}
