/**
 * Read a session's changeset from its overlay (`Launch.writes.layout`)
 * after its server exited: every upper layer walked, each entry compared
 * with the host below it, each changed file decoded by what it is (SQLite
 * by its header, with its `-wal`; JSON and JSONL by parse; else bytes with
 * size and digest). Everything in an upper layer is hostile: links are
 * never followed, only regular files are opened, and the walk stops at a
 * budget (entries, depth, bytes, records), saying so (`lossy`).
 *
 * In the upper layer a deletion is a character device 0/0 (a whiteout) and
 * a directory removed and made again is opaque (`trusted.overlay.opaque`
 * = `y`): what the host has below either is gone in the server's view.
 * The overlay is mounted without redirects or metacopy, so there is
 * nothing else to read.
 *
 * Requires `--allow-read`, and `--allow-ffi` (the opaque attribute is read
 * with libc's `lgetxattr`).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { AdapterDef } from "../definition/types.ts";
import type { OverlayLayout } from "../sandbox/types.ts";
import type { Changeset, FileView, PathChange } from "../state/changeset.ts";
import { readJsonState } from "../../adapters/json.ts";
import {
  readSqlite,
  type SqliteObservation,
} from "../../adapters/sqlite/read.ts";
import { PageWalkError } from "../../adapters/sqlite/page_walk_error.ts";
import { isSqliteImage } from "../../adapters/sqlite/format.ts";
import { isSqliteImageFile } from "../definition/load.ts";

/** Limits on reading one changeset. */
export interface ChangesetBudget {
  /** Most entries walked (upper layers and what deletions hide). @default {20_000} */
  entries?: number;
  /** Deepest directory level. @default {64} */
  depth?: number;
  /** Largest file read (a larger one keeps its size only). @default {64 MiB} */
  fileBytes?: number;
  /** Most bytes read in all, both sides. @default {256 MiB} */
  totalBytes?: number;
  /** Most decoded records kept (beyond it, files are kept as bytes). @default {200_000} */
  records?: number;
}

/** The default {@linkcode ChangesetBudget}. */
export const DEFAULT_CHANGESET_BUDGET: Required<ChangesetBudget> = {
  entries: 20_000,
  depth: 64,
  fileBytes: 64 * 1024 * 1024,
  totalBytes: 256 * 1024 * 1024,
  records: 200_000,
};

type Libc = {
  symbols: {
    lgetxattr: (
      p: Uint8Array,
      n: Uint8Array,
      v: Uint8Array,
      s: bigint,
    ) => number | bigint;
  };
};
let libc: Libc | null | undefined;

/** Whether an upper directory is opaque; null when this cannot be told (no libc). */
function isOpaque(path: string): boolean | null {
  if (libc === undefined) {
    libc = null;
    for (const name of ["libc.so.6", "libc.so"]) {
      try {
        libc = Deno.dlopen(name, {
          lgetxattr: {
            parameters: ["buffer", "buffer", "buffer", "usize"],
            result: "isize",
          },
        }) as unknown as Libc;
        break;
      } catch {
        // try the next name
      }
    }
  }
  if (libc === null) return null;
  const enc = new TextEncoder();
  const value = new Uint8Array(4);
  const n = Number(libc.symbols.lgetxattr(
    enc.encode(`${path}\u0000`),
    enc.encode("trusted.overlay.opaque\u0000"),
    value,
    4n,
  ));
  return n === 1 && value[0] === 0x79;
}

interface Seen {
  /** In the upper layer: its path and what lstat said; null: hidden below a deletion. */
  upper: { path: string; st: Deno.FileInfo } | null;
  /** The host path below it, or null (a hidden directory's layer). */
  lower: string | null;
}

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function lstatOrNull(p: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(p);
  } catch {
    return null;
  }
}

function typeOf(st: Deno.FileInfo): FileView["type"] {
  return st.isFile
    ? "file"
    : st.isDirectory
    ? "dir"
    : st.isSymlink
    ? "symlink"
    : "other";
}

function join(at: string, name: string): string {
  if (name === "") return at;
  return at.endsWith("/") ? `${at}${name}` : `${at}/${name}`;
}

/**
 * Read the changeset of one server process from its overlay layout. Never
 * throws for what the server left: unreadable entries and budgets are
 * problems (and make the changeset lossy).
 *
 * @example
 * ```ts ignore
 * await session.client.close();
 * if (launch.writes?.observed) {
 *   const c = readChangeset(launch.writes.layout);
 *   for (const p of c.changes) console.log(p.path, p.before ? "changed" : "created");
 * }
 * ```
 */
