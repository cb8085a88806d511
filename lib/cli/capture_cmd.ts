/**
 * `verity capture`: record a live server's declarations as a manifest.
 *
 * Requires `--allow-run` (the server), `--allow-env`, and `--allow-write`
 * for `--out`.
 *
 * @module
 */
import { COMMAND_HELP } from "./help.ts";
import {
  baseEnv,
  parseCommandLine,
  parseEnvPairs,
  parseSeconds,
  requireServerCommand,
} from "./args.ts";
import { UsageError } from "../errors.ts";
import {
  parseRemote,
  refuseWithUrl,
  REMOTE_OPTIONS,
  remoteClient,
} from "./remote.ts";
import { captureManifest } from "../evidence/capture.ts";
import { launchCommand } from "../launcher/command.ts";
import { prettyJson } from "../evidence/canonical.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { DEFAULT_RECIPE, isRecipe } from "../evidence/recipes.ts";
import { appendDocumentToLedger } from "./_ledger.ts";
import { showControls, terminalText } from "../common/show_controls.ts";

export const HELP: string = COMMAND_HELP["capture"];

/** Run `verity capture`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("capture", argv, {
    recipe: { type: "string" },
    out: { type: "string" },
    ledger: { type: "string" },
    timeout: { type: "string" },
    env: { type: "string", multiple: true },
    "no-sandbox": { type: "boolean" },
    offline: { type: "boolean" },
    ...REMOTE_OPTIONS,
  }, false);
  const recipe = p.values.recipe ?? DEFAULT_RECIPE;
  if (!isRecipe(recipe)) {
    throw new UsageError(
      `verity capture: --recipe: unknown contract recipe ${
        JSON.stringify(recipe)
      } (known: 1, 2, 3)`,
    );
  }
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
  const remote = parseRemote("capture", p);
  if (remote !== null) {
    refuseWithUrl("capture", p, ["env", "no-sandbox", "offline"]);
  }
  const command = remote === null ? requireServerCommand("capture", p) : [];
  const launched = remote !== null ? null : await launchCommand(
    command,
    parseEnvPairs("capture", p.values.env),
    {
      noSandbox: p.values["no-sandbox"] === true,
      hostEnv: baseEnv({}),
      commandName: "verity capture",
      offline: p.values.offline === true,
    },
  );
  const manifest = await captureManifest(
    launched === null
      ? { client: remoteClient(remote!), shownAs: [remote!.shownUrl] }
      : launched.spec,
    { recipe, timeoutMs, ...(launched === null ? {} : { command }) },
  ).finally(() => launched?.dispose());
  const text = prettyJson(manifest) + "\n";
  if (typeof out === "string") {
    try {
      await writeTextFileAtomic(out, text);
    } catch (e) {
      throw new UsageError(
        `verity capture: --out ${out}: cannot write: ${(e as Error).message}`,
      );
    }
    const s = manifest.server;
    console.error(terminalText(
      `captured ${manifest.tools.length} tools from ${
        s.name ?? "an unnamed server"
      }${s.version ? " " + s.version : ""} under recipe ${recipe} -> ${out}`,
    ));
    if (typeof ledger === "string") {
      const b = await appendDocumentToLedger(ledger, "manifest", out, text);
      console.error(
        `ledger: ${b.path} block ${b.index} records ${out} (${b.digest}), head ${b.head}`,
      );
    }
  } else {
    await Deno.stdout.write(new TextEncoder().encode(text));
  }
  for (const pr of manifest.problems) {
    console.error(terminalText(`problem: ${showControls(pr)}`));
  }
  return 0;
}
