/**
 * The runner: the run plan (pure, `plan.ts`) and the only code that starts
 * sessions and records what happened (`runner.ts`), with the pool of
 * out-of-process overlap timers. `overlap_timer.ts` is the `verity __overlap`
 * subprocess program and is not re-exported here.
 *
 * @module
 */
export * from "./overlap_pool.ts";
export * from "./plan.ts";
export * from "./runner.ts";
export * from "./self.ts";
