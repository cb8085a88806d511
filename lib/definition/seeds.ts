/**
 * Where a definition's seeds are and what they hold: the one place that
 * reads seed paths, for the digest (`load.ts`) and for resets.
 *
 * Requires `--allow-read` on the definition directory.
 *
 * @module
 */
import { normalizeAbsolute } from "../common/paths.ts";
import type { Definition } from "./types.ts";

/** List the files of a seed directory (relative paths, sorted) for hashing and copying. */
export async function walkSeed(
  dir: string,
): Promise<{ rel: string; kind: "file" | "dir" | "symlink" }[]> {
  const out: { rel: string; kind: "file" | "dir" | "symlink" }[] = [];
  async function rec(rel: string): Promise<void> {
    const entries: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(rel === "" ? dir : `${dir}/${rel}`)) {
      entries.push(e);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isSymlink) out.push({ rel: r, kind: "symlink" });
      else if (e.isDirectory) {
        out.push({ rel: r, kind: "dir" });
        await rec(r);
      } else out.push({ rel: r, kind: "file" });
    }
  }
  await rec("");
  return out;
}

/** Absolute path of an adapter's seed. */
export function seedPath(def: Pick<Definition, "dir">, seed: string): string {
  return normalizeAbsolute(seed.startsWith("/") ? seed : `${def.dir}/${seed}`);
}
