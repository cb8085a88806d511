/**
 * `parseArgs` for the scripts, as node:util's, plus what a user of a
 * script expects: `--help` (or `-h`) prints the script's own doc comment
 * and exits 0; an unknown option or a missing value is one line naming it,
 * exit 2 (never a stack trace).
 *
 * @module
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";

/** The first doc comment of a script's source, without its `*` margins. */
export function docComment(source: string): string | null {
  const m = /\/\*\*([\s\S]*?)\*\//.exec(source);
  if (m === null) return null;
  return m[1]!.split("\n").map((l) => l.replace(/^\s*\* ?/, "")).join("\n")
    .replace(/^\n+|\s+$/g, "").replace(/\n@module$/, "").trimEnd();
}

function scriptPath(): string | null {
  try {
    return fileURLToPath(Deno.mainModule);
  } catch {
    return null;
  }
}

/**
 * node:util's `parseArgs` for a script run from the command line: `--help`
 * prints the main module's doc comment and exits 0; a parse error is one
 * line on stderr and exit 2.
 */
export function parseArgs<T extends ParseArgsConfig>(
  config: T,
): ReturnType<typeof nodeParseArgs<T>> {
  const path = scriptPath();
  const name = path === null ? "script" : basename(path);
  const args = config.args ?? Deno.args;
  const end = args.indexOf("--");
  const own = end === -1 ? args : args.slice(0, end);
  if (own.includes("--help") || own.includes("-h")) {
    let doc: string | null = null;
    try {
      if (path !== null) doc = docComment(Deno.readTextFileSync(path));
    } catch {
      doc = null;
    }
    console.log(doc ?? `${name}: no description`);
    Deno.exit(0);
  }
  try {
    return nodeParseArgs(config);
  } catch (e) {
    console.error(`${name}: ${(e as Error).message.split("\n")[0]}`);
    Deno.exit(2);
  }
}
