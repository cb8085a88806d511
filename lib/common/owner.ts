/**
 * Who owns a lock, a scratch directory or a half-finished run: a process
 * id plus that process's start time, so a recycled pid is never taken for
 * the original owner. Reads `/proc` (Linux); elsewhere only the pid is
 * checked.
 *
 * Requires `--allow-read` (`/proc`).
 *
 * @module
 */

/** A process, identified so that pid reuse is detected. */
export interface Owner {
  pid: number;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22), or null off Linux. */
  start: number | null;
}

/** The start time of `pid` (clock ticks since boot), or null when unknown or gone. */
export function processStart(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name (field 2) may hold spaces and parentheses: skip past its last ")".
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const v = Number(rest[19]);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

/** This process as an owner. */
export function selfOwner(): Owner {
  return { pid: Deno.pid, start: processStart(Deno.pid) };
}

/**
 * Whether `owner` is still running: its pid exists and, where start times
 * are known, started when the owner did.
 *
 * @example
 * ```ts
 * import { ownerAlive, selfOwner } from "./owner.ts";
 * console.assert(ownerAlive(selfOwner()));
 * ```
 */
export function ownerAlive(owner: Owner): boolean {
  if (Deno.build.os === "linux") {
    const start = processStart(owner.pid);
    if (start === null) return false;
    return owner.start === null || owner.start === start;
  }
  try {
    Deno.kill(owner.pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

/** Parse an owner record written by {@linkcode ownerText}; null when it is not one. */
export function parseOwner(text: string): Owner | null {
  try {
    const v = JSON.parse(text) as { pid?: unknown; start?: unknown };
    if (typeof v.pid !== "number" || !Number.isInteger(v.pid) || v.pid <= 0) {
      return null;
    }
    if (v.start !== null && typeof v.start !== "number") return null;
    return { pid: v.pid, start: v.start };
  } catch {
    return null;
  }
}

/** The text of an owner record. */
export function ownerText(owner: Owner): string {
  return JSON.stringify({ pid: owner.pid, start: owner.start }) + "\n";
}

/**
 * The owner file of a scratch directory (`verity-run-*`, `verity-cmd-*`,
 * `verity-seeds-*`): one whose owner is dead is removed by the next run
 * (`cleanScratch`), even after a SIGKILL, where no exit handler runs.
 */
export const SCRATCH_OWNER = ".owner";

/** Write this process as the owner of `dir`, in its file `name` (a scratch directory's owner file by default). */
export async function markOwner(
  dir: string,
  name: string = SCRATCH_OWNER,
): Promise<void> {
  await Deno.writeTextFile(`${dir}/${name}`, ownerText(selfOwner()));
}
