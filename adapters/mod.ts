/**
 * State adapters: how each kind of state (a directory tree, a JSON file, a
 * SQLite database and its WAL, a PostgreSQL database) is read into sorted
 * records. `sqlite/` reads SQLite databases page by page (its face:
 * `sqlite/mod.ts`); `postgres.ts` reads a PostgreSQL database through a
 * query function, typing text values with `pg_values.ts`.
 *
 * @module
 */
export * from "./fs.ts";
export * from "./json.ts";
export * from "./pg_values.ts";
export * from "./postgres.ts";
export * from "./sqlite/mod.ts";
