/**
 * SQLite compiled to WASM (`npm:sql.js`): the engine the sqlite adapter and
 * the reset seed use, loaded once per process.
 *
 * @module
 */
import initSqlJs from "sql.js";

/** The part of sql.js this adapter uses. */
export interface SqlStatement {
  step(): boolean;
  get(params?: unknown, config?: { useBigInt?: boolean }): unknown[];
  free(): void;
}
export interface SqlDatabase {
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
