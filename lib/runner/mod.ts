/**
 * The runner: the run plan (pure, `plan.ts`) and the code that executes it,
 * starting the battery's sessions and recording what happened
 * (`runner.ts`), with the pool of out-of-process overlap timers. (Reality,
 * init, tools, capture and the census open sessions of their own.) `overlap_timer.ts` is the `verity __overlap`
 * subprocess program and is not re-exported here.
 *
 * @module
 */
export * from "./overlap_pool.ts";
export * from "./plan.ts";
export * from "./runner.ts";
export * from "./self.ts";
