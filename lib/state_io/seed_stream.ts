/**
 * The seed state streamed: its digest (exactly `snapshotDigest` of its
 * normalized snapshot), its regions' headers, and the digests of states
 * given as patches against it, in one pass over the seed's records and
 * without holding all of them. What is streamed and what is read whole
 * (`methods` says which): docs/state.md, "The seed streamed".
 *
 * Reads the disk.
 *
 * @module
 */
import { categoryOf } from "../state/classify.ts";
import { createHash, type Hash } from "node:crypto";
import type { Definition } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { readSchema } from "../../adapters/sqlite/btree.ts";
import { PageWalkError } from "../../adapters/sqlite/page_walk_error.ts";
import { planSchema } from "../../adapters/sqlite/plan.ts";
import {
  type StreamTable,
  streamTables,
} from "../../adapters/sqlite/stream.ts";
import { canonicalStateJson, compareKeys } from "../state/keys.ts";
import { normalize } from "../state/normalize.ts";
import {
  type Category,
  compareRegions,
  type Region,
  type StateRecord,
} from "../state/types.ts";
import type {
  GoneRegion,
  PatchedState,
  RegionPatch,
  SeedHeader,
  SnapshotPatch,
} from "../state/patched.ts";
import { checkStateBudget } from "./budget.ts";
import { runCluster } from "./reset.ts";
import {
  assembleSnapshot,
  postgresRegions,
  readStateItems,
  type SnapshotOptions,
  workerItems,
} from "./snapshot.ts";
import {
  type FilePages,
  masksOf,
  metaSnapshot,
  openSide,
} from "./state_delta.ts";

/** How one adapter (and, for SQLite, each table) was read. */
export interface SeedStreamMethod {
  label: string;
  /** `pages`: streamed from the database's pages; `snapshot`: read whole. */
  method: "pages" | "snapshot";
  /** Why `snapshot`. */
  why?: string;
  /** SQLite tables read whole and sorted (stored in another order), with why. */
  sorted?: { table: string; why: string }[];
}

/** Options of {@linkcode streamSeed}. */
export interface StreamSeedOptions extends SnapshotOptions {
  /**
   * States to hash as patches against the seed (their `base` is not
   * checked here). Each one's digest, and the seed's records it replaces
   * or drops, come back in the same order.
   * @default []
   */
  patches?: readonly SnapshotPatch[];
}

/** What {@linkcode streamSeed} returns. */
export interface StreamSeedResult {
  header: SeedHeader;
  /**
   * Per patch: `snapshotDigest(applyPatch(seed, patch))`, or null when the
   * patch cannot be applied (then `patchErrors` says why).
   */
  digests: (string | null)[];
  /** Per patch: why it cannot be applied (as `applyPatch` refuses it), or null. */
  patchErrors: (string | null)[];
  /**
   * Per patch, per region of the patch (its order): the seed's records at
   * the keys it puts (those the seed holds) and drops, in key order.
   */
  was: StateRecord[][][];
  /** Per patch: the seed regions it lacks, with all their records (a table dropped). */
  gone: GoneRegion[][];
  /** Per patch: the patched state (`lib/state/patched.ts`), or null when it cannot be applied. */
  patched: (PatchedState | null)[];
  methods: SeedStreamMethod[];
}

/** One region of the seed: streamed from pages, or already in memory. */
interface SeedPart {
  adapter: string;
  kind: Region["kind"];
  name: string;
  category: Category;
  columns?: string[];
  /** The records in key order (may be called again for another pass). */
  records: () => Iterable<StateRecord>;
  /** Count, once streamed. */
  count: number;
}

class PatchFailed extends Error {}

/** A SQLite adapter streamed from pages failed mid-way: read it whole. */
class Decline extends Error {
  constructor(readonly label: string, message: string) {
    super(message);
  }
}

const regionKey = (r: { adapter: string; kind: string; name: string }) =>
  `${r.adapter}\u0000${r.kind}\u0000${r.name}`;

