/**
 * Reading the JSON documents the evidence commands take (manifests,
 * declarations, observations, ledgers).
 *
 * Requires `--allow-read`.
 *
 * @module
 */
import { EvidenceError, InputError } from "../errors.ts";
import { parsePythonJson, sha256Hex } from "./canonical.ts";

/** How much gzip input is decompressed at a time (its output is at most ~1032 times larger). */
const GZ_PIECE = 16 * 1024;

/** V8's longest string (64-bit), in UTF-16 code units. */
const MAX_STRING_CHARS = 536_870_888;

/** A JSON document read from disk. */
export interface JsonDocument {
  path: string;
  /** Parsed as Python's `json` would (see `parsePythonJson`). */
  value: unknown;
  /** `sha256:` of the file's bytes (null unless asked for). */
  sha256: string | null;
}

/** Options for {@linkcode readJsonDocument}. */
export interface ReadJsonOptions {
  /**
   * Also hash the file's bytes.
   * @default {false}
   */
  digest?: boolean;
}

/** A file's bytes, or an {@linkcode EvidenceError} naming it. */
async function readBytes(path: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    throw new EvidenceError(
      e instanceof Deno.errors.NotFound
        ? `${path}: no such file`
        : `${path}: cannot read: ${(e as Error).message}`,
    );
  }
}

const lossy = new TextDecoder("utf-8", { ignoreBOM: true });
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` as UTF-8 text (a BOM kept), or null when they are not UTF-8. The
 * lossy decoder is several times faster; only text holding U+FFFD can have
 * had invalid bytes, and that is decoded again strictly.
 */
export function decodeUtf8(bytes: Uint8Array): string | null {
  const text = lossy.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Read a UTF-8 text file (a leading BOM dropped). Throws
 * {@linkcode EvidenceError} naming the file when it is missing, unreadable or
 * not UTF-8.
 */
export async function readTextDocument(
  path: string,
): Promise<{ text: string; bytes: Uint8Array }> {
  const bytes = await readBytes(path);
  let text = decodeUtf8(bytes);
  if (text === null) throw new EvidenceError(`${path}: not valid UTF-8`);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text, bytes };
}

/**
 * Read and parse a JSON file. Throws {@linkcode EvidenceError} naming the file
 * when it is missing, unreadable, not UTF-8 or not JSON (exit 2).
 */
export async function readJsonDocument(
  path: string,
  options: ReadJsonOptions = {},
): Promise<JsonDocument> {
  const { text, bytes } = await readTextDocument(path);
  let value: unknown;
  try {
    value = parsePythonJson(text);
  } catch (e) {
    throw new EvidenceError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
  return {
    path,
    value,
    sha256: options.digest ? "sha256:" + sha256Hex(bytes) : null,
  };
}

/**
 * Read an evidence document that may be gzip-compressed (by name `.gz` or
 * by its magic bytes): its text and `sha256:` of the uncompressed bytes,
 * which is the digest ledgers and attestations record. Throws
 * {@linkcode EvidenceError} naming the file when it is missing, unreadable,
 * not gzip when it says so, or not UTF-8.
 */
export async function readEvidenceText(
  path: string,
): Promise<{ text: string; bytes: Uint8Array; digest: string }> {
  const raw = await readBytes(path);
  let bytes = raw;
  if (path.endsWith(".gz") || (raw[0] === 0x1f && raw[1] === 0x8b)) {
    bytes = await gunzipBounded(path, raw, MAX_STRING_CHARS);
  }
  let text: string;
  try {
    text = strict.decode(bytes);
  } catch {
    // A text longer than V8's string limit cannot be decoded at all: say
    // so, rather than blame the encoding.
    if (bytes.length > MAX_STRING_CHARS) {
      throw new EvidenceError(
        `${path}: ${bytes.length} bytes: too large to read as one document (V8's string limit is ${MAX_STRING_CHARS} characters)`,
      );
    }
    throw new EvidenceError(`${path}: not valid UTF-8`);
  }
  return { text, bytes, digest: "sha256:" + sha256Hex(bytes) };
}

/**
 * Gunzip `raw` in a stream, stopping as soon as the output passes `limit`
 * bytes (the largest document verity can read: V8's string limit): a gzip
 * bomb is refused after `limit` bytes, never decompressed whole.
 */
async function gunzipBounded(
  path: string,
  raw: Uint8Array,
  limit: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Fed in 16 KiB pieces: given the whole input at once the stream hands
  // back the whole output as one chunk, however large.
  const gz = new DecompressionStream("gzip");
  const writer = gz.writable.getWriter();
  const fed = (async () => {
    for (let i = 0; i < raw.length; i += GZ_PIECE) {
      await writer.write(
        raw.subarray(i, i + GZ_PIECE) as Uint8Array<ArrayBuffer>,
      );
    }
    await writer.close();
  })();
  fed.catch(() => {});
  const reader = gz.readable.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw new EvidenceError(
          `${path}: decompresses to more than ${limit} bytes: too large to read as one document (V8's string limit is ${MAX_STRING_CHARS} characters)`,
        );
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new EvidenceError(`${path}: not valid gzip: ${(e as Error).message}`);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks.splice(0)) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
