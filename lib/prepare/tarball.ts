/**
 * Reading an npm package tarball (gzip-compressed ustar) into entries.
 * Pure: bytes in, entries out; writing them is the caller's job.
 *
 * Only regular files and directories are returned. Links, devices and
 * anything whose path is absolute or climbs out with `..` are refused with
 * a `SyntaxError`, so extracting the result can never write outside its
 * destination.
 *
 * @module
 */
import { gunzipSync } from "node:zlib";

/** One member of a tarball. */
export interface TarEntry {
  /** Relative path with `/` separators, e.g. `package/dist/index.js`. */
  path: string;
  type: "file" | "dir";
  /** Permission bits. */
  mode: number;
  /** File contents (empty for directories). */
  data: Uint8Array;
}

const decoder = new TextDecoder();

function field(block: Uint8Array, start: number, len: number): string {
  const raw = block.subarray(start, start + len);
  const nul = raw.indexOf(0);
  return decoder.decode(nul === -1 ? raw : raw.subarray(0, nul));
}

function octal(
  block: Uint8Array,
  start: number,
  len: number,
  what: string,
): number {
  const s = field(block, start, len).trim();
  if (s === "") return 0;
  if (!/^[0-7]+$/.test(s)) {
    throw new SyntaxError(`tar header: bad ${what} ${JSON.stringify(s)}`);
  }
  return parseInt(s, 8);
}

function safePath(p: string): string {
  const parts = p.split("/").filter((s) => s !== "" && s !== ".");
  if (
    p.startsWith("/") || parts.includes("..") || p.includes("\0") ||
    parts.length === 0
  ) {
    throw new SyntaxError(`tar entry with unsafe path ${JSON.stringify(p)}`);
  }
  return parts.join("/");
}

/** Parse PAX extended header records (`<len> key=value\n`). */
function paxRecords(data: Uint8Array): Record<string, string> {
  const text = decoder.decode(data);
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const sp = text.indexOf(" ", i);
    if (sp === -1) break;
    const len = Number(text.slice(i, sp));
    if (!Number.isInteger(len) || len <= 0) break;
    const rec = text.slice(sp + 1, i + len - 1);
    const eq = rec.indexOf("=");
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    i += len;
  }
  return out;
}

/**
 * Read the entries of a `.tgz` (or plain `.tar` when not gzip-compressed).
 *
 * @example
 * ```ts ignore
 * const entries = readTarball(await Deno.readFile("pkg.tgz"));
 * entries.find((e) => e.path === "package/package.json");
 * ```
 */
export function readTarball(bytes: Uint8Array): TarEntry[] {
  const tar = bytes[0] === 0x1f && bytes[1] === 0x8b
    ? new Uint8Array(gunzipSync(bytes))
    : bytes;
  const out: TarEntry[] = [];
  let off = 0;
  let longName: string | null = null;
  let pax: Record<string, string> = {};
  while (off + 512 <= tar.length) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    if (sum !== octal(header, 148, 8, "checksum")) {
      throw new SyntaxError(`tar header at byte ${off}: checksum mismatch`);
    }
    const size = octal(header, 124, 12, "size");
    const typeflag = String.fromCharCode(header[156]!);
    const dataStart = off + 512;
    if (dataStart + size > tar.length) {
      throw new SyntaxError(`tar entry at byte ${off} is truncated`);
    }
    const data = tar.slice(dataStart, dataStart + size);
    off = dataStart + Math.ceil(size / 512) * 512;
    if (typeflag === "L") {
      longName = field(data, 0, data.length);
      continue;
    }
    if (typeflag === "x") {
      pax = paxRecords(data);
      continue;
    }
    if (typeflag === "g") continue;
    const prefix = field(header, 345, 155);
    const name = pax.path ?? longName ??
      (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    longName = null;
    pax = {};
    const mode = octal(header, 100, 8, "mode") & 0o777;
    if (typeflag === "0" || typeflag === "\0" || typeflag === "7") {
      out.push({ path: safePath(name), type: "file", mode, data });
    } else if (typeflag === "5") {
      out.push({
        path: safePath(name),
        type: "dir",
        mode,
        data: new Uint8Array(),
      });
    } else {
      throw new SyntaxError(
        `tar entry ${JSON.stringify(name)} has unsupported type ${
          JSON.stringify(typeflag)
        } (links are refused)`,
      );
    }
  }
  return out;
}
