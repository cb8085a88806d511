/**
 * The per-session state budget: how much a server may leave in its state
 * directory, beyond the seed it started from, before verity refuses to
 * observe it. A server that writes a
 * 3 GiB (even sparse) file, or a million small ones, ends its session with
 * a named reason instead of making every snapshot read it all.
 *
 * Requires `--allow-read` on the state directory.
 *
 * @module
 */

/** Limits on one session's state directory. */
export interface StateBudget {
  /**
   * Most bytes (apparent file sizes, links not followed).
   * @default {1024 * 1024 * 1024}
   */
  maxBytes?: number;
  /**
   * Most entries (files, directories, links).
   * @default {100_000}
   */
  maxEntries?: number;
}

/** What a state directory holds. */
export interface StateUsage {
  bytes: number;
  entries: number;
}

/** Default budget: 1 GiB in 100,000 entries. */
export const DEFAULT_STATE_BUDGET: Required<StateBudget> = {
  maxBytes: 1024 * 1024 * 1024,
  maxEntries: 100_000,
};

/** Thrown when a state directory is over its budget; the message names the limit. */
export class StateBudgetError extends Error {
  override name = "StateBudgetError";
  constructor(
    message: string,
    /** What was measured (up to the point the walk stopped). */
    readonly usage: StateUsage,
  ) {
    super(message);
  }
}

function gib(n: number): string {
  return n >= 1024 * 1024 * 1024
    ? `${(n / 1024 / 1024 / 1024).toFixed(1)} GiB`
    : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The reason `usage` is over `budget`, or null. Pure.
 *
 * @example
 * ```ts
 * import { overBudget } from "./budget.ts";
 * console.assert(overBudget({ bytes: 5, entries: 1 }, { maxBytes: 4 }) !== null);
 * ```
 */
export function overBudget(
  usage: StateUsage,
  budget: StateBudget = {},
): string | null {
  const b = { ...DEFAULT_STATE_BUDGET, ...budget };
  if (usage.bytes > b.maxBytes) {
    return `state budget exceeded: more than ${gib(b.maxBytes)} (${
      gib(usage.bytes)
    } seen so far)`;
  }
  if (usage.entries > b.maxEntries) {
    return `state budget exceeded: more than ${b.maxEntries} files and directories`;
  }
  return null;
}

/**
 * Walk `stateDir` (links not followed) adding up apparent sizes and
 * entries, and throw {@linkcode StateBudgetError} as soon as the budget is
 * passed. Reads metadata only, never file contents.
 *
 * @example
 * ```ts ignore
 * await checkStateBudget("/tmp/verity-run-1/state"); // throws when over
 * ```
 */
export async function checkStateBudget(
  stateDir: string,
  budget: StateBudget = {},
): Promise<StateUsage> {
  const usage: StateUsage = { bytes: 0, entries: 0 };
  const stack = [stateDir];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let it: AsyncIterable<Deno.DirEntry>;
    try {
      it = Deno.readDir(dir);
    } catch {
      continue;
    }
    try {
      for await (const e of it) {
        usage.entries++;
        const path = `${dir}/${e.name}`;
        if (e.isDirectory) stack.push(path);
        else if (e.isFile) {
          try {
            usage.bytes += (await Deno.lstat(path)).size;
          } catch {
            // gone meanwhile
          }
        }
        const why = overBudget(usage, budget);
        if (why !== null) throw new StateBudgetError(why, usage);
      }
    } catch (e) {
      if (e instanceof StateBudgetError) throw e;
      // unreadable directory: the snapshot reports it
    }
  }
  return usage;
}

/**
 * The budget of a session that starts from the state in `seedDir` (as a
 * reset laid it): the seed's own bytes and entries plus the default
 * allowance, so the limit is on what a server adds, not on the store the
 * definition seeds. Reads metadata only.
 *
 * @example
 * ```ts ignore
 * const budget = await seedBudget("/tmp/verity-run-1/reset-1/state");
 * await checkStateBudget("/tmp/verity-run-1/session-3/state", budget);
 * ```
 */
export async function seedBudget(
  seedDir: string,
): Promise<Required<StateBudget>> {
  const seed = await checkStateBudget(seedDir, {
    maxBytes: Infinity,
    maxEntries: Infinity,
  });
  return {
    maxBytes: DEFAULT_STATE_BUDGET.maxBytes + seed.bytes,
    maxEntries: DEFAULT_STATE_BUDGET.maxEntries + seed.entries,
  };
}
