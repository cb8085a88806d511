/**
 * The fs adapter: a directory tree (or one file) turned into records of
 * paths, kinds, sizes, content hashes and modes.
 *
 * Keys are paths relative to the state directory (`["notes/a.txt"]`);
 * values are `{kind, mode}` plus `size` and `sha256` for files and `target`
 * for symbolic links (never followed). Directory sizes and times are not
 * recorded: they change without any content changing.
 *
 * Paths observed by another adapter (a sqlite database and its `-wal`,
 * `-shm` and `-journal` files, a json file, a nested fs adapter's tree) are
 * excluded, so a database compared row by row is not also compared byte by
 * byte: opening a WAL database rewrites its files without changing a row.
 *
 * Records are split into regions by the adapter's `business` and
 * `append_only` paths (longest prefix wins); the rest stay in a region named
 * after the label.
 *
 * @module
 */
import { isPattern, matchesPattern } from "../lib/state/classify.ts";
import type { AdapterDef } from "../lib/definition/types.ts";
import { isUnder, normalizeLabel } from "../lib/common/paths.ts";
import { compareText } from "../lib/state/keys.ts";
import type { Category, StateRecord } from "../lib/state/types.ts";

/** One observed path. */
export interface FsEntry {
  /** Relative to the state directory. */
  path: string;
  kind: "file" | "dir" | "symlink" | "other";
  /** Permission bits as four octal digits, e.g. "0644". */
  mode: string;
  size?: number;
  sha256?: string;
  target?: string;
}

/** Paths an fs adapter on `label` must skip because other adapters observe them. */
export function fsExclusions(
  adapters: readonly AdapterDef[],
  self: AdapterDef,
): string[] {
  const out: string[] = [];
  for (const a of adapters) {
    if (a === self) continue;
    const l = normalizeLabel(a.label);
    if (a.kind === "sqlite") {
      out.push(l, `${l}-wal`, `${l}-shm`, `${l}-journal`);
    } else if (a.kind === "json") out.push(l);
    else if (
      l !== normalizeLabel(self.label) && isUnder(l, normalizeLabel(self.label))
    ) out.push(l);
  }
  return out;
}

/** Hex SHA-256 with WebCrypto: the read-only worker loads no Node compatibility layer. */
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  ).toHex();
}

/** Files larger than this are hashed in chunks, in bounded memory. */
export const STREAM_HASH_BYTES = 8 * 1024 * 1024;

/**
 * Size and SHA-256 of a file read 1 MiB at a time. node:crypto is loaded
 * here, on the first large file, not with the module: the read-only
 * snapshot worker then starts without the Node compatibility layer
 * (15-20 ms a worker, measured) unless a state holds such a file, whose
 * hashing takes longer than that anyway. It needs no permission, so it
 * loads in the worker (lib/state_io/snapshot_test.ts).
 */
async function streamHash(
  path: string,
): Promise<{ size: number; sha256: string }> {
  const { createHash } = await import("node:crypto");
  const h = createHash("sha256");
  const buf = new Uint8Array(1024 * 1024);
  let size = 0;
  using f = await Deno.open(path, { read: true });
  while (true) {
    const n = await f.read(buf);
    if (n === null) break;
    h.update(buf.subarray(0, n));
    size += n;
  }
  return { size, sha256: h.digest("hex") };
}

function modeString(mode: number | null): string {
  return ((mode ?? 0) & 0o7777).toString(8).padStart(4, "0");
}

/**
 * Walk `label` inside `stateDir` without following links. Requires
 * `--allow-read` on the state directory only. A missing label yields no
 * entries; unreadable paths are reported as problems.
 */
