/**
 * The CPU time of this process, for benchmarks (`VERITY_PHASE_TIMES`):
 * read from `/proc/self/stat` (Linux).
 *
 * Requires `--allow-read` (`/proc`).
 *
 * @module
 */

/** CPU milliseconds of this process and of the children it has waited for. */
export interface ProcessCpu {
  /** This process: every thread (workers included), user + system. */
  self: number;
  /** Its waited-for children, user + system (only those reaped through it). */
  children: number;
}

/**
 * This process's CPU time so far, or null off Linux (or when `/proc` cannot
 * be read).
 *
 * @example
 * ```ts
 * import { processCpu } from "./process_cpu.ts";
 * const cpu = processCpu();
 * console.assert(cpu === null || cpu.self >= 0);
 * ```
 */
export function processCpu(): ProcessCpu | null {
  try {
    const stat = Deno.readTextFileSync("/proc/self/stat");
    // The command name (field 2) may hold spaces: skip past its last ")".
    // rest[0] is field 3; utime, stime, cutime, cstime are fields 14-17,
    // in clock ticks (USER_HZ, 100 on Linux: 10 ms each).
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
    const [ut, st, cut, cst] = [f[11], f[12], f[13], f[14]];
    if (![ut, st, cut, cst].every((v) => Number.isFinite(v))) return null;
    return { self: (ut! + st!) * 10, children: (cut! + cst!) * 10 };
  } catch {
    return null;
  }
}
