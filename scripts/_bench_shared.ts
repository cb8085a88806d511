/**
 * Helpers the benchmarks share: the ledger record they chain, and a
 * scratch root where synthetic fixtures can import what the bundled ones do.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { AdapterDef, Definition } from "../lib/definition/types.ts";
import { adapterDef, bareDefinition } from "../tests/_definition.ts";

/** A record shaped like what `verity run` appends: a report digest and a little provenance. */
export function ledgerRecord(i: number): unknown {
  const hex = createHash("sha256").update(String(i)).digest("hex");
  return {
    run_id: `2026-11-30T00-00-00Z-${i.toString(16).padStart(6, "0")}`,
    report: `runs/${i}/report.json`,
    digest: `sha256:${hex}`,
    target: "fixtures/honest-readonly",
    verdicts: { PASS: 3, VIOLATION: i % 7 === 0 ? 1 : 0, INCONCLUSIVE: 1 },
    harness: { version: "0.1.0", deno: "2.9.6" },
  };
}

/**
 * A new temporary directory holding the repository's deno.json, deno.lock
 * and fixtures/_shared (as `_shared`), so fixtures written under it resolve
 * the same imports as the bundled ones.
 */
export async function fixtureRoot(
  root: string,
  prefix: string,
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  await Deno.copyFile(join(root, "deno.json"), join(dir, "deno.json"));
  await Deno.copyFile(join(root, "deno.lock"), join(dir, "deno.lock"));
  await Deno.mkdir(join(dir, "_shared"));
  for (const e of Deno.readDirSync(join(root, "fixtures", "_shared"))) {
    if (e.isFile) {
      await Deno.copyFile(
        join(root, "fixtures", "_shared", e.name),
        join(dir, "_shared", e.name),
      );
    }
  }
  return dir;
}

/**
 * The definition a state benchmark observes: one sqlite adapter on
 * `state.db` in `dir`, with `items` as business state and the adapter's
 * other settings as given (append-only tables, masks).
 */
export function sqliteBenchDefinition(
  dir: string,
  adapter: Pick<AdapterDef, "append_only" | "mask">,
): Definition {
  return bareDefinition(dir, [
    adapterDef("sqlite", "state.db", { business: ["items"], ...adapter }),
  ], { name: "bench", locations: ["sqlite:state.db"] });
}

/** `a / b` as a ratio (`0.123x`), or n/a when sqldiff took no measurable CPU (tiny stores). */
export function ratioText(a: number, b: number, digits: number): string {
  return b > 0 ? `${(a / b).toFixed(digits)}x` : "n/a (sqldiff under 1 ms CPU)";
}
