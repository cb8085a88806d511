/**
 * The census: many published servers audited from one list, sharded so it
 * runs on engines people already operate (a CI matrix, a Kubernetes Indexed
 * Job), merged into one result. Pure: the list, shards, the document and
 * its summary, the HTML page. Effectful: `prepare.ts`
 * (fetches packages), `audit.ts` (runs servers), `run.ts`, `merge.ts`,
 * `output.ts` (write the census directory).
 *
 * @module
 */
export * from "./list.ts";
export * from "./shard.ts";
export * from "./result.ts";
export * from "./html.ts";
export * from "./bin.ts";
export * from "./prepare.ts";
export * from "./audit.ts";
export * from "./output.ts";
export * from "./run.ts";
export * from "./merge.ts";
