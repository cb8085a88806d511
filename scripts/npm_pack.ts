/**
 * Build the npm package `verity-mcp`: `bin/verity` (npm/bin/verity.cjs) runs
 * verity's code (`app/`: the same files as the offline bundle) on the Deno
 * runtime of the `deno` npm package, pinned as a dependency. Packs it with
 * `npm pack` into `dist/verity-mcp-<version>.tgz`.
 *
 * Usage: deno task npm-pack [--out dist]
 * Requires `--allow-all` (git, npm, files).
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { dirname, join, resolve } from "node:path";
import { VERSION } from "../lib/version.ts";
import { DENO_VERSION, isAppFile } from "./release.ts";

/** The npm package's name. */
export const PACKAGE_NAME = "verity-mcp";

const ROOT = resolve(new URL("..", import.meta.url).pathname);

/** The package.json of the npm package. */
export function packageJson(version: string): Record<string, unknown> {
  return {
    name: PACKAGE_NAME,
    version,
    description:
      "Check whether an MCP server does what its tool hints declare (verity, on the Deno runtime from npm)",
    license: "Apache-2.0",
    bin: { verity: "bin/verity.cjs" },
    files: ["bin/", "app/", "README.md", "LICENSE", "NOTICE"],
    engines: { node: ">=18" },
    dependencies: { deno: DENO_VERSION },
  };
}

async function output(cmd: string, args: string[], cwd: string) {
  const r = await new Deno.Command(cmd, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (r.code !== 0) {
    throw new Error(
      `${cmd} ${args[0]} failed: ${new TextDecoder().decode(r.stderr).trim()}`,
    );
  }
  return new TextDecoder().decode(r.stdout);
}

/** Stage and pack the package; returns the .tgz path. */
export async function pack(out: string): Promise<string> {
  const dest = resolve(out);
  const stage = join(dest, "npm-package");
  await Deno.remove(stage, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(stage, "bin"), { recursive: true });
  await Deno.writeTextFile(
    join(stage, "package.json"),
    JSON.stringify(packageJson(VERSION), null, 2) + "\n",
  );
  await Deno.copyFile(
    join(ROOT, "npm", "bin", "verity.cjs"),
    join(stage, "bin", "verity.cjs"),
  );
  await Deno.chmod(join(stage, "bin", "verity.cjs"), 0o755);
  await Deno.copyFile(join(ROOT, "npm", "README.md"), join(stage, "README.md"));
  for (const f of ["LICENSE", "NOTICE"]) {
    await Deno.copyFile(join(ROOT, f), join(stage, f));
  }
  const files = (await output("git", ["ls-files"], ROOT)).split("\n")
    .filter((f) => f !== "" && isAppFile(f));
  for (const f of files) {
    const to = join(stage, "app", f);
    await Deno.mkdir(dirname(to), { recursive: true });
    await Deno.copyFile(join(ROOT, f), to);
  }
  const packed = await output("npm", [
    "pack",
    "--loglevel=error",
    "--pack-destination",
    dest,
  ], stage);
  const name = packed.trim().split("\n").pop() ?? "";
  await Deno.remove(stage, { recursive: true });
  return join(dest, name);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" } },
    strict: true,
  });
  try {
    const tgz = await pack(values.out ?? "dist");
    console.log(`packed ${tgz} (${(await Deno.stat(tgz)).size} bytes)`);
  } catch (e) {
    console.error(`npm-pack: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