export function readChangeset(
  layout: OverlayLayout,
  budget: ChangesetBudget = {},
): Changeset {
  const b = { ...DEFAULT_CHANGESET_BUDGET, ...budget };
  const problems: string[] = [];
  const capped = new Set<string>();
  const cap = (what: string) => {
    if (!capped.has(what)) problems.push(what);
    capped.add(what);
  };
  const scaffold = new Set(layout.scaffold);
  const seen = new Map<string, Seen>();
  let entries = 0;
  /**
   * Walk `dir` (an upper layer, or with `gone` a host directory the
   * server's view no longer has: everything below it is deleted), `at`
   * its place in the server's view.
   */
  const walk = (
    dir: string,
    at: string,
    lower: string | null,
    level: number,
    gone: boolean,
  ): void => {
    let names: Deno.DirEntry[];
    try {
      names = [...Deno.readDirSync(dir)];
    } catch (e) {
      return cap(`${at}: not listed (${(e as Error).message})`);
    }
    for (const e of names) {
      const path = join(at, e.name);
      if (gone && seen.has(path)) continue;
      if (++entries > b.entries) return cap(`more than ${b.entries} entries`);
      const here = join(dir, e.name);
      const below = lower === null ? null : join(lower, e.name);
      const st = lstatOrNull(here);
      if (st === null) {
        cap(`${path}: unreadable`);
        continue;
      }
      seen.set(path, { upper: gone ? null : { path: here, st }, lower: below });
      const deeper = (d: string, l: string | null, g: boolean) =>
        level + 1 > b.depth
          ? cap(`deeper than ${b.depth} levels`)
          : walk(d, path, l, level + 1, g);
      if (gone) {
        if (st.isDirectory) deeper(here, here, true);
        continue;
      }
      const lowerDir = below !== null &&
        lstatOrNull(below)?.isDirectory === true;
      // A whiteout over a directory, or an opaque directory: what the
      // host has below is gone from the server's view.
      let hides = lowerDir && st.isCharDevice && st.rdev === 0;
      if (lowerDir && st.isDirectory) {
        const opaque = isOpaque(here);
        if (opaque === null) {
          cap("opaque directories cannot be told here (no libc lgetxattr)");
        }
        hides = opaque === true;
      }
      if (hides) deeper(below!, below, true);
      if (st.isDirectory) deeper(here, below, false);
    }
  };
  for (const layer of layout.layers) {
    walk(layer.upper, layer.at, layer.lower, 0, false);
  }
  let bytesRead = 0;
  let records = 0;
  const read = (
    path: string,
    where: string,
    st: Deno.FileInfo,
  ): Uint8Array | null => {
    if (st.size > b.fileBytes || bytesRead + st.size > b.totalBytes) {
      cap(
        `${path}: ${st.size} bytes, over the read budget: size kept, content not compared`,
      );
      return null;
    }
    try {
      const bytes = Deno.readFileSync(where);
      bytesRead += bytes.length;
      return bytes;
    } catch (e) {
      cap(`${path}: unreadable (${(e as Error).message})`);
      return null;
    }
  };
  /** One side of a path: the upper entry (a whiteout: null), or the host's (absent: null). */
  const side = (
    path: string,
    where: string,
    st: Deno.FileInfo | null,
    wal: { path: string; st: Deno.FileInfo } | null,
  ): { view: FileView; raw: string } | null => {
    if (st === null || (st.isCharDevice && st.rdev === 0)) return null;
    const view: FileView = { type: typeOf(st), mode: (st.mode ?? 0) & 0o7777 };
    if (st.isSymlink) {
      try {
        view.target = Deno.readLinkSync(where);
      } catch {
        cap(`${path}: link unreadable`);
      }
    }
    if (!st.isFile) return { view, raw: JSON.stringify(view) };
    view.size = st.size;
    const bytes = read(path, where, st);
    if (bytes === null) {
      view.digest = null;
      return { view, raw: `unread:${where}` };
    }
    const walBytes = wal === null
      ? null
      : read(`${path}-wal`, wal.path, wal.st);
    const raw = `${view.mode} ${sha256(bytes)} ${
      walBytes === null ? "" : sha256(walBytes)
    }`;
    decode(path, bytes, walBytes, view);
    return { view, raw };
  };
  const decode = (
    path: string,
    bytes: Uint8Array,
    wal: Uint8Array | null,
    view: FileView,
  ) => {
    let regions: FileView["regions"] = undefined;
    let format: FileView["format"] = undefined;
    let obs: SqliteObservation | null = null;
    try {
      obs = isSqliteImage(bytes)
        ? readSqlite(bytes, { wal, label: path, cache: null })
        : null;
    } catch (e) {
      // A database the page reader cannot read is compared by its bytes.
      if (!(e instanceof PageWalkError)) throw e;
    }
    if (obs !== null) {
      problems.push(...obs.problems);
      format = "sqlite";
      regions = obs.tables.map((t) => ({
        name: t.name,
        records: t.records,
        columns: t.columns,
      }));
    } else if (!isSqliteImage(bytes)) {
      let text: string | null = null;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        // not text: bytes
      }
      for (const f of ["json", "jsonl"] as const) {
        if (text === null || text.trim() === "") break;
        const obs = readJsonState(text, jsonDef(path, f));
        if (obs.problems.length > 0) continue;
        format = f;
        regions = obs.regions.map((r) => ({
          name: r.name === path ? "$" : r.name,
          records: r.records,
        }));
        break;
      }
    }
    const n = (regions ?? []).reduce((k, r) => k + r.records.length, 0);
    if (regions !== undefined && format && records + n <= b.records) {
      records += n;
      view.format = format;
      view.regions = regions;
      return;
    }
    if (regions !== undefined) {
      cap(`more than ${b.records} decoded records: the rest kept as bytes`);
    }
    view.digest = sha256(bytes);
  };
  const changes: PathChange[] = [];
  for (const path of [...seen.keys()].sort()) {
    const s = seen.get(path)!;
    const up = s.upper;
    // A database's -wal is read with it; -shm is SQLite's scratch index.
    if (/-(wal|shm)$/.test(path) && databaseAt(seen, path) !== null) continue;
    if (up !== null && scaffold.has(path) && isScaffold(up.st)) continue;
    const walOf = (dbSide: "upper" | "lower") => {
      const w = seen.get(`${path}-wal`);
      if (dbSide === "upper") {
        const st = w?.upper?.st ?? null;
        if (st !== null) {
          return st.isFile ? { path: w!.upper!.path, st } : null;
        }
      }
      const hostWal = s.lower === null ? null : `${s.lower}-wal`;
      const st = hostWal === null ? null : lstatOrNull(hostWal);
      return st?.isFile ? { path: hostWal!, st } : null;
    };
    const lowerSt = s.lower === null ? null : lstatOrNull(s.lower);
    const before = side(path, s.lower ?? "", lowerSt, walOf("lower"));
    // Only the -wal changed: the database is the host's file with the session's log.
    const after = up === null ? null : side(
      path,
      up.path,
      up.st,
      walOf("upper"),
    );
    if (before?.raw === after?.raw) continue;
    if (before?.view.type === "dir" && after?.view.type === "dir") {
      // A directory copied up to hold its changed children is no change.
      if (before.view.mode === after.view.mode) continue;
    }
    changes.push({
      path,
      before: before?.view ?? null,
      after: after?.view ?? null,
    });
  }
  for (const [path, s] of seen) {
    // A -wal that changed while its database did not: the database changed.
    const db = path.slice(0, -4);
    if (!path.endsWith("-wal") || s.upper === null || seen.has(db)) continue;
    const host = databaseAt(seen, path);
    if (host === null) continue;
    const st = lstatOrNull(host);
    const hostWal = lstatOrNull(`${host}-wal`);
    const before = side(
      db,
      host,
      st,
      hostWal?.isFile ? { path: `${host}-wal`, st: hostWal } : null,
    );
    const after = side(db, host, st, { path: s.upper.path, st: s.upper.st });
    if (before?.raw !== after?.raw) {
      changes.push({
        path: db,
        before: before?.view ?? null,
        after: after?.view ?? null,
      });
    }
  }
  changes.sort((x, y) => x.path < y.path ? -1 : x.path > y.path ? 1 : 0);
  return { changes, lossy: capped.size > 0, problems };
}

/** A scaffold entry the launch made (a mount point): a directory, or an empty file. */
function isScaffold(st: Deno.FileInfo): boolean {
  return st.isDirectory || (st.isFile && st.size === 0);
}

/**
 * Where the database a `-wal` or `-shm` path belongs to is read (its upper
 * file, else the host's), when it is a SQLite database; else null.
 */
function databaseAt(seen: Map<string, Seen>, sidecar: string): string | null {
  const db = sidecar.slice(0, -4);
  const s = seen.get(db);
  const own = seen.get(sidecar);
  const where = s !== undefined
    ? s.upper?.path ?? null
    : own?.lower == null
    ? null
    : own.lower.slice(0, -4);
  return where !== null && isDatabase(where) ? where : null;
}

/** Whether the regular file at `where` starts with SQLite's header. */
function isDatabase(where: string): boolean {
  if (lstatOrNull(where)?.isFile !== true) return false;
  try {
    return isSqliteImageFile(where);
  } catch {
    return false;
  }
}

function jsonDef(label: string, format: "json" | "jsonl"): AdapterDef {
  return {
    kind: "json",
    label,
    seed: null,
    business: [],
    append_only: [],
    mask: [],
    key: {},
    format,
  };
}
