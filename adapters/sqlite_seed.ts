/**
 * Seed images: a SQLite database image built in memory from a SQL script
 * (the seed of a reset).
 *
 * @module
 */
import type { SqlEngine } from "./sql_engine.ts";

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
