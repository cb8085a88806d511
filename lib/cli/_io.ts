/**
 * Small file and process helpers for commands. Effectful.
 *
 * @module
 */

/** Write a text file atomically (temp file, fsync, rename). Requires `--allow-write`. */
export { writeTextFileAtomic as writeFileAtomic } from "../evidence/atomic_write.ts";

/** The harness's git commit and whether its tree is dirty (null when not a checkout). Requires `--allow-run`. */
export async function harnessGitState(): Promise<
  { commit: string | null; dirty: boolean | null }
> {
  const dir = new URL("../..", import.meta.url).pathname;
  try {
    const head = await new Deno.Command("git", {
      args: ["-C", dir, "rev-parse", "HEAD"],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (head.code !== 0) return { commit: null, dirty: null };
    const st = await new Deno.Command("git", {
      args: ["-C", dir, "status", "--porcelain"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return {
      commit: new TextDecoder().decode(head.stdout).trim(),
      dirty: st.code === 0
        ? new TextDecoder().decode(st.stdout).trim() !== ""
        : null,
    };
  } catch {
    return { commit: null, dirty: null };
  }
}
