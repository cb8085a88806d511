/**
 * Reset verification: reset twice into fresh directories, snapshot both,
 * normalize, and require identical state. A definition whose reset is not
 * reproducible cannot be judged (`RESET_UNVERIFIED`).
 *
 * @module
 */
import { seedBudget } from "./budget.ts";
import type { Definition } from "../definition/types.ts";
import { computeDelta, type Delta, snapshotDigest } from "../state/delta.ts";
import { normalize } from "../state/normalize.ts";
import { resetState } from "./reset.ts";
import { takeSnapshot } from "./snapshot.ts";
import type { Snapshot } from "../state/types.ts";
import { clusterFor, postgresAdapters } from "./postgres_cluster.ts";

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
  try {
    const snaps: Snapshot[] = [];
    for (const d of dirs) {
      await resetState(def, d, { postgres });
      // A seed of any size is verity's to read: the budget is on what a
      // server adds to it.
      const budget = await seedBudget(d);
      snaps.push(
        normalize(await takeSnapshot(def, d, { postgres, budget }), def),
      );
      for (const a of postgresAdapters(def)) {
        await postgres?.dropSession(d, a);
      }
    }
    const [a, b] = snaps as [Snapshot, Snapshot];
    const delta = computeDelta(a, b);
    const digests: [string, string] = [snapshotDigest(a), snapshotDigest(b)];
    const problems = [
      ...a.problems.map((p) => `reset 1: ${p}`),
      ...b.problems.map((p) => `reset 2: ${p}`),
    ];
    return {
      verified: delta.empty && digests[0] === digests[1],
      digests,
      delta,
      problems,
      seeded: a,
      dirs,
    };
  } finally {
    await postgres?.stop();
    if (!options.keep) {
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  }
}
