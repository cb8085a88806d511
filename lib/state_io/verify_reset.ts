/**
 * Reset verification (`verity verify-reset`): reset twice into fresh
 * directories and let the declared observer compare them, as a run does
 * before its battery; identical state is required. A definition whose reset is not
 * reproducible cannot be judged (`RESET_UNVERIFIED`).
 *
 * @module
 */
import type { Definition } from "../definition/types.ts";
import { computeDelta, type Delta } from "../state/delta.ts";
import { resetState } from "./reset.ts";
import { DeclaredStateObserver } from "./observer.ts";
import type { Snapshot } from "../state/types.ts";
import { clusterFor } from "./postgres_cluster.ts";

/** The evidence of a reset verification. */
export interface ResetVerification {
  verified: boolean;
  /** Digests of the two normalized snapshots. */
  digests: [string, string];
  /** What differs from the first reset to the second (empty when verified). */
  delta: Delta;
  /** Problems seen by either snapshot, prefixed with "reset 1:" / "reset 2:". */
  problems: string[];
  /** The first reset's normalized snapshot: the seeded state. */
  seeded: Snapshot;
}

/** Options of {@linkcode verifyReset}. */
export interface VerifyResetOptions {
  /** Keep the two state directories (in a new temporary directory) instead of removing them. @default false */
  keep?: boolean;
}

/**
 * Reset twice and compare. Requires `--allow-read` and `--allow-write`
 * (temporary directory).
 *
 * @example
 * ```ts
 * import type { Definition } from "../definition/types.ts";
 *
 * async function check(def: Definition): Promise<boolean> {
 *   const v = await verifyReset(def);
 *   return v.verified;
 * }
 * ```
 */
export async function verifyReset(
  def: Definition,
  options: VerifyResetOptions = {},
): Promise<ResetVerification & { dirs: [string, string] }> {
  const work = await Deno.makeTempDir({ prefix: "verity-reset-" });
  const dirs: [string, string] = [`${work}/reset-1`, `${work}/reset-2`];
  // A postgres adapter: a private cluster for these two resets only.
  const postgres = await clusterFor(def, `${work}/postgres`);
  // The run's own observer, as `verity run` verifies its reset.
  const observer = new DeclaredStateObserver(def, work, {
    postgres: () => postgres,
  });
  try {
    for (const d of dirs) await resetState(def, d, { postgres });
    const { verified, digests } = await observer.seed(...dirs);
    const [a, b] = digests.map((d) => observer.states.get(d)!) as [
      Snapshot,
      Snapshot,
    ];
    return {
      verified,
      digests: [digests[0]!, digests[1]!],
      delta: computeDelta(a, b),
      problems: [
        ...a.problems.map((p) => `reset 1: ${p}`),
        ...b.problems.map((p) => `reset 2: ${p}`),
      ],
      seeded: a,
      dirs,
    };
  } finally {
    await observer.close();
    await postgres?.stop();
    if (!options.keep) {
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  }
}
