/**
 * How verity starts itself for an internal subcommand: the compiled binary
 * runs `verity <sub>`, a source checkout runs `deno run ... main.ts <sub>`.
 * Never a path to another `.ts` file, so a compiled binary needs nothing
 * beside it.
 *
 * @module
 */

const MAIN = new URL("../../main.ts", import.meta.url);

/**
 * argv that starts verity with an internal subcommand.
 *
 * @example
 * ```ts ignore
 * selfCommand("__overlap"); // ["/usr/bin/deno", "run", "-A", ".../main.ts", "__overlap"]
 * ```
 */
export function selfCommand(sub: string): string[] {
  // A `deno compile` binary runs its embedded main.ts from here.
  if (MAIN.pathname.includes("/deno-compile-")) return [Deno.execPath(), sub];
  return [
    Deno.execPath(),
    "run",
    "--allow-all",
    "--unstable-worker-options",
    "--quiet",
    MAIN.pathname,
    sub,
  ];
}
