/**
 * Small file and process helpers for commands. Effectful.
 *
 * @module
 */
import { dirname, join } from "node:path";

/** Write a file atomically: a temp file beside it, then rename. Requires `--allow-write`. */
export async function writeFileAtomic(
  path: string,
  text: string,
): Promise<void> {
  const tmp = join(dirname(path), `.${crypto.randomUUID()}.tmp`);
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

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
