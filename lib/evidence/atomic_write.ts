/**
 * Atomic file writes: a temporary file in the same directory, flushed, then
 * renamed over the target, so a reader (or a killed process) never sees a
 * half-written file.
 *
 * Requires `--allow-write` (and `--allow-read` for the directory).
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { createHash } from "node:crypto";

/** Options for {@linkcode writeTextFileAtomic}. */
export interface AtomicWriteOptions {
  /**
   * Replace an existing file; false refuses (`AlreadyExists`) instead.
   * @default {true}
   */
  overwrite?: boolean;
}

/**
 * Write `text` to `path` atomically: a new temporary file in the same
 * directory, synced, then renamed over `path` (or linked, with
 * `overwrite: false`, so an existing file is never replaced); on any
 * failure the temporary file is removed. Returns `sha256:` of the bytes
 * written and their count.
 *
 * @example
 * ```ts ignore
 * const { digest } = await writeTextFileAtomic("runs/ledger.json", text);
 * ```
 */
export async function writeTextFileAtomic(
  path: string,
  text: string,
  options: AtomicWriteOptions = {},
): Promise<{ digest: string; bytes: number }> {
  const bytes = new TextEncoder().encode(text);
  const tmp = join(
    dirname(path),
    `.${basename(path)}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`,
  );
  const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
  try {
    let off = 0;
    while (off < bytes.length) off += await f.write(bytes.subarray(off));
    await f.syncData();
  } catch (e) {
    f.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  f.close();
  try {
    if (options.overwrite === false) {
      // link(2) fails when the target exists: an existing file is never replaced.
      await Deno.link(tmp, path);
      await Deno.remove(tmp);
    } else await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  const digest = "sha256:" + createHash("sha256").update(bytes).digest("hex");
  return { digest, bytes: bytes.length };
}
