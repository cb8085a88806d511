/**
 * Server state I/O: reset a state directory from the seeds, snapshot it
 * through a read-only worker, verify that a reset is reproducible, and the
 * front door the runner observes state through (`observer.ts`);
 * `postgres_cluster.ts` runs the private PostgreSQL cluster of a run
 * (`postgres_live.ts` stops it on an interrupt).
 * `snapshot_worker.ts` is a worker program and is not re-exported here.
 * Reads and writes the disk.
 *
 * @module
 */
export * from "./reset.ts";
export * from "./snapshot.ts";
export * from "./verify_reset.ts";
export * from "./seed_ref.ts";
export * from "./budget.ts";
export * from "./postgres_cluster.ts";
export * from "./postgres_live.ts";
export * from "./observer.ts";