/**
 * A record as `snapshotDigest` hashes it. Flat rows of one table share a
 * serializer with the columns sorted once; anything else goes through
 * `canonicalStateJson`.
 */
function recordText(rec: StateRecord): string {
  return '{"key":' + JSON.stringify(rec.key) + ',"value":' +
    canonicalStateJson(rec.value) + "}";
}

/** A serializer of flat rows with these columns (canonical JSON, keys sorted once). */
function rowSerializer(
  columns: readonly string[],
): (rec: StateRecord) => string {
  const sorted = [...columns].sort();
  // No columns: `sqlite_schema`, whose records are not rows.
  if (sorted.length === 0 || new Set(sorted).size !== sorted.length) {
    return recordText;
  }
  const names = sorted.map((c, i) =>
    (i > 0 ? "," : "") + JSON.stringify(c) + ":"
  );
  return (rec) => {
    const v = rec.value;
    // A row with another shape (never from the page reader) is hashed generically.
    let s = '{"key":' + JSON.stringify(rec.key) + ',"value":{';
    for (let i = 0; i < sorted.length; i++) {
      const x = v[sorted[i]!];
      if (x === undefined) return recordText(rec);
      s += names[i]! +
        (x === null || typeof x === "string" ||
            (typeof x === "number" && Number.isFinite(x))
          ? JSON.stringify(x)
          : canonicalStateJson(x));
    }
    return s + "}}";
  };
}

/** A hash fed in batches (one update per ~64 KiB). */
class Sink {
  #h: Hash = createHash("sha256");
  #buf = "";
  add(s: string): void {
    this.#buf += s;
    if (this.#buf.length > 1 << 16) {
      this.#h.update(this.#buf);
      this.#buf = "";
    }
  }
  digest(): string {
    this.#h.update(this.#buf);
    this.#buf = "";
    return "sha256:" + this.#h.digest("hex");
  }
}

function regionHead(
  r: { adapter: string; kind: string; name: string; category: string },
): string {
  return `{"adapter":${JSON.stringify(r.adapter)},"category":${
    JSON.stringify(r.category)
  },"kind":${JSON.stringify(r.kind)},"name":${
    JSON.stringify(r.name)
  },"records":[`;
}

/** Integer value of a `[n]` key when it is a safe integer, else NaN. */
function intKey(k: string): number {
  if (k.length > 18 || k.charCodeAt(0) !== 0x5b) return NaN;
  const n = Number(k.slice(1, -1));
  return k.charCodeAt(k.length - 1) === 0x5d && Number.isSafeInteger(n) &&
      "[" + n + "]" === k
    ? n
    : NaN;
}

/** Compare two keys, integers `[n]` without parsing. */
function cmpKeys(a: string, an: number, b: string, bn: number): number {
  if (a === b) return 0;
  if (an === an && bn === bn) return an < bn ? -1 : 1;
  return compareKeys(a, b);
}

/** One patch's state while the seed streams by: a merge fed one seed record at a time. */
class PatchRun {
  readonly sink = new Sink();
  readonly was: StateRecord[][];
  readonly gone: GoneRegion[] = [];
  /** Region keys the patch lists. */
  readonly keys: Set<string>;
  error: string | null = null;
  #regions = 0;
  #p: RegionPatch | null = null;
  #where = "";
  #putN: number[] = [];
  #dropN: number[] = [];
  #wasN: StateRecord[] = [];
  #pi = 0;
  #di = 0;
  #first = true;
  constructor(readonly patch: SnapshotPatch) {
    this.was = Array.isArray(patch?.regions) ? patch.regions.map(() => []) : [];
    this.keys = new Set(
      Array.isArray(patch?.regions) ? patch.regions.map(regionKey) : [],
    );
    this.sink.add(
      '{"problems":' + canonicalStateJson(patch.problems) + ',"regions":[',
    );
  }

