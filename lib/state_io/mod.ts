/**
 * Server state I/O: reset a state directory from the seeds, snapshot it
 * through a read-only worker, and verify that a reset is reproducible.
 * `snapshot_worker.ts` is a worker program and is not re-exported here.
 * Reads and writes the disk.
 *
 * @module
 */
export * from "./reset.ts";
export * from "./snapshot.ts";
export * from "./verify_reset.ts";
export * from "./budget.ts";
