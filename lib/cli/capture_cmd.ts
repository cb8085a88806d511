/**
 * `verity capture`: record a live server's declarations as a manifest.
 *
 * Requires `--allow-run` (the server), `--allow-env`, and `--allow-write`
 * for `--out`.
 *
 * @module
 */
import { parseCommandLine, parseSeconds, stringOption } from "./args.ts";
import { UsageError } from "../errors.ts";
import { listedServer, LISTING_OPTIONS, remoteClient } from "./remote.ts";
import { captureManifest } from "../evidence/capture.ts";
import { prettyJson } from "../evidence/canonical.ts";
import { parseRecipe } from "./_observed.ts";
import { writeDocument } from "./_ledger.ts";
import { showControls, terminalText } from "../common/show_controls.ts";

/** Run `verity capture`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("capture", argv, {
    recipe: { type: "string" },
    out: { type: "string" },
    ledger: { type: "string" },
    ...LISTING_OPTIONS,
  }, false);
  const recipe = parseRecipe("capture", p.values.recipe);
  const out = p.values.out;
  if (out !== undefined && (typeof out !== "string" || out === "")) {
    throw new UsageError("verity capture: --out expects a file path");
  }
  const ledger = p.values.ledger;
  if (ledger !== undefined && (typeof out !== "string" || ledger === "")) {
    throw new UsageError(
      "verity capture: --ledger needs --out (the ledger records the written file)",
    );
  }
  const timeoutMs = parseSeconds("capture", "timeout", p.values.timeout, 30);
  const { remote, launched, command } = await listedServer("capture", p);
  const manifest = await captureManifest(
    launched === null
      ? { client: remoteClient(remote), shownAs: [remote.shownUrl] }
      : launched.spec,
    { recipe, timeoutMs, ...(launched === null ? {} : { command }) },
  ).finally(() => launched?.dispose());
  const text = prettyJson(manifest) + "\n";
  if (typeof out === "string") {
    await writeDocument("capture", "manifest", out, text, stringOption(ledger));
    const s = manifest.server;
    console.error(terminalText(
      `captured ${manifest.tools.length} tools from ${
        s.name ?? "an unnamed server"
      }${s.version ? " " + s.version : ""} under recipe ${recipe} -> ${out}`,
    ));
  } else {
    await Deno.stdout.write(new TextEncoder().encode(text));
  }
  for (const pr of manifest.problems) {
    console.error(terminalText(`problem: ${showControls(pr)}`));
  }
  return 0;
}
