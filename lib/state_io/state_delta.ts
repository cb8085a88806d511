/**
 * The delta between two state directories without building their
 * snapshots: sqlite databases are compared page by page and row by row in
 * bounded memory (`adapters/sqlite/diff.ts`); everything else (fs, json,
 * postgres, and any table the page reader leaves alone) goes through
 * snapshots. The result equals `computeDelta` of the two normalized
 * snapshots.
 *
 * When `before` is the state a session started from (its seed), the pages
 * the session did not touch are byte-identical and their rows are never
 * decoded: the cost follows the change, not the database.
 *
 * @module
 */
import { categoryOf } from "../state/classify.ts";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { AdapterDef, Definition, MaskRule } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { fsExclusions, walkFs } from "../../adapters/fs.ts";
import { type DiffSide, readSchema } from "../../adapters/sqlite/btree.ts";
import type { SqliteDiffStats } from "../../adapters/sqlite/compare.ts";
import { diffSqlitePair } from "../../adapters/sqlite/diff.ts";
import {
  imagePageSize,
  type PageSource,
} from "../../adapters/sqlite/format.ts";
import type { KeyedFaults } from "../../adapters/sqlite/keyed.ts";
import { PageWalkError } from "../../adapters/sqlite/page_walk_error.ts";
import { planSchema } from "../../adapters/sqlite/plan.ts";
import { metaTables } from "../../adapters/sqlite/read.ts";
import { PageCache } from "../../adapters/sqlite/stream.ts";
import { walIndex } from "../../adapters/sqlite/wal.ts";
import {
  assembleDelta,
  type Delta,
  type RegionDiff,
  regionDiffs,
  type RegionRows,
  snapshotDigest,
} from "../state/delta.ts";
import { normalize } from "../state/normalize.ts";
import type { Snapshot } from "../state/types.ts";
import { checkStateBudget } from "./budget.ts";
import {
  assembleSnapshot,
  type SnapshotOptions,
  takeSnapshot,
} from "./snapshot.ts";

/** How one adapter's part of the delta was found. */
export interface AdapterMethod {
  label: string;
  /**
   * `pages`: compared page by page; `digest`: a json file whose bytes have
   * the before side's SHA-256 is not parsed (the before side is parsed once
   * and kept); `snapshots`: two full snapshots.
   */
  method: "pages" | "digest" | "snapshots";
  /** Why snapshots were used for a sqlite adapter. */
  why?: string;
  stats?: SqliteDiffStats & { pagesChanged: number; pages: number };
}

/** What {@linkcode stateDelta} returns. */
export interface StateDeltaResult {
  delta: Delta;
  /** Problems seen on either side (as a snapshot would list them). */
  problems: { before: string[]; after: string[] };
  methods: AdapterMethod[];
  /**
   * Whether the after side's normalized snapshot is exactly the before
   * side's (same regions, records, columns and problems: the same
   * digest), proven part by part: sqlite tables compared by pages with no
   * change at all (a table created, dropped or reshaped is a change even
   * when empty), json files with the same bytes or snapshots, fs and
   * snapshot parts with the same snapshot digest; and the same problems.
   */
  sameAsBefore: boolean;
  /**
   * With `options.rows`: per region id that changed, the full records of
   * its changes (the after side's added and changed records, the before
   * side's changed and removed ones, in key order, masked): with the
   * delta, the after side as a patch against the before side, without
   * either snapshot. Null when not asked, or when some changed region's
   * rows are unknown (a row the page reader cannot decode).
   */
  rows: Map<string, RegionRows> | null;
}

/** Options of {@linkcode stateDelta}. */
export interface StateDeltaOptions extends SnapshotOptions {
  /** Keep the full rows of every change (`rows` of the result). @default false */
  rows?: boolean;
  /** Faults the page reader makes on purpose (tests of the differential tests). @default {} */
  faults?: KeyedFaults;
}

/** Pages read at once when a file is read in page order. */
const CHUNK_PAGES = 32;
/** Chunks kept per file (least recently used dropped). */
const CHUNKS_KEPT = 128;
/** Lone pages (read out of order) kept per file. */
const SINGLES_KEPT = 4096;

/** The pages of a database file (and its WAL) read through a read-only handle. */
class FilePages implements PageSource {
  readonly pageCount: number;
  readonly filePages: number;
  #fd: number;
  #chunks = new Map<number, Uint8Array>();
  #singles = new Map<number, Uint8Array>();
  #last = -1;
  #zero: Uint8Array;

