/**
 * Tool contracts: the raw `tools/list` pages parsed into one
 * {@linkcode Contract} per tool with its five hints (true, false, absent or
 * malformed) and the listing's problems. Pure.
 *
 * @module
 */
export * from "./contracts.ts";
export * from "./json_reader.ts";
export * from "./task_support.ts";
