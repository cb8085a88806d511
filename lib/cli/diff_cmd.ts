/**
 * `verity diff`: compare two manifests and name every contract that moved.
 *
 * Requires `--allow-read`.
 *
 * @module
 */
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { prettyJson } from "../evidence/canonical.ts";
import { diffDeclarations, renderDiff } from "../evidence/diff.ts";
import { readJsonDocument } from "../evidence/files.ts";
import { readDeclaration } from "../evidence/manifest.ts";
import { parseRecipe } from "./_observed.ts";
import { terminalJson, terminalText } from "../common/show_controls.ts";

/** Run `verity diff`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("diff", argv, {
    json: { type: "boolean" },
    recipe: { type: "string" },
  });
  if (p.serverCommand !== null) {
    throw new UsageError(
      "verity diff: takes two manifest files, not a server command",
    );
  }
  if (p.positionals.length !== 2) {
    throw new UsageError(
      `verity diff: expects two manifest files, got ${p.positionals.length} (see verity diff --help)`,
    );
  }
  const [fa, fb] = p.positionals as [string, string];
  const opts = p.values.recipe === undefined
    ? {}
    : { recipe: parseRecipe("diff", p.values.recipe) };
  const a = readDeclaration((await readJsonDocument(fa)).value, fa, opts);
  const b = readDeclaration((await readJsonDocument(fb)).value, fb, opts);
  const result = diffDeclarations(a, b);
  console.log(
    p.values.json
      ? terminalJson(prettyJson(result))
      : terminalText(renderDiff(result)),
  );
  if (result.status === "recipe_mismatch") return 2;
  return result.status === "drift" ? 1 : 0;
}
