/**
 * The sqlite adapter: one page reader for every SQLite path. `format.ts`
 * reads the file format (pages, the varint, record headers, serial
 * types, overflow chains) and `wal.ts` the write-ahead log; `btree.ts`
 * walks the b-trees; `plan.ts` plans each table with SQLite itself on an
 * empty database; `read.ts` is the snapshot, `diff.ts` (with `keyed.ts`
 * for tables keyed otherwise than by rowid) the page-by-page comparison
 * of two databases, `stream.ts` a database's tables as streams of
 * records in key order. `sql.ts` opens what the pages leave to SQLite.
 * Anything the page reader does not handle throws
 * {@linkcode PageWalkError}.
 *
 * @module
 */
export * from "./btree.ts";
export * from "./diff.ts";
export * from "./format.ts";
export * from "./page_walk_error.ts";
export * from "./plan.ts";
export * from "./read.ts";
export * from "./stream.ts";
export * from "./wal.ts";
