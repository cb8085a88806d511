/**
 * `verity prepare <target>`: the only networked step of an audit. Fetches
 * the target's pinned npm package into the project-local Deno cache
 * (`.verity/deno_dir`), checks every copy against the pinned integrity,
 * writes or checks the target's lockfile, extracts `{source}` and records
 * it all in `.verity/prepared.json`. Afterwards `verity run <target>
 * --audit` runs with no network.
 *
 * Requires `--allow-all` (runs `deno` and `npm`, writes `.verity/`).
 *
 * @module
 */
import { relative } from "node:path";
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { loadDefinition } from "../definition/load.ts";
import {
  checkCommandRunsPin,
  isNodeCommand,
  parseSourcePin,
} from "../prepare/source.ts";
import { cacheLayout, savePreparedTarget } from "../prepare/local.ts";
import { fetchPinned, fetchPinnedNode } from "../prepare/fetch.ts";

/** Run `verity prepare`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("prepare", argv, {
    "update-lock": { type: "boolean" },
  });
  if (p.positionals.length !== 1) {
    throw new UsageError(
      "verity prepare: expected one target (a name under targets/ or a path)",
    );
  }
  const def = await loadDefinition(p.positionals[0]!);
  if (def.kind !== "target") {
    throw new UsageError(
      `verity prepare: ${def.file} is a fixture; only targets are prepared`,
    );
  }
  if (def.source === null) {
    throw new UsageError(
      `verity prepare: ${def.file} has no [source]; there is nothing to fetch (its command runs as given)`,
    );
  }
  const pin = parseSourcePin(def.source, def.file);
  checkCommandRunsPin(def.command, pin, def.file);
  const layout = cacheLayout();
  const node = isNodeCommand(def.command);
  const r = await (node ? fetchPinnedNode : fetchPinned)(pin, {
    layout,
    name: def.name,
    targetDir: def.dir,
    definitionFile: def.file,
    updateLock: p.values["update-lock"] === true,
    say: (s) => console.error(`verity: ${s}`),
  });
  await savePreparedTarget(layout, def.dir, r.entry);
  const rel = (x: string) => relative(Deno.cwd(), x) || ".";
  console.log(`prepared ${def.name}: ${pin.package}@${pin.version}`);
  console.log(
    `  integrity  ${pin.integrity} (pinned) = ${
      r.entry.tarball ? "npm tarball = " : ""
    }${rel(r.lockPath)}`,
  );
  console.log(
    `  lockfile   ${rel(r.lockPath)} (${
      r.newLock ? "written: commit it" : "frozen, unchanged"
    }), ${r.entry.packages.length} npm packages`,
  );
  console.log(
    `  ${node ? "install   " : "cache     "} ${
      rel(
        node ? `${layout.root}/${r.entry.nodeModules ?? ""}` : layout.denoDir,
      )
    }`,
  );
  console.log(`  source     ${rel(r.sourceDir)} (${r.files} files)`);
  console.log(`  recorded   ${rel(layout.preparedFile)}`);
  console.log(
    `verity run ${p.positionals[0]} --audit now runs without the network.`,
  );
  return 0;
}