  constructor(
    fd: number,
    fileSize: number,
    readonly pageSize: number,
    readonly wal: Uint8Array,
    readonly walFrames: Map<number, number>,
    dbPages: number,
  ) {
    this.#fd = fd;
    this.filePages = Math.floor(fileSize / pageSize);
    this.pageCount = dbPages > 0 ? dbPages : this.filePages;
    this.#zero = new Uint8Array(pageSize);
  }

  page(pgno: number): Uint8Array {
    if (!(pgno >= 1 && pgno <= this.pageCount)) {
      throw new PageWalkError(`bad page ${pgno}`);
    }
    const w = this.walFrames.get(pgno);
    if (w !== undefined) return this.wal.subarray(w, w + this.pageSize);
    if (pgno > this.filePages) return this.#zero;
    // Reading on in page order (leaves skipped in between count too).
    const sequential = pgno > this.#last && pgno - this.#last <= CHUNK_PAGES;
    this.#last = pgno;
    const c = Math.floor((pgno - 1) / CHUNK_PAGES);
    let chunk = this.#chunks.get(c);
    if (chunk !== undefined) {
      this.#chunks.delete(c);
      this.#chunks.set(c, chunk);
      const o = ((pgno - 1) % CHUNK_PAGES) * this.pageSize;
      return chunk.subarray(o, o + this.pageSize);
    }
    let one = this.#singles.get(pgno);
    if (one !== undefined) {
      // Most recently used now: the buffer reused next is the least
      // recently used one, so a page read again (an interior page holding
      // the record a reader compares) stays valid.
      this.#singles.delete(pgno);
      this.#singles.set(pgno, one);
      return one;
    }
    if (!sequential) {
      // A lone page (an interior page of a walk): read it alone.
      // The least recently read lone page's buffer is reused.
      if (this.#singles.size >= SINGLES_KEPT) {
        const [k, buf] = this.#singles.entries().next().value!;
        this.#singles.delete(k);
        one = buf;
      } else one = new Uint8Array(this.pageSize);
      readFully(this.#fd, one, (pgno - 1) * this.pageSize);
      this.#singles.set(pgno, one);
      return one;
    }
    // Reading on in page order: read ahead a chunk.
    const first = c * CHUNK_PAGES + 1;
    const n = Math.min(CHUNK_PAGES, this.filePages - first + 1);
    // The least recently used chunk's buffer is reused: reading a large
    // file then allocates no garbage.
    let buf: Uint8Array | undefined;
    if (this.#chunks.size >= CHUNKS_KEPT) {
      const [k, old] = this.#chunks.entries().next().value!;
      this.#chunks.delete(k);
      buf = old.byteLength === CHUNK_PAGES * this.pageSize ? old : undefined;
    }
    buf ??= new Uint8Array(CHUNK_PAGES * this.pageSize);
    chunk = buf.subarray(0, n * this.pageSize);
    readFully(this.#fd, chunk, (first - 1) * this.pageSize);
    this.#chunks.set(c, chunk);
    const o = ((pgno - 1) % CHUNK_PAGES) * this.pageSize;
    return chunk.subarray(o, o + this.pageSize);
  }

  /** Raw file pages [first, first+n), read into `into` (for bulk comparison). */
  readRaw(first: number, n: number, into: Uint8Array): Uint8Array {
    const view = into.subarray(0, n * this.pageSize);
    readFully(this.#fd, view, (first - 1) * this.pageSize);
    return view;
  }

  close(): void {
    closeSync(this.#fd);
  }
}

function readFully(fd: number, into: Uint8Array, position: number): void {
  let done = 0;
  while (done < into.length) {
    const n = readSync(fd, into, done, into.length - done, position + done);
    if (n <= 0) throw new PageWalkError("database file shorter than expected");
    done += n;
  }
}

/** Whether `path` lies inside `root` once links are resolved; a regular file. */
async function regularInside(
  root: string,
  path: string,
): Promise<"absent" | "ok"> {
  let real: string;
  try {
    real = await Deno.realPath(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "absent";
    throw new PageWalkError(`${path}: cannot resolve`);
  }
  if (real !== root && !real.startsWith(root + "/")) {
    throw new PageWalkError(`${path} leads outside the state directory`);
  }
  const info = await Deno.stat(real);
  if (!info.isFile) throw new PageWalkError(`${path} is not a regular file`);
  return "ok";
}

/** Open one side's database (with its WAL) read-only, or null when it has none. */
async function openSide(
  stateDir: string,
  label: string,
  problems: string[],
): Promise<FilePages | null> {
  const abs = label === "." ? stateDir : `${stateDir}/${label}`;
  const dbState = await regularInside(stateDir, abs);
  const walState = await regularInside(stateDir, `${abs}-wal`);
  if (dbState === "absent" && walState === "absent") return null;
  if (dbState === "absent") throw new PageWalkError("WAL without database");
  const wal = walState === "ok"
    ? await Deno.readFile(`${abs}-wal`)
    : new Uint8Array();
  const fd = openSync(abs, "r");
  try {
    const size = fstatSync(fd).size;
    if (size === 0 && wal.length === 0) {
      closeSync(fd);
      return null;
    }
    const head = new Uint8Array(Math.min(size, 100));
    readFully(fd, head, 0);
    const ps = head.length === 100 ? imagePageSize(head) : null;
    const ix = walIndex(ps, wal);
    for (const p of ix.problems) problems.push(`${label}: ${p}`);
    if (ix.framesUncommitted > 0) {
      problems.push(
        `${label}: ${ix.framesUncommitted} WAL frame(s) after the last commit ignored (uncommitted transaction)`,
      );
    }
    const pageSize = ps ?? (ix.pageSize || 0);
    if (pageSize < 512) throw new PageWalkError("no page size");
    if (ix.dbPages === 0 && size % pageSize !== 0) {
      throw new PageWalkError("unexpected image size");
    }
    return new FilePages(fd, size, pageSize, wal, ix.frames, ix.dbPages);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Bytes of each file compared at once. */
const COMPARE_BYTES = 256 << 10;
let compareBuffers: [Buffer, Buffer] | null = null;

/**
 * Which pages differ between two databases (1 = differs), comparing the
 * files in large chunks and the WAL pages one by one.
 */
function changedPages(a: FilePages, b: FilePages): Uint8Array {
  const n = Math.max(a.pageCount, b.pageCount);
  const common = Math.min(a.pageCount, b.pageCount);
  const out = new Uint8Array(n + 1);
  out.fill(1, common + 1);
  if (a.pageSize !== b.pageSize) return out.fill(1);
  const ps = a.pageSize;
  const raw = Math.min(common, a.filePages, b.filePages);
  const per = Math.max(1, Math.floor(COMPARE_BYTES / ps));
  compareBuffers ??= [
    Buffer.allocUnsafe(COMPARE_BYTES),
    Buffer.allocUnsafe(COMPARE_BYTES),
  ];
  const [ba, bb] = compareBuffers;
  for (let first = 1; first <= raw; first += per) {
    const k = Math.min(per, raw - first + 1);
    const x = a.readRaw(first, k, ba);
    const y = b.readRaw(first, k, bb);
    const bx = Buffer.from(x.buffer, x.byteOffset, x.byteLength);
    const by = Buffer.from(y.buffer, y.byteOffset, y.byteLength);
    if (bx.equals(by)) continue;
    for (let i = 0; i < k; i++) {
      const s = i * ps;
      if (bx.compare(by, s, s + ps, s, s + ps) !== 0) out[first + i] = 1;
    }
  }
  const single = new Set<number>([
    ...a.walFrames.keys(),
    ...b.walFrames.keys(),
  ]);
  for (let p = raw + 1; p <= common; p++) single.add(p);
  for (const p of single) {
    if (p > common) continue;
    const x = a.page(p);
    const y = b.page(p);
    out[p] = Buffer.from(x.buffer, x.byteOffset, x.byteLength).compare(
        Buffer.from(y.buffer, y.byteOffset, y.byteLength),
      ) === 0
      ? 0
      : 1;
  }
  return out;
}

function sideOf(src: FilePages | null): DiffSide | null {
  if (src === null) return null;
  const schema = readSchema(src);
  return { src, schema, tables: planSchema(schema) };
}

/** A snapshot of one database's own state only (`metaTables`), masked. */
function metaSnapshot(
  a: AdapterDef,
  label: string,
  src: FilePages | null,
): Snapshot {
  const regions = src === null ? [] : metaTables(src).map((t) => ({
    adapter: label,
    kind: "sqlite" as const,
    name: t.name,
    category: categoryOf(a, t.name),
    records: t.records,
    columns: t.columns,
  }));
  return normalize({ regions, problems: [] }, { adapters: [a] });
}

/** Masks of one adapter by table name. */
function masksOf(a: AdapterDef): Map<string, MaskRule[]> {
  const masks = new Map<string, MaskRule[]>();
  for (const m of a.mask) {
    masks.set(m.region, [...(masks.get(m.region) ?? []), m]);
  }
  return masks;
}

/** The sqlite part of the delta by pages, or why it cannot be. */
async function sqliteByPages(
  a: AdapterDef,
  beforeDir: string,
  afterDir: string,
  problems: { before: string[]; after: string[] },
  options: StateDeltaOptions,
): Promise<{ regions: RegionDiff[]; method: AdapterMethod }> {
  const label = normalizeLabel(a.label);
  const pb: string[] = [];
  const pa: string[] = [];
  let sb: FilePages | null = null;
  let sa: FilePages | null = null;
  try {
    sb = await openSide(beforeDir, label, pb);
    sa = await openSide(afterDir, label, pa);
    const changed = sb && sa ? changedPages(sb, sa) : null;
    const r = diffSqlitePair(sideOf(sb), sideOf(sa), {
      label,
      categoryOf: (t) => categoryOf(a, t),
      masks: masksOf(a),
      changed,
      keepRows: options.rows === true,
      faults: options.faults ?? {},
    });
    // SQLite's own state (header fields, schema objects, internal tables):
    // small, read whole from both sides' pages and merged as snapshots are.
    r.regions.push(
      ...regionDiffs(metaSnapshot(a, label, sb), metaSnapshot(a, label, sa)),
    );
    problems.before.push(...pb);
    problems.after.push(...pa);
    let pagesChanged = 0;
    if (changed) {
      for (let i = 1; i < changed.length; i++) pagesChanged += changed[i]!;
    }
    return {
      regions: r.regions,
      method: {
        label,
        method: "pages",
        stats: {
          ...r.stats,
          pagesChanged,
          pages: Math.max(sb?.pageCount ?? 0, sa?.pageCount ?? 0),
        },
      },
    };
  } finally {
    sb?.close();
    sa?.close();
  }
}

/**
 * The part of an fs adapter: both trees walked (without following links)
 * as the snapshot worker walks them. Throws PageWalkError (the snapshot
 * worker is used) when the adapter's root leads outside.
 */
async function fsByDigest(
  def: Definition,
  a: AdapterDef,
  beforeDir: string,
  afterDir: string,
  problems: { before: string[]; after: string[] },
  parts: RegionDiff[],
  same: { value: boolean },
): Promise<void> {
  const label = normalizeLabel(a.label);
  const sub: Definition = { ...def, adapters: [a] };
  const exclude = fsExclusions(def.adapters, a);
  const observe = async (dir: string): Promise<Snapshot> => {
    if (label !== ".") {
      try {
        const real = await Deno.realPath(`${dir}/${label}`);
        if (real !== dir && !real.startsWith(dir + "/")) {
          throw new PageWalkError(`${label} leads outside`);
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) {
          if (e instanceof PageWalkError) throw e;
          throw new PageWalkError(`${label}: ${(e as Error).message}`);
        }
      }
    }
    const r = await walkFs(dir, label, exclude);
    return normalize(
      assembleSnapshot(
        sub,
        [{ kind: "fs", label, entries: r.entries }],
        r.problems,
      ),
      sub,
    );
  };
  const before = await observe(beforeDir);
  const after = await observe(afterDir);
  problems.before.push(...before.problems);
  problems.after.push(...after.problems);
  parts.push(...regionDiffs(before, after));
  if (snapshotDigest(before) !== snapshotDigest(after)) same.value = false;
}

/**
 * The part of a json adapter: an after file with the same SHA-256 as the
 * before file is the same state and is not parsed. Throws PageWalkError (snapshots are used) for anything the
 * snapshot worker reports as a problem (a link out, not a regular file).
 */
async function jsonByDigest(
  def: Definition,
  a: AdapterDef,
  beforeDir: string,
  afterDir: string,
  problems: { before: string[]; after: string[] },
  same: { value: boolean },
): Promise<RegionDiff[]> {
  const label = normalizeLabel(a.label);
  const sub: Definition = { ...def, adapters: [a] };
  const read = async (dir: string) => {
    const abs = label === "." ? dir : `${dir}/${label}`;
    if ((await regularInside(dir, abs)) === "absent") {
      return { bytes: null, digest: "absent" };
    }
    const bytes = await Deno.readFile(abs);
    return { bytes, digest: createHash("sha256").update(bytes).digest("hex") };
  };
  const observe = (bytes: Uint8Array | null): Snapshot =>
    normalize(
      assembleSnapshot(sub, [{ kind: "json", label, bytes }]),
      sub,
    );
  const b = await read(beforeDir);
  const before = { digest: b.digest, snap: observe(b.bytes) };
  const x = await read(afterDir);
  problems.before.push(...before.snap.problems);
  if (x.digest === before.digest) {
    problems.after.push(...before.snap.problems);
    return [];
  }
  const after = observe(x.bytes);
  problems.after.push(...after.problems);
  if (snapshotDigest(before.snap) !== snapshotDigest(after)) {
    same.value = false;
  }
  return regionDiffs(before.snap, after);
}

/**
 * The delta from `beforeDir` to `afterDir` as `def`'s adapters see them,
 * masks applied: equal to
 * `computeDelta(normalize(takeSnapshot(before)), normalize(takeSnapshot(after)))`.
 *
 * @example
 * ```ts ignore
 * const { delta } = await stateDelta(def, seedDir, sessionDir);
 * if (delta.business.lossy) console.log("the session lost business state");
 * ```
 */
export async function stateDelta(
  def: Definition,
  beforeDir: string,
  afterDir: string,
  options: StateDeltaOptions = {},
): Promise<StateDeltaResult> {
  const bd = await Deno.realPath(beforeDir);
  const ad = await Deno.realPath(afterDir);
  await checkStateBudget(bd, options.budget ?? {});
  await checkStateBudget(ad, options.budget ?? {});
  const problems = { before: [] as string[], after: [] as string[] };
  const methods: AdapterMethod[] = [];
  const parts: RegionDiff[] = [];
  const bySnapshot: AdapterDef[] = [];
  const same = { value: true };
  // Anything unexpected (a reader declining, an unreadable file, a
  // malformed database) is left to the snapshots, which report problems.
  const declined = (a: AdapterDef, e: unknown) => {
    bySnapshot.push(a);
    methods.push({
      label: normalizeLabel(a.label),
      method: "snapshots",
      why: e instanceof Error ? e.message : String(e),
    });
  };
  for (const a of def.adapters) {
    if (a.kind === "fs") {
      try {
        await fsByDigest(def, a, bd, ad, problems, parts, same);
        methods.push({ label: normalizeLabel(a.label), method: "digest" });
      } catch (e) {
        declined(a, e);
      }
      continue;
    }
    if (a.kind === "json") {
      try {
        parts.push(...await jsonByDigest(def, a, bd, ad, problems, same));
        methods.push({ label: normalizeLabel(a.label), method: "digest" });
      } catch (e) {
        declined(a, e);
      }
      continue;
    }
    if (a.kind !== "sqlite") {
      bySnapshot.push(a);
      continue;
    }
    if (Object.keys(a.key).length > 0) {
      // Pages are keyed by rowid or primary key, not by a natural key.
      declined(
        a,
        new Error(
          `a declared natural key (${
            Object.keys(a.key).join(", ")
          }) identifies rows by their values`,
        ),
      );
      continue;
    }
    try {
      const r = await sqliteByPages(a, bd, ad, problems, options);
      parts.push(...r.regions);
      if (
        r.regions.some((x) =>
          x.structure !== null || x.added.length > 0 ||
          x.removed.length > 0 || x.changed.length > 0
        )
      ) same.value = false;
      methods.push(r.method);
    } catch (e) {
      declined(a, e);
    }
  }
  if (bySnapshot.length > 0) {
    const sub: Definition = { ...def, adapters: bySnapshot };
    // The pair shares its unchanged SQLite leaves, decoded once.
    const pair = { ...options, cache: new PageCache() };
    const sb = normalize(await takeSnapshot(sub, bd, pair), sub);
    const sa = normalize(await takeSnapshot(sub, ad, pair), sub);
    parts.push(...regionDiffs(sb, sa));
    if (snapshotDigest(sb) !== snapshotDigest(sa)) same.value = false;
    // A sqlite adapter read by pages reports its problems itself.
    problems.before.push(...sb.problems);
    problems.after.push(...sa.problems);
    for (const a of bySnapshot) {
      if (methods.some((m) => m.label === normalizeLabel(a.label))) continue;
      methods.push({ label: normalizeLabel(a.label), method: "snapshots" });
    }
  }
  const sameProblems = problems.before.length === problems.after.length &&
    problems.before.every((p, i) => p === problems.after[i]);
  let rows: Map<string, RegionRows> | null = options.rows ? new Map() : null;
  for (const p of parts) {
    if (rows === null) break;
    const changed = p.added.length > 0 || p.removed.length > 0 ||
      p.changed.length > 0;
    if (!changed) continue;
    if (p.rows === undefined) rows = null;
    else rows.set(p.region, p.rows);
  }
  return {
    delta: assembleDelta(parts),
    rows,
    problems,
    methods,
    sameAsBefore: same.value && sameProblems,
  };
}