export async function walkFs(
  stateDir: string,
  label: string,
  exclude: readonly string[],
): Promise<{ entries: FsEntry[]; problems: string[] }> {
  const entries: FsEntry[] = [];
  const problems: string[] = [];
  const skip = new Set(exclude);
  const root = normalizeLabel(label);
  const abs = (rel: string) => (rel === "." ? stateDir : `${stateDir}/${rel}`);
  async function visit(rel: string, isRoot: boolean): Promise<void> {
    if (skip.has(rel)) return;
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(abs(rel));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      problems.push(`fs:${rel}: cannot stat: ${(e as Error).message}`);
      return;
    }
    if (info.isSymlink) {
      let target = "";
      try {
        target = await Deno.readLink(abs(rel));
      } catch (e) {
        problems.push(`fs:${rel}: cannot read link: ${(e as Error).message}`);
      }
      entries.push({
        path: rel,
        kind: "symlink",
        mode: modeString(info.mode),
        target,
      });
    } else if (info.isFile) {
      try {
        const { size, sha256 } = info.size > STREAM_HASH_BYTES
          ? await streamHash(abs(rel))
          : await (async () => {
            const bytes = await Deno.readFile(abs(rel));
            return { size: bytes.length, sha256: await sha256Hex(bytes) };
          })();
        entries.push({
          path: rel,
          kind: "file",
          mode: modeString(info.mode),
          size,
          sha256,
        });
      } catch (e) {
        problems.push(`fs:${rel}: cannot read: ${(e as Error).message}`);
        entries.push({
          path: rel,
          kind: "file",
          mode: modeString(info.mode),
          size: info.size,
        });
      }
    } else if (info.isDirectory) {
      if (!(isRoot && rel === ".")) {
        entries.push({ path: rel, kind: "dir", mode: modeString(info.mode) });
      }
      const names: string[] = [];
      try {
        for await (const e of Deno.readDir(abs(rel))) names.push(e.name);
      } catch (e) {
        problems.push(`fs:${rel}: cannot list: ${(e as Error).message}`);
        return;
      }
      names.sort(compareText);
      for (const n of names) {
        await visit(rel === "." ? n : `${rel}/${n}`, false);
      }
    } else {
      entries.push({ path: rel, kind: "other", mode: modeString(info.mode) });
    }
  }
  await visit(root, true);
  return { entries, problems };
}

/** One fs region. */
export interface FsRegion {
  name: string;
  category: Category;
  records: StateRecord[];
}

/**
 * Group walked entries into regions by the adapter's classification. Pure.
 * Every listed path is a region (even when empty); the label's own region
 * holds the rest.
 */
export function fsRegions(
  entries: readonly FsEntry[],
  def: AdapterDef,
): FsRegion[] {
  // Plain paths own their subtrees, the deepest first; patterns (`.results/**`)
  // come after them and own the entries they match, the first listed first.
  const listed: { path: string; category: Category; pattern: boolean }[] = [
    ...def.business.map((p) => ({
      path: normalizeLabel(p),
      category: "business" as Category,
      pattern: isPattern(p),
    })),
    ...def.append_only.map((p) => ({
      path: normalizeLabel(p),
      category: "append_only" as Category,
      pattern: isPattern(p),
    })),
  ];
  const plain = listed.filter((l) => !l.pattern).sort((a, b) =>
    b.path.length - a.path.length
  );
  const patterns = listed.filter((l) => l.pattern);
  const label = normalizeLabel(def.label);
  const groups = new Map<
    string,
    { category: Category; records: StateRecord[] }
  >();
  for (const l of listed) {
    groups.set(l.path, { category: l.category, records: [] });
  }
  if (!groups.has(label)) {
    groups.set(label, { category: "unclassified", records: [] });
  }
  for (const e of entries) {
    const owner = plain.find((l) => isUnder(e.path, l.path)) ??
      patterns.find((l) => matchesPattern(l.path, e.path));
    const g = groups.get(owner ? owner.path : label)!;
    const value: Record<string, unknown> = { kind: e.kind, mode: e.mode };
    if (e.size !== undefined) value.size = e.size;
    if (e.sha256 !== undefined) value.sha256 = e.sha256;
    if (e.target !== undefined) value.target = e.target;
    g.records.push({ key: JSON.stringify([e.path]), value });
  }
  const out: FsRegion[] = [];
  for (const [name, g] of groups) {
    g.records.sort((a, b) =>
      compareText(JSON.parse(a.key)[0], JSON.parse(b.key)[0])
    );
    out.push({ name, category: g.category, records: g.records });
  }
  return out.sort((a, b) => compareText(a.name, b.name));
}
