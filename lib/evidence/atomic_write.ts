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
 * Write `text` to `path` atomically (temp file + fsync + rename).
 *
 * @example
 * ```ts ignore
 * await writeTextFileAtomic("runs/ledger.json", text);
 * ```
 */
export async function writeTextFileAtomic(
  path: string,
  text: string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  await writeAtomic(path, options, async (f) => {
    let off = 0;
    while (off < bytes.length) off += await f.write(bytes.subarray(off));
  });
}

/**
 * The one atomic write both functions share: `fill` writes the temporary
 * file (same directory, created new), which is then synced and renamed over
 * `path` (or linked, with `overwrite: false`, so an existing file is never
 * replaced); on any failure the temporary file is removed.
 */
async function writeAtomic(
  path: string,
  options: AtomicWriteOptions,
  fill: (f: Deno.FsFile) => Promise<void>,
): Promise<void> {
  const tmp = join(
    dirname(path),
    `.${basename(path)}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`,
  );
  const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
  try {
    await fill(f);
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
}

/**
 * Write text (or bytes) given in pieces to `path` atomically (temp file +
 * fsync + rename), never holding more than one piece and a 1 MiB buffer,
 * and hash the bytes as they go. Returns `sha256:` of the file's bytes and its size.
 *
 * @example
 * ```ts ignore
 * const { digest } = await writeChunksAtomic("runs/x/report.json", reportChunks(packed));
 * ```
 */
export async function writeChunksAtomic(
  path: string,
  chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  options: AtomicWriteOptions = {},
): Promise<{ digest: string; bytes: number }> {
  const hash = createHash("sha256");
  let size = 0;
  await writeAtomic(path, options, async (f) => {
    const enc = new TextEncoder();
    let pending: string[] = [];
    let pendingLength = 0;
    const put = async (bytes: Uint8Array) => {
      hash.update(bytes);
      size += bytes.length;
      let off = 0;
      while (off < bytes.length) off += await f.write(bytes.subarray(off));
    };
    const flush = async () => {
      const bytes = enc.encode(pending.join(""));
      pending = [];
      pendingLength = 0;
      await put(bytes);
    };
    for await (const c of chunks) {
      if (typeof c !== "string") {
        await flush();
        await put(c);
        continue;
      }
      pending.push(c);
      pendingLength += c.length;
      if (pendingLength >= 1 << 20) await flush();
    }
    await flush();
  });
  return { digest: "sha256:" + hash.digest("hex"), bytes: size };
}
