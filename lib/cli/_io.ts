/**
 * Small file and process helpers for commands. Effectful.
 *
 * @module
 */

/** Write a text file atomically (temp file, fsync, rename). Requires `--allow-write`. */
export { writeTextFileAtomic as writeFileAtomic } from "../evidence/atomic_write.ts";

/** `git -C dir ...args`: its trimmed stdout, or null when git fails or is absent. Requires `--allow-run=git`. */
async function git(dir: string, ...args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", dir, ...args],
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.code === 0 ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null; // no git
  }
}

/** The git work tree holding `dir`, or null. Requires `--allow-run=git`. */
export async function gitTopLevel(dir: string): Promise<string | null> {
  return await git(dir, "rev-parse", "--show-toplevel") || null;
}

/** The harness's git commit and whether its tree is dirty (null when not a checkout). Requires `--allow-run`. */
export async function harnessGitState(): Promise<
  { commit: string | null; dirty: boolean | null }
> {
  const dir = new URL("../..", import.meta.url).pathname;
  const commit = await git(dir, "rev-parse", "HEAD");
  if (commit === null) return { commit: null, dirty: null };
  const status = await git(dir, "status", "--porcelain");
  return { commit, dirty: status === null ? null : status !== "" };
}