  #emit(s: string): void {
    this.sink.add(this.#first ? s : "," + s);
    this.#first = false;
  }

  /** Start region `n` of the patch. */
  begin(n: number): void {
    const p = this.patch.regions[n]!;
    this.#p = p;
    this.#where = `regions[${n}]`;
    this.sink.add((this.#regions++ > 0 ? "," : "") + regionHead(p));
    this.#putN = p.put.map((r) => intKey(r.key));
    this.#dropN = p.drop.map(intKey);
    this.#wasN = this.was[n]!;
    this.#pi = 0;
    this.#di = 0;
    this.#first = true;
  }

  /** The seed's next record of the region (`s`: its hashed form; `kn`: intKey of its key). */
  push(rec: StateRecord, s: string, kn: number): void {
    const { put, drop } = this.#p!;
    const k = rec.key;
    while (
      this.#pi < put.length &&
      cmpKeys(put[this.#pi]!.key, this.#putN[this.#pi]!, k, kn) < 0
    ) this.#emit(recordText(put[this.#pi++]!));
    if (
      this.#di < drop.length &&
      cmpKeys(drop[this.#di]!, this.#dropN[this.#di]!, k, kn) < 0
    ) {
      throw new PatchFailed(
        `${this.#where}: drops a key the base does not hold`,
      );
    }
    const dropped = this.#di < drop.length && drop[this.#di] === k;
    if (this.#pi < put.length && put[this.#pi]!.key === k) {
      if (dropped) {
        throw new PatchFailed(`${this.#where}: key both put and dropped`);
      }
      this.#wasN.push(rec);
      this.#emit(recordText(put[this.#pi++]!));
      return;
    }
    if (dropped) {
      this.#wasN.push(rec);
      this.#di++;
      return;
    }
    this.#emit(s);
  }

  /** The region's end. */
  end(): void {
    const { put, drop } = this.#p!;
    for (; this.#pi < put.length; this.#pi++) {
      this.#emit(recordText(put[this.#pi]!));
    }
    if (this.#di < drop.length) {
      throw new PatchFailed(
        `${this.#where}: drops ${
          drop.length - this.#di
        } key(s) the base does not hold`,
      );
    }
    this.sink.add("]}");
  }
}

/** Run `f` on a patch; a patch that cannot be applied gets its error and stops. */
function guard(run: PatchRun, f: () => void): void {
  if (run.error !== null) return;
  try {
    f();
  } catch (e) {
    if (!(e instanceof PatchFailed)) throw e;
    run.error = e.message;
  }
}

/** Check a patch's shape and key order as `applyPatch` does; the reason, or null. */
function patchProblem(patch: SnapshotPatch): string | null {
  if (
    patch === null || typeof patch !== "object" ||
    !Array.isArray(patch.regions) || !Array.isArray(patch.problems)
  ) return "not a patch";
  for (let n = 0; n < patch.regions.length; n++) {
    const p = patch.regions[n] as RegionPatch;
    const where = `regions[${n}]`;
    if (
      p === null || typeof p !== "object" || typeof p.adapter !== "string" ||
      typeof p.name !== "string" || typeof p.kind !== "string" ||
      typeof p.category !== "string" || !Array.isArray(p.put) ||
      !Array.isArray(p.drop)
    ) return `${where}: not a region patch`;
    let prev: string | null = null;
    for (const k of p.drop) {
      if (typeof k !== "string") return `${where}: bad drop`;
      if (prev !== null && compareKeys(prev, k) >= 0) {
        return `${where}: drop keys not in key order`;
      }
      prev = k;
    }
    prev = null;
    for (const rec of p.put) {
      if (
        rec === null || typeof rec !== "object" || Array.isArray(rec) ||
        typeof rec.key !== "string" || rec.value === null ||
        typeof rec.value !== "object" || Array.isArray(rec.value)
      ) return `${where}: bad put record`;
      if (prev !== null && compareKeys(prev, rec.key) >= 0) {
        return `${where}: put keys not in key order`;
      }
      prev = rec.key;
    }
  }
  return null;
}

/** Whether a patch lists its regions in snapshot order, each once. */
function inRegionOrder(patch: SnapshotPatch): boolean {
  for (let i = 1; i < patch.regions.length; i++) {
    const a = patch.regions[i - 1]!;
    const b = patch.regions[i]!;
    if (
      compareRegions(a as unknown as Region, b as unknown as Region) >= 0
    ) return false;
  }
  return true;
}

/**
 * Stream the seed state of `seedDir` as `def`'s adapters see it (masks
 * applied): its header and digest, equal to `snapshotDigest(normalize(
 * takeSnapshot(def, seedDir), def))`, and for each of `options.patches`
 * the digest of the seed with the patch applied and the seed's records the
 * patch replaces or drops. Memory holds one page-read table at a time (see
 * the module doc for what is read whole). Requires `--allow-read` (and the
 * worker permissions of `takeSnapshot` when an fs or json adapter, or a
 * SQLite database the page reader declines, is read whole).
 *
 * @example
 * ```ts ignore
 * const { header, digests } = await streamSeed(def, seedDir, { patches: [patch] });
 * console.log(header.digest, digests[0]);
 * ```
 */
export async function streamSeed(
  def: Definition,
  seedDir: string,
  options: StreamSeedOptions = {},
): Promise<StreamSeedResult> {
  const dir = await Deno.realPath(seedDir);
  await checkStateBudget(dir, options.budget ?? {});
  const whole = new Map<string, string>();
  for (const a of def.adapters) {
    if (a.kind === "sqlite" && Object.keys(a.key).length > 0) {
      whole.set(
        normalizeLabel(a.label),
        "a declared natural key identifies rows by their values",
      );
    }
  }
  for (;;) {
    try {
      return await streamOnce(def, dir, options, whole);
    } catch (e) {
      if (!(e instanceof Decline) || whole.has(e.label)) throw e;
      whole.set(e.label, e.message);
    }
  }
}

async function streamOnce(
  def: Definition,
  dir: string,
  options: StreamSeedOptions,
  whole: Map<string, string>,
): Promise<StreamSeedResult> {
  const methods: SeedStreamMethod[] = [];
  const parts: SeedPart[] = [];
  const open: FilePages[] = [];
  try {
    // 1. Adapters read whole (fs, json, declined sqlite), through the worker.
    const items = workerItems(def);
    const wholeIdx: number[] = [];
    def.adapters.forEach((a, i) => {
      const label = normalizeLabel(a.label);
      if (a.kind === "fs" || a.kind === "json" || whole.has(label)) {
        wholeIdx.push(i);
      }
    });
    const assembled = new Map<number, string[]>();
    let workerProblems: string[] = [];
    if (wholeIdx.length > 0) {
      const reply = await readStateItems(
        dir,
        wholeIdx.map((i) => items[i]!),
        options,
      );
      workerProblems = reply.problems;
      wholeIdx.forEach((i, j) => {
        const a = def.adapters[i]!;
        const sub = { adapters: [a] };
        const snap = normalize(
          assembleSnapshot(sub, [reply.results[j]!]),
          sub,
        );
        assembled.set(i, snap.problems);
        for (const r of snap.regions) parts.push(inMemory(r));
        const label = normalizeLabel(a.label);
        methods.push({
          label,
          method: "snapshot",
          why: whole.get(label) ??
            `a${a.kind === "fs" ? "n" : ""} ${a.kind} adapter is read whole`,
        });
      });
    }
    // 2. SQLite adapters by pages: problems (the WAL's) known on opening.
    for (let i = 0; i < def.adapters.length; i++) {
      const a = def.adapters[i]!;
      const label = normalizeLabel(a.label);
      if (a.kind !== "sqlite" || whole.has(label)) continue;
      const problems: string[] = [];
      let tables: StreamTable[];
      let own: Region[] = [];
      try {
        const side = await openSide(dir, label, problems);
        if (side === null) tables = [];
        else {
          open.push(side.pages);
          own = metaSnapshot(a, label, side.pages).regions;
          const schema = readSchema(side.pages);
          const planned = planSchema(schema);
          tables = streamTables(
            { src: side.pages, schema, tables: planned },
            masksOf(a),
          );
        }
      } catch (e) {
        throw new Decline(label, (e as Error).message);
      }
      assembled.set(i, problems);
      const sorted = tables.filter((t) => t.order === "sorted").map((t) => ({
        table: t.name,
        why: t.why!,
      }));
      methods.push({
        label,
        method: "pages",
        ...(sorted.length > 0 ? { sorted } : {}),
      });
      for (const t of tables) {
        parts.push({
          adapter: label,
          kind: "sqlite",
          name: t.name,
          category: categoryOf(a, t.name),
          columns: t.columns,
          records: () => declining(label, t.records()),
          count: 0,
        });
      }
      for (const r of own) parts.push(inMemory(r));
    }
    const problems = [...workerProblems];
    def.adapters.forEach((_, i) => problems.push(...(assembled.get(i) ?? [])));
    // 3. Postgres adapters, through the run's cluster.
    for (const a of def.adapters) {
      if (a.kind !== "postgres") continue;
      const cluster = runCluster(options, "streamSeed");
      const obs = await cluster.observe(cluster.connection(dir, a).db, a);
      problems.push(...obs.problems);
      const sub = { adapters: [a] };
      const snap = normalize(
        { regions: postgresRegions(a, obs), problems: [] },
        sub,
      );
      for (const r of snap.regions) parts.push(inMemory(r));
      methods.push({
        label: normalizeLabel(a.label),
        method: "snapshot",
        why: "a postgres adapter is read whole",
      });
    }
    parts.sort((x, y) =>
      compareRegions(x as unknown as Region, y as unknown as Region)
    );
    return hashAll(parts, problems, options.patches ?? [], methods);
  } finally {
    for (const p of open) p.close();
  }
}

function inMemory(r: Region): SeedPart {
  return {
    adapter: r.adapter,
    kind: r.kind,
    name: r.name,
    category: r.category,
    ...(r.columns !== undefined ? { columns: r.columns } : {}),
    records: () => r.records,
    count: r.records.length,
  };
}

/** A table's records; a page reader failing mid-way declines the adapter. */
function* declining(
  label: string,
  it: Iterable<StateRecord>,
): Generator<StateRecord> {
  try {
    yield* it;
  } catch (e) {
    if (e instanceof PageWalkError) throw new Decline(label, e.message);
    throw e;
  }
}

/** One pass over the seed's parts: its digest and every in-order patch's; then the others. */
function hashAll(
  parts: SeedPart[],
  problems: string[],
  patches: readonly SnapshotPatch[],
  methods: SeedStreamMethod[],
): StreamSeedResult {
  const runs = patches.map((p) => new PatchRun(p));
  runs.forEach((r) => (r.error = patchProblem(r.patch)));
  const inPass = runs.filter((r) => r.error === null && inRegionOrder(r.patch));
  const later = runs.filter((r) => r.error === null && !inPass.includes(r));
  // Per region key: which in-pass patches list it (and at which index).
  const listing = new Map<string, { run: PatchRun; n: number }[]>();
  for (const run of inPass) {
    run.patch.regions.forEach((p, n) => {
      const k = regionKey(p);
      const list = listing.get(k) ?? [];
      list.push({ run, n });
      listing.set(k, list);
    });
  }
  const seedSink = new Sink();
  seedSink.add('{"problems":' + canonicalStateJson(problems) + ',"regions":[');
  const byKey = new Map(parts.map((p) => [regionKey(p), p]));
  // The union of the seed's regions and the patches', in snapshot order.
  const keys = new Map<
    string,
    { adapter: string; kind: string; name: string }
  >();
  for (const p of parts) keys.set(regionKey(p), p);
  for (const run of inPass) {
    for (const p of run.patch.regions) {
      if (!keys.has(regionKey(p))) keys.set(regionKey(p), p);
    }
  }
  const order = [...keys.entries()].sort((x, y) =>
    compareRegions(x[1] as Region, y[1] as Region)
  );
  let seedRegions = 0;
  for (const [k] of order) {
    const part = byKey.get(k) ?? null;
    const users = listing.get(k) ?? [];
    for (const u of users) guard(u.run, () => u.run.begin(u.n));
    if (part !== null) {
      seedSink.add((seedRegions++ > 0 ? "," : "") + regionHead(part));
      const text = textFor(part);
      // Patches that lack this seed region keep its records (gone).
      const lacking = inPass.filter((r) => r.error === null && !r.keys.has(k))
        .map((r) => goneOf(r, part));
      let count = 0;
      for (const rec of part.records()) {
        const s = text(rec);
        seedSink.add(count > 0 ? "," + s : s);
        count++;
        for (const g of lacking) g.push(rec);
        if (users.length === 0) continue;
        const kn = intKey(rec.key);
        for (const u of users) guard(u.run, () => u.run.push(rec, s, kn));
      }
      part.count = count;
      seedSink.add("]}");
    }
    for (const u of users) guard(u.run, () => u.run.end());
  }
  seedSink.add("]}");
  for (const run of inPass) {
    if (run.error === null) run.sink.add("]}");
  }
  // Patches whose regions are in another order: a pass each.
  for (const run of later) {
    run.patch.regions.forEach((p, n) => {
      guard(run, () => run.begin(n));
      const part = byKey.get(regionKey(p)) ?? null;
      if (part !== null && run.error === null) {
        const text = textFor(part);
        for (const rec of part.records()) {
          const s = text(rec);
          const kn = intKey(rec.key);
          guard(run, () => run.push(rec, s, kn));
          if (run.error !== null) break;
        }
      }
      guard(run, () => run.end());
    });
    if (run.error === null) run.sink.add("]}");
    for (const part of parts) {
      if (run.error !== null || run.keys.has(regionKey(part))) continue;
      const g = goneOf(run, part);
      for (const rec of part.records()) g.push(rec);
    }
  }
  return {
    header: {
      digest: seedSink.digest(),
      problems,
      regions: parts.map((p) => ({
        adapter: p.adapter,
        kind: p.kind,
        name: p.name,
        category: p.category,
        ...(p.columns !== undefined ? { columns: p.columns } : {}),
        count: p.count,
      })),
    },
    digests: runs.map((r) => (r.error === null ? r.sink.digest() : null)),
    patchErrors: runs.map((r) => r.error),
    was: runs.map((r) => r.was),
    gone: runs.map((r) => r.gone),
    patched: runs.map((r): PatchedState | null =>
      r.error !== null ? null : {
        base: r.patch.base,
        problems: r.patch.problems,
        regions: r.patch.regions.map((p, n) => ({ ...p, was: r.was[n]! })),
        gone: r.gone,
      }
    ),
    methods,
  };
}

/** A new gone region of `run` for the seed's `part`; its record list. */
function goneOf(run: PatchRun, part: SeedPart): StateRecord[] {
  const was: StateRecord[] = [];
  run.gone.push({
    adapter: part.adapter,
    kind: part.kind,
    name: part.name,
    category: part.category,
    ...(part.columns !== undefined ? { columns: part.columns } : {}),
    was,
  });
  return was;
}

/** How a part's records are hashed. */
function textFor(part: SeedPart): (r: StateRecord) => string {
  return part.kind === "sqlite" && part.columns
    ? rowSerializer(part.columns)
    : recordText;
}
