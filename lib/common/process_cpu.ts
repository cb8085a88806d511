/**
 * The CPU time of this process, for benchmarks (`VERITY_PHASE_TIMES`):
 * `getrusage` through `node:process`.
 *
 * @module
 */

import process from "node:process";

/**
 * CPU milliseconds this process has used so far, every thread (workers
 * included), user + system, in microsecond resolution (`getrusage`).
 *
 * @example
 * ```ts
 * import { selfCpuMs } from "./process_cpu.ts";
 * console.assert(selfCpuMs() >= 0);
 * ```
 */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
