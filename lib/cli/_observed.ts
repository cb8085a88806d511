/**
 * `--observed-out FILE [--recipe N]` for `verity run` and `verity reality`:
 * parse the options, write the observed records atomically.
 *
 * @module
 */
import { resolve } from "node:path";
import { UsageError } from "../errors.ts";
import { DEFAULT_RECIPE, isRecipe, type Recipe } from "../evidence/recipes.ts";
import {
  type ObservedRecords,
  observedRecords,
  type ObservedSource,
} from "../report/observed.ts";
import { writeFileAtomic } from "./_io.ts";

/** Where the observed records go and under which recipe. */
export interface ObservedOptions {
  file: string;
  recipe: Recipe;
}

/** Read `--observed-out` and `--recipe`; null without `--observed-out`. */
export function observedOptions(
  command: string,
  values: Record<string, unknown>,
): ObservedOptions | null {
  const out = values["observed-out"];
  if (out === undefined) {
    if (values.recipe !== undefined) {
      throw new UsageError(
        `verity ${command}: --recipe needs --observed-out (it is the recipe of the observed records' contract hashes)`,
      );
    }
    return null;
  }
  if (typeof out !== "string" || out === "") {
    throw new UsageError(
      `verity ${command}: --observed-out expects a file path`,
    );
  }
  return { file: resolve(out), recipe: parseRecipe(command, values.recipe) };
}

/** `--recipe N` (default {@linkcode DEFAULT_RECIPE}); an unknown one is a {@linkcode UsageError}. */
export function parseRecipe(command: string, v: unknown): Recipe {
  const recipe = v ?? DEFAULT_RECIPE;
  if (!isRecipe(recipe)) {
    throw new UsageError(
      `verity ${command}: --recipe: unknown contract recipe ${
        JSON.stringify(recipe)
      } (known: 1, 2, 3)`,
    );
  }
  return recipe;
}

/**
 * Write the observed records (atomically, replacing the file) and say so
 * on stderr. Requires `--allow-write`.
 */
export async function writeObserved(
  o: ObservedOptions,
  src: ObservedSource,
): Promise<void> {
  await writeObservedDoc(o, observedRecords(src, o.recipe));
}

/** Write an observed-records document (atomically) and say so on stderr. */
export async function writeObservedDoc(
  o: ObservedOptions,
  doc: ObservedRecords,
): Promise<void> {
  await writeFileAtomic(o.file, JSON.stringify(doc, null, 1) + "\n");
  console.error(
    `verity: wrote ${o.file} (${doc.observations.length} observed call(s), recipe ${o.recipe})`,
  );
}
