/**
 * The seed state by reference: whether a definition's seed is rebuilt
 * exactly by every reset (so a report may name it instead of storing its
 * records: `verity.report/3`), and the rebuild `verity report verify`
 * does from the definition.
 *
 * Reads and writes the disk (a temporary state directory).
 *
 * @module
 */
import { seedBudget } from "./budget.ts";
import type { Definition } from "../definition/types.ts";
import { seedPath } from "../definition/seeds.ts";
import { isSqliteImage, nondeterministicSql, resetState } from "./reset.ts";
import { normalize } from "../state/normalize.ts";
import type { Snapshot } from "../state/types.ts";
import { takeSnapshot } from "./snapshot.ts";

/**
 * Why `def`'s seed cannot be kept by reference, or null when it can: no
 * postgres adapter (its seed needs a cluster to rebuild) and no SQL seed
 * calling a clock or random function (its image differs between builds).
 * The run must also have verified its reset (two resets, one digest): the
 * caller checks that. Requires `--allow-read`.
 */
export async function seedNotReproducible(
  def: Pick<Definition, "adapters" | "dir" | "file">,
): Promise<string | null> {
  for (const a of def.adapters) {
    if (a.kind === "postgres") {
      return `adapter ${a.label}: a postgres seed is rebuilt only with a cluster`;
    }
    if (a.kind !== "sqlite" || a.seed === null) continue;
    const bytes = await Deno.readFile(seedPath(def, a.seed));
    if (isSqliteImage(bytes)) continue;
    if (nondeterministicSql(new TextDecoder().decode(bytes))) {
      return `adapter ${a.label}: seed ${a.seed} calls a clock or random function`;
    }
  }
  return null;
}

/**
 * The seed of `def` rebuilt (reset into a new temporary directory) and
 * snapshotted, normalized; the directory is removed; `RangeError` when the
 * seed is not reproducible. What `verity report verify` checks a
 * `verity.report/3` report with. Requires `--allow-read` and
 * `--allow-write`.
 *
 * @example
 * ```ts ignore
 * const seed = await rebuiltSeed(def);
 * ```
 */
export async function rebuiltSeed(def: Definition): Promise<Snapshot> {
  const why = await seedNotReproducible(def);
  if (why !== null) throw new RangeError(`seed not rebuildable: ${why}`);
  const work = await Deno.makeTempDir({ prefix: "verity-seed-" });
  try {
    const dir = `${work}/state`;
    await resetState(def, dir);
    const snap = await takeSnapshot(def, dir, {
      budget: await seedBudget(dir),
    });
    return normalize(snap, def);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}
