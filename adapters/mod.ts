/**
 * State adapters: how each kind of state (a directory tree, a JSON file, a
 * SQLite database and its WAL) is read into sorted records. `sqlite.ts`
 * reads a database image through the WASM engine (`sql_engine.ts`) with a
 * cache of decoded pages (`sqlite_page_cache.ts`); `sqlite_seed.ts` builds
 * seed images. `postgres.ts` reads a PostgreSQL database through a query
 * function, typing text values with `pg_values.ts`.
 *
 * @module
 */
export * from "./fs.ts";
export * from "./json.ts";
export * from "./pg_values.ts";
export * from "./postgres.ts";
export * from "./sql_engine.ts";
export * from "./sqlite.ts";
export * from "./sqlite_page_cache.ts";
export * from "./sqlite_seed.ts";
export * from "./wal.ts";
