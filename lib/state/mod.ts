/**
 * Server state, the pure model: records and keys, JSON paths, masks
 * (normalize), delta, coverage and the types. Its I/O (reset, snapshot,
 * reset verification) is `lib/state_io/`.
 *
 * @module
 */
export * from "./coverage.ts";
export * from "./delta.ts";
export * from "./json_path.ts";
export * from "./keys.ts";
export * from "./normalize.ts";
export * from "./patched.ts";
export * from "./types.ts";
