/**
 * Build the single `verity` binary with `deno compile`, then write
 * SHA256SUMS beside it.
 *
 * `deno compile` needs the `denort` runtime for the target. It downloads it
 * unless `DENORT_BIN` points at one; where neither works (no network), this
 * script says so in one line and exits 1. Note: `DENORT_BIN` must be a real
 * `denort`, not the full `deno` binary (that builds a binary that starts a
 * REPL; see docs/decisions.md).
 *
 * Usage: deno task compile [--output dist/verity] [--target <triple>]
 * Requires `--allow-run --allow-read --allow-write --allow-env`.
 */
import { parseArgs } from "./_args.ts";
import { createHash } from "node:crypto";

/**
 * Modules loaded by path at run time, which `deno compile` must embed: the
 * snapshot worker (`new Worker(new URL(...))`) and the overlap-timer entry (`verity __overlap` runs it in a separate
 * process).
 */
export const INCLUDES = [
  "lib/state_io/snapshot_worker.ts",
  "lib/runner/overlap_timer.ts",
];

/** The `deno compile` arguments for one binary. */
export function compileArgs(output: string, target?: string): string[] {
  return [
    "compile",
    "--allow-all",
    "--unstable-worker-options",
    "--no-check",
    ...INCLUDES.flatMap((f) => ["--include", f]),
    "--output",
    output,
    ...(target ? ["--target", target] : []),
    "main.ts",
  ];
}

if (import.meta.main) await main();

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { output: { type: "string" }, target: { type: "string" } },
    strict: true,
  });
  const output = values.output ?? "dist/verity";
  const denort = Deno.env.get("DENORT_BIN");
  if (denort !== undefined) {
    try {
      const st = Deno.statSync(denort);
      if (!st.isFile) throw new Error("not a file");
    } catch {
      console.error(`compile: DENORT_BIN=${denort} is not a readable file`);
      Deno.exit(2);
    }
  }
  const args = compileArgs(output, values.target);
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "inherit",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  if (out.code !== 0) {
    // deno prints a chain of causes ("0: ...", "1: ..."); keep the deepest readable one.
    // deno-lint-ignore no-control-regex
    const lines = err.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) =>
      l.trim()
    );
    const causes = lines.filter((l) => /^\d+: /.test(l));
    const line = causes.find((l) => /request|download|denort/i.test(l)) ??
      causes[0] ??
      lines.find((l) => /error/i.test(l));
    const hint = denort === undefined
      ? " (the Deno runtime could not be fetched: set DENORT_BIN to a local denort binary)"
      : "";
    console.error(`compile: deno compile failed: ${line?.trim()}${hint}`);
    Deno.exit(1);
  }
  const bytes = Deno.readFileSync(output);
  const sum = createHash("sha256").update(bytes).digest("hex");
  const name = output.split("/").pop();
  Deno.writeTextFileSync(
    output.replace(/[^/]*$/, "SHA256SUMS"),
    `${sum}  ${name}\n`,
  );
  console.log(`compiled ${output} (${bytes.length} bytes) sha256 ${sum}`);
}
