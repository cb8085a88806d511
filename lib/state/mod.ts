/**
 * Server state: the pure model (records and keys, normalize, delta,
 * coverage, types, paths) and its I/O (reset, snapshot, verify reset).
 * `snapshot_worker.ts` is a worker program and is not re-exported here.
 *
 * @module
 */
export * from "./coverage.ts";
export * from "./delta.ts";
export * from "./keys.ts";
export * from "./normalize.ts";
export * from "./paths.ts";
export * from "./reset.ts";
export * from "./snapshot.ts";
export * from "./types.ts";
export * from "./verify_reset.ts";
