/**
 * The evidence ledger on disk: an append-only SHA-256 hash chain in one JSON
 * file, written atomically. The chain itself (hashing, verification) is the
 * pure `chain.ts`; this module reads and writes files.
 *
 * Requires `--allow-read` and `--allow-write` for the ledger's directory
 * (and `--allow-sys=loadavg` to verify a large ledger on two threads).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { readJsonDocument, readTextDocument } from "./files.ts";
import { parseEvidenceJson } from "./canonical.ts";
import {
  type Owner,
  ownerText,
  parseOwner,
  selfOwner,
} from "../common/owner.ts";
import {
  type Block,
  blockLine,
  chainBlocks,
  type Entry,
  GENESIS,
  joinSegments,
  LEDGER_NAME,
  LEDGER_VERSION,
  ledgerRecipesText,
  ledgerText,
  type SegmentWalk,
  verifyLedger,
  verifyLedgerText,
  VerityByteWalker,
  type WalkedBlock,
  walkVerification,
} from "./chain.ts";
import { writeChunksAtomic } from "./atomic_write.ts";
import type { HashRequest } from "./hash_worker.ts";
import {
  type DeferredOutcome,
  type SegmentOutcome,
  segmentPlan,
  walkSegment,
  walkSegmentDeferred,
} from "./segment_walk.ts";
import {
  CONTROL,
  type HashArena,
  hashChunk,
  LaneHasher,
  markReady,
  newControl,
  newHashArena,
} from "./slot_hash.ts";
import { bindingOf, bindToLedger, type LedgerBinding } from "./binding.ts";

export { GENESIS, verifyLedger, verifyLedgerText };
export type { Block, Entry };
export type { LedgerProblem, LedgerVerification } from "./chain.ts";
import type { LedgerVerification } from "./chain.ts";
import { exists } from "../common/exists.ts";

/** The result of an append: the new block's index and hash; the hash is the new head. */
export interface AppendResult {
  index: number;
  hash: string;
  head: string;
}

/**
 * Read and parse a ledger file (numbers as Python reads them, so ledgers
 * written by mcp-evidence-validator verify exactly). Throws
 * {@linkcode UsageError} naming the file when it is missing or not JSON.
 */
export async function readLedgerFile(path: string): Promise<unknown> {
  await tooLargeToReadWhole(path);
  return (await readJsonDocument(path)).value;
}

/**
 * Feed a file's lines to a walker as they are read: every complete line to
 * `w.lines`. Returns the bytes after the file's last newline, or null when
 * the walk failed. The next piece is read while the walker works on the
 * current one (two buffers); memory is bounded by the buffers and the
 * longest line. Throws what `read` throws.
 */
async function feedLines(
  w: VerityByteWalker,
  read: (into: Uint8Array) => Promise<number | null>,
  pieceBytes: number,
): Promise<Uint8Array | null> {
  let cur = new Uint8Array(pieceBytes);
  let nxt = new Uint8Array(cur.length);
  // cur[0, filled) starts at a line's start; eof: nothing more to read.
  let n = await read(cur);
  let filled = n ?? 0;
  let eof = n === null;
  while (!eof) {
    const cut = cur.subarray(0, filled).lastIndexOf(0x0a) + 1;
    const rest = filled - cut;
    if (rest === cur.length) {
      // One line longer than the buffer: make room for it, if it can be
      // a line of the layout.
      if (!w.mayContinue(rest)) return null;
      const bigger = new Uint8Array(cur.length * 2);
      bigger.set(cur);
      cur = bigger;
      nxt = new Uint8Array(cur.length);
      n = await read(cur.subarray(filled));
      if (n === null) eof = true;
      else filled += n;
      continue;
    }
    // The incomplete last line goes first in the other buffer, and the
    // next piece is read after it while this one is walked.
    nxt.set(cur.subarray(cut, filled));
    const pending = read(nxt.subarray(rest));
    let tail: number;
    try {
      tail = w.lines(cur.subarray(0, cut));
    } catch (e) {
      await pending.catch(() => {});
      throw e;
    }
    if (tail < 0) {
      await pending.catch(() => {});
      return null;
    }
    n = await pending;
    [cur, nxt] = [nxt, cur];
    filled = rest + (n ?? 0);
    eof = n === null;
  }
  const tail = w.lines(cur.subarray(0, filled));
  return tail < 0 ? null : cur.subarray(tail, filled);
}

/**
 * Feed a file's bytes to a walker as a stream, in 4 MiB reads
 * ({@linkcode feedLines}): every complete line to `lines`, the bytes after
 * the last newline to the result. Null when the walk failed. Throws
 * {@linkcode UsageError} for a missing or unreadable file.
 */
async function walkFileBytes(
  path: string,
  w: VerityByteWalker,
  options: WalkOptions = {},
): Promise<ReturnType<VerityByteWalker["end"]>> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError(`${path}: no such file`);
    }
    throw new UsageError(`${path}: cannot read: ${(e as Error).message}`);
  }
  const read = (into: Uint8Array): Promise<number | null> =>
    f.read(into).catch((e) => {
      throw new UsageError(`${path}: cannot read: ${(e as Error).message}`);
    });
  try {
    const rest = await feedLines(w, read, options.pieceBytes ?? 1 << 22);
    return rest === null ? null : w.end(rest);
  } finally {
    f.close();
  }
}

/** What {@linkcode walkLedgerFile} found in a ledger in verity's own layout. */
export interface FileWalk {
  blocks: number;
  head: string;
  types: Record<string, number>;
  /** Every contract recipe the records state, sorted. */
  recipes: string[];
}

/**
 * Walk a ledger file in verity's own layout as a stream (bounded memory,
 * no limit from string length): every record checked canonical and every
 * block hashed and chained. Null when the file is another layout or does
 * not chain (the general path then reports each problem). Throws
 * {@linkcode UsageError} for a missing or unreadable file.
 */
export async function walkLedgerFile(
  path: string,
  onBlock: ((b: WalkedBlock) => void) | null = null,
): Promise<FileWalk | null> {
  const w = new VerityByteWalker();
  w.onBlock = onBlock;
  const r = await walkFileBytes(path, w);
  if (r === null || r.problems.length > 0) return null;
  return {
    blocks: r.blocks,
    head: r.head,
    types: r.types,
    recipes: w.recipes(),
  };
}

/** Options of {@linkcode walkFileBytes}. */
interface WalkOptions {
  /** Bytes per read (4 MiB); a line longer than that doubles it. */
  pieceBytes?: number | undefined;
}

/**
 * Whether a second core is likely idle: two or more cores and a one-minute
 * load average at least one below their count (false when the load cannot
 * be read: `--allow-sys=loadavg` not granted). A second thread only pays
 * when it runs beside this one.
 */
function coreIdle(): boolean {
  const cores = navigator.hardwareConcurrency;
  if (cores < 2) return false;
  try {
    // Asked first, so that no permission prompt is ever shown.
    const sys = Deno.permissions.querySync({ name: "sys", kind: "loadavg" });
    return sys.state === "granted" && Deno.loadavg()[0]! <= cores - 1;
  } catch {
    return false;
  }
}

/**
 * Ledgers at least this large are verified in segments, walked and hashed
 * in WebAssembly (`block_walk_wasm.ts`, `sha256_lanes.ts`) rather than as
 * one stream hashed block by block through node:crypto. Measured side by
 * side (in one process, medians of 11 to 15 rounds): segments took 0.58x
 * the stream's time at 4 MB, 0.55x at 8 MB, 0.56x at 12.5 MB and 0.64x at
 * 20 MB; at 1 MB 0.71x once warm, but 35 ms against 19 ms on a first call
 * (the module compiled) (docs/benchmarks.md).
 */
const SEGMENT_BYTES = 4 << 20;

/**
 * Ledgers at least this large are verified on two threads when a second
 * core is idle (see verifyLedgerFile): starting the worker blocks this
 * thread 10-25 ms (a new isolate). Measured side by side against segments
 * on one thread: 1.41x the time at 4 MB, 1.20x at 8 MB, 1.17x at 12.5 MB,
 * 1.03x at 20 MB, 0.86x at 30 MB.
 */
const PARALLEL_BYTES = 32 << 20;

/**
 * Slots between the two threads: how far this thread may walk ahead of the
 * hashing. 16 slots measured no faster than 4 (1.03x the time, 31 rounds
 * at 100,000 blocks, each design loaded from its own copy).
 */
const SLOTS = 4;

/**
 * The fast path of {@linkcode verifyLedgerFile}, in segments, on two
 * threads (or on this one alone, `noWorker`), split by stage: the file is
 * cut into segments ({@linkcode segmentPlan}); this thread walks them in
 * turn (layout, chain links, canonical form: in WebAssembly when a
 * segment's lines are in the subset `block_walk_wasm.ts` takes, else with
 * `VerityByteWalker`), each into the next free slot of shared WebAssembly
 * memory, leaving there where each block's parts lie
 * ({@linkcode HashSlot}). A worker that only hashes claims the slots'
 * blocks a chunk at a time, builds each block's input in place, hashes
 * them four at a time in WebAssembly and compares each digest with the
 * published digits ({@linkcode hashChunk}); this thread does too whenever
 * its next slot is not free yet, so that it never waits while there is
 * work (nor while the worker comes up). A segment whose blocks cannot all
 * be left in a slot is walked here with its hashes. A runtime that cannot
 * make the memory or the module answers null. The walks are joined ({@linkcode joinSegments}); only a ledger
 * that verifies is answered (null otherwise: the caller walks it again on
 * one thread, which names every problem).
 */
async function verifyInSegments(
  path: string,
  expectedHead: string,
  size: number,
  options: VerifyFileOptions,
): Promise<(LedgerVerification & { recipes: string[] }) | null> {
  const { counts } = options;
  if (counts) counts.answered = false;
  const plan = segmentPlan(size, options.segmentBytes);
  const c = newControl(SLOTS);
  const verified = new SharedArrayBuffer(4 * plan.count);
  const hashed = new Int32Array(verified);
  // A slot holds a segment and its last line, or the last segment (up to
  // twice the others); one that does not fit is walked here with its
  // hashes.
  let arena: HashArena;
  let hasher: LaneHasher;
  try {
    arena = newHashArena(2 * plan.bytes + 4096, SLOTS, 2, options.lanesWasm);
    hasher = new LaneHasher(arena, arena.work[0]!);
  } catch {
    // No WebAssembly SIMD or shared memory here: the stream walk answers.
    if (counts) counts.noArena = true;
    return null;
  }
  const { slots } = arena;
  // Tests: this thread leaves every hash to the worker.
  const hashHere = options.workerHashesAll !== true;
  let here = 0;
  const hash = () => {
    const n = hashHere ? hashChunk(c, hasher, slots, hashed) : 0;
    here += n;
    return n > 0;
  };
  /**
   * Wait until slot `s` is free, hashing meanwhile; false on a mismatch,
   * or when nothing moved for 10 s (a worker that died holding a claim),
   * so that no fault of the two threads' sharing can hang a verify.
   */
  const free = (s: number): boolean => {
    const state = CONTROL.slot(s);
    let since = performance.now();
    let moved = Atomics.load(c, CONTROL.there);
    while (Atomics.load(c, state) !== 0) {
      if (Atomics.load(c, CONTROL.mismatch) !== 0) return false;
      if (hash()) continue;
      Atomics.wait(c, state, 1, 5);
      const m = Atomics.load(c, CONTROL.there);
      if (m !== moved) {
        moved = m;
        since = performance.now();
      } else if (performance.now() - since > 10_000) return false;
    }
    return true;
  };
  let worker: Worker | null = null;
  try {
    try {
      if (options.noWorker === true) throw new Error("no worker");
      worker = new Worker(
        options.workerModule ??
          new URL("./hash_worker.ts", import.meta.url).href,
        { type: "module", name: "verity-ledger-hash" },
      );
      worker.onerror = (ev: ErrorEvent) => ev.preventDefault();
      const request: HashRequest = {
        control: c.buffer as SharedArrayBuffer,
        verified,
        slots,
        memory: arena.memory,
        module: arena.module,
        work: arena.work[1]!,
      };
      worker.postMessage(request);
    } catch {
      // No worker: this thread hashes every block.
    }
    const walks: SegmentOutcome[] = [];
    const deferred = new Int32Array(plan.count);
    let ring = 0;
    try {
      using file = Deno.openSync(path, { read: true });
      for (let k = 0; k < plan.count; k++) {
        // Reads block: let timers and signal handlers run now and then.
        if (k % 32 === 31) await new Promise((go) => setTimeout(go, 0));
        const s = ring % SLOTS;
        if (!free(s)) return null;
        const d = walkSegmentDeferred(
          file,
          plan,
          k,
          slots[s]!,
          hasher,
        );
        let r: DeferredOutcome = d.outcome;
        if (typeof r === "object" && r !== null && d.deferred > 0) {
          deferred[k] = d.deferred;
          markReady(c, SLOTS, ring, k, d.deferred);
          ring++;
        }
        if (r === "hash here") r = walkSegment(file, plan, k);
        if (r === null) return null;
        walks.push(r);
      }
    } catch {
      // Unreadable: the walk on one thread says so.
      return null;
    }
    Atomics.store(c, CONTROL.over, 1);
    Atomics.notify(c, CONTROL.ready);
    // Every slot hashed: what is left is hashed here too (or, in tests,
    // by the worker alone).
    for (let s = 0; s < SLOTS; s++) if (!free(s)) return null;
    if (Atomics.load(c, CONTROL.mismatch) !== 0) return null;
    if (counts) {
      counts.walkedHere = hasher.segmentsWalked;
      counts.here = here;
      counts.there = Atomics.load(c, CONTROL.there);
    }
    const segments: SegmentWalk[] = [];
    const recipes = new Set<string>();
    for (let k = 0; k < plan.count; k++) {
      const r = walks[k]!;
      // A walk counts only once its deferred hashes were found equal.
      if (deferred[k]! > 0 && Atomics.load(hashed, k) !== 1) return null;
      if (r === "empty") continue;
      segments.push(r as SegmentWalk);
      for (const x of (r as SegmentWalk).recipes) recipes.add(x);
    }
    const r = joinSegments(segments);
    if (r === null || r.head !== expectedHead) return null;
    if (counts) counts.answered = true;
    return {
      ok: true,
      blocks: r.blocks,
      problems: [],
      head: r.head,
      format: { ledger: LEDGER_NAME, version: LEDGER_VERSION },
      types: r.types,
      recipes: [...recipes].sort(),
    };
  } finally {
    worker?.terminate();
  }
}

/** Options of {@linkcode verifyLedgerFile}, for tests and benches. */
export interface VerifyFileOptions {
  /**
   * Walk on two threads, in segments: "auto" (the default) for a ledger of
   * at least 32 MiB when a second core is likely idle (two or more cores,
   * the one-minute load average at least one below their count), or
   * always, or never. On one thread, a ledger of at least 4 MiB is walked
   * in segments too (unless `stream`), a smaller one as one stream.
   */
  twoThreads?: "auto" | boolean;
  /** Bytes per read on one thread (4 MiB). */
  pieceBytes?: number | undefined;
  /**
   * Filled with how many blocks each thread hashed on two threads (this
   * one: those it left in a slot and hashed itself, not those of a
   * segment it walked with its hashes), and whether the two-thread walk
   * gave the answer (false: it was walked again on one).
   */
  counts?: {
    here: number;
    there: number;
    answered?: boolean;
    /** Set when the segments' memory or hashing module could not be made. */
    noArena?: boolean;
    /** Segments whose block lines were walked in WebAssembly. */
    walkedHere?: number;
  };
  /**
   * This thread hashes nothing it left in a slot: the worker hashes every
   * such block (tests: so that every hash is checked across threads).
   */
  workerHashesAll?: boolean;
  /** Bytes per segment (1 MiB, segmentPlan's; tests use small ones). */
  segmentBytes?: number;
  /**
   * On one thread, walk the ledger as one stream, hashing each block as it
   * goes (node:crypto), even when it is large enough to be walked in
   * segments here (tests and benches: the walk that names every problem).
   */
  stream?: boolean;
  /** The hashing module's bytes (tests: a module that does not compile). */
  lanesWasm?: Uint8Array<ArrayBuffer>;
  /** Segments walked and hashed on this thread alone (tests and benches). */
  noWorker?: boolean;
  /** The worker's module (tests: one that fails); hash_worker.ts. */
  workerModule?: string;
}

/**
 * Verify a ledger file against a head kept elsewhere (see `verifyLedger`).
 * verity's own layout is walked as a stream; anything else (or a chain that
 * does not reach the head) is parsed as Python reads it, reporting every
 * problem. A large ledger may be walked on two threads (see
 * {@linkcode VerifyFileOptions.twoThreads}): only a ledger that verifies
 * is answered that way; any other is walked again on one thread, so the
 * problems named are the same. Throws {@linkcode UsageError} for a
 * missing, unreadable or non-JSON file.
 */
export async function verifyLedgerFile(
  path: string,
  expectedHead: string,
  options: VerifyFileOptions = {},
): Promise<LedgerVerification & { recipes: string[] }> {
  const mode = options.twoThreads ?? "auto";
  const size = mode === false && options.stream === true
    ? -1
    : await Deno.stat(path).then((s) => s.size, () => -1);
  const two = size >= 0 &&
    (mode === true ||
      (mode === "auto" && size >= PARALLEL_BYTES && coreIdle()));
  const one = !two && size >= SEGMENT_BYTES && options.stream !== true;
  if (two || one) {
    const fast = await verifyInSegments(path, expectedHead, size, {
      ...options,
      noWorker: one || options.noWorker === true,
    });
    if (fast !== null) return fast;
  }
  const w = new VerityByteWalker(expectedHead);
  const r = await walkFileBytes(path, w, { pieceBytes: options.pieceBytes });
  if (r !== null) {
    // verity's own layout: the walk found what verifyLedger finds.
    return { ...walkVerification(w, r), recipes: w.recipes() };
  }
  const { text } = await readWholeLedger(path);
  try {
    return {
      ...verifyLedgerText(text, expectedHead),
      recipes: ledgerRecipesText(text),
    };
  } catch (e) {
    if (e instanceof SyntaxError) {
      throw new UsageError(`${path}: not valid JSON: ${e.message}`);
    }
    throw e;
  }
}

/** The longest text V8 can hold (UTF-16 code units); a UTF-8 file of at most this many bytes fits. */
const MAX_TEXT = 2 ** 29 - 24;

/**
 * Read a ledger that is not in verity's own line layout whole (the general
 * path parses it). Throws {@linkcode UsageError} for a missing or unreadable
 * file, or one too large to be held as one text.
 */
async function readWholeLedger(
  path: string,
): Promise<{ text: string; bytes: Uint8Array }> {
  await tooLargeToReadWhole(path);
  return await readTextDocument(path);
}

/** Throws {@linkcode UsageError} when the file is too large to be held as one text. */
async function tooLargeToReadWhole(path: string): Promise<void> {
  const size = await Deno.stat(path).then((s) => s.size, () => 0);
  if (size > MAX_TEXT) {
    throw new UsageError(
      `${path}: ${size} bytes and not in verity's own ledger layout (one canonical block per line), which is the only layout read as a stream; other layouts are read whole, up to ${MAX_TEXT} bytes`,
    );
  }
}

/** Options for {@linkcode withLedgerLock}. */
export interface LockOptions {
  /**
   * Give up waiting for another writer after this many milliseconds.
   * @default {30000}
   */
  waitMs?: number;
}

/**
 * The owner written into `<ledger>.lock` by the writer holding it, or null
 * (free, or never used). For messages only: the lock itself is the kernel's.
 */
export async function ledgerLockOwner(
  ledgerPath: string,
): Promise<Owner | null> {
  try {
    return parseOwner(await Deno.readTextFile(`${ledgerPath}.lock`));
  } catch {
    return null;
  }
}

/**
 * Run `fn` holding an exclusive advisory lock (flock) on `<ledger>.lock`, so
 * concurrent appends never lose a block. The kernel drops the lock when its
 * holder dies, however it dies, so a killed writer never leaves a stale
 * lock, and two waiters can never both take one. The lock file stays (an
 * unlinked lock file would let a later writer lock a different file); it
 * holds the current holder's pid and start time.
 */
export async function withLedgerLock<T>(
  ledgerPath: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lock = `${ledgerPath}.lock`;
  const waitMs = options.waitMs ?? 30_000;
  let f: Deno.FsFile;
  try {
    f = await Deno.open(lock, { read: true, write: true, create: true });
  } catch (e) {
    throw new UsageError(
      `${lock}: cannot open the ledger lock: ${(e as Error).message}`,
    );
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const got = await Promise.race([
    f.lock(true).then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), waitMs))),
  ]);
  clearTimeout(timer);
  if (!got) {
    const owner = await ledgerLockOwner(ledgerPath);
    // The pending lock request ends with this process (exit 2 follows).
    throw new UsageError(
      `${lock}: another verity (pid ${
        owner?.pid ?? "unknown"
      }) has been writing this ledger for more than ${
        Math.round(waitMs / 1000)
      } s`,
    );
  }
  try {
    await f.truncate(0);
    await f.write(new TextEncoder().encode(ownerText(selfOwner())));
    return await fn();
  } finally {
    await f.truncate(0).catch(() => {});
    try {
      f.unlock();
    } catch {
      // closing releases it too
    }
    f.close();
  }
}

/**
 * Append several blocks to a verity ledger in one atomic write, creating the
 * ledger when it is missing. Refuses (with {@linkcode UsageError}) a file
 * that is not a verity ledger, or whose own chain does not verify.
 * Returns the first new index, how many were added, and the new head.
 *
 * `entries` may be any iterable, sync or async: they are chained and
 * written a few thousand at a time, so an iterable that makes its entries
 * as it goes writes a ledger of any size in bounded memory. A bad entry
 * (empty type, no record, a record with no canonical form) throws
 * `TypeError` and leaves the ledger as it was.
 */
export async function appendBlocks(
  ledgerPath: string,
  entries: Iterable<Entry> | AsyncIterable<Entry>,
): Promise<{ first: number; count: number; head: string }> {
  return await withLedgerLock(ledgerPath, async () => {
    let existing: Block[] = [];
    let head = GENESIS;
    let start = 0;
    // Bytes of the existing file kept as they are (verity's own layout,
    // every block chained): all but the closing "\n]}\n".
    let kept: number | null = null;
    if (await exists(ledgerPath, { followSymlinks: false })) {
      const w = await walkLedgerFile(ledgerPath);
      if (w !== null) {
        head = w.head;
        start = w.blocks;
        kept = w.blocks === 0 ? 0 : (await Deno.stat(ledgerPath)).size - 4;
      } else {
        const { text } = await readWholeLedger(ledgerPath);
        let doc: unknown;
        try {
          // The strict reader: a duplicated key anywhere is refused, never
          // read as its last copy.
          doc = parseEvidenceJson(text, { numbers: "python" });
        } catch (e) {
          throw new UsageError(
            `${ledgerPath}: not valid JSON: ${(e as Error).message}`,
          );
        }
        const d = doc as {
          ledger?: unknown;
          version?: unknown;
          blocks?: unknown;
        };
        if (
          typeof doc !== "object" || doc === null || d.ledger !== LEDGER_NAME
        ) {
          throw new UsageError(
            `${ledgerPath}: not a verity ledger (ledger field ${
              JSON.stringify(d?.ledger) ?? "missing"
            }); verity appends only to its own ledgers`,
          );
        }
        if (d.version !== LEDGER_VERSION) {
          throw new UsageError(
            `${ledgerPath}: unsupported verity ledger version ${
              JSON.stringify(d.version)
            }`,
          );
        }
        // Self-consistency: every check except the comparison with an outside head.
        const v = verifyLedger(doc, GENESIS);
        const problems = v.problems.filter((p) =>
          !(p.kind === "head" && v.head !== null)
        );
        if (problems.length > 0 || v.head === null) {
          throw new UsageError(
            `${ledgerPath}: the ledger's own chain does not verify (${problems.length} problem(s); first: ${
              problems[0]?.message ?? "no head"
            }); refusing to append`,
          );
        }
        existing = d.blocks as Block[];
        head = v.head;
        start = existing.length;
      }
    }
    const chain = { head, next: start };
    await writeChunksAtomic(
      ledgerPath,
      ledgerPieces(
        ledgerPath,
        kept,
        existing.map(blockLine),
        chained(entries, chain),
      ),
    );
    return { first: start, count: chain.next - start, head: chain.head };
  });
}

/**
 * Chain `entries` onto `chain` (its head and next index, updated as it
 * goes), yielding the new block lines a batch at a time.
 */
async function* chained(
  entries: Iterable<Entry> | AsyncIterable<Entry>,
  chain: { head: string; next: number },
): AsyncGenerator<string[]> {
  let batch: Entry[] = [];
  const flush = () => {
    const { lines, head } = chainBlocks(chain.head, chain.next, batch);
    chain.head = head;
    chain.next += batch.length;
    batch = [];
    return lines;
  };
  for await (const e of entries) {
    batch.push(e);
    if (batch.length === 4096) yield flush();
  }
  if (batch.length > 0) yield flush();
}

/**
 * The new ledger file in pieces: the kept bytes of the existing file (or
 * the header and the re-serialized existing blocks), then the new block
 * lines, then the closing bracket. Never one string of the whole file.
 */
async function* ledgerPieces(
  path: string,
  kept: number | null,
  existing: string[],
  batches: AsyncIterable<string[]>,
): AsyncGenerator<string | Uint8Array> {
  const it = batches[Symbol.asyncIterator]();
  const first = await it.next();
  // Whether any block line (existing or new) has been written: the next
  // one is then preceded by ",\n".
  let any = false;
  if (kept !== null && kept > 0) {
    const f = await Deno.open(path, { read: true });
    try {
      const buf = new Uint8Array(1 << 20);
      let left = kept;
      while (left > 0) {
        const n = await f.read(buf.subarray(0, Math.min(buf.length, left)));
        if (n === null) throw new Error(`${path}: shorter than it was`);
        yield buf.slice(0, n);
        left -= n;
      }
    } finally {
      f.close();
    }
    any = true;
  } else {
    if (existing.length === 0 && first.done) {
      yield ledgerText([]);
      return;
    }
    yield `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[\n`;
    for (let i = 0; i < existing.length; i += 4096) {
      yield (i > 0 ? ",\n" : "") + existing.slice(i, i + 4096).join(",\n");
    }
    any = existing.length > 0;
  }
  let r = first;
  while (!r.done) {
    if (r.value.length > 0) {
      yield (any ? ",\n" : "") + r.value.join(",\n");
      any = true;
    }
    r = await it.next();
  }
  yield "\n]}\n";
}

/**
 * Append one block to a verity ledger (creating it when missing), atomically,
 * and return its index, its hash and the new head (the same value).
 * Refuses a ledger whose own chain does not verify.
 *
 * @example
 * ```ts ignore
 * const { head } = await appendBlock("runs/ledger.json", "report", { digest: "sha256:…" });
 * console.log(`ledger head: ${head}`);
 * ```
 */
export async function appendBlock(
  ledgerPath: string,
  type: string,
  record: unknown,
): Promise<AppendResult> {
  const r = await appendBlocks(ledgerPath, [{ type, record }]);
  return { index: r.first, hash: r.head, head: r.head };
}

/**
 * Bind a document to a ledger file (see `bindToLedger`), walking verity's
 * own layout as a stream; another layout, or a chain that does not reach
 * the head, is read whole and every problem named. Throws
 * {@linkcode UsageError} for a missing, unreadable or non-JSON ledger.
 */
export async function bindToLedgerFile(
  path: string,
  expectedHead: string,
  digest: string,
  types: readonly string[],
  expect: Readonly<Record<string, unknown>> = {},
): Promise<LedgerBinding> {
  // The last block whose record's digest is the document's.
  let found: { index: number; type: string; record: unknown } | null = null;
  const w = await walkLedgerFile(path, (b) => {
    if (!b.recordText.includes(digest)) return;
    const record = parseEvidenceJson(b.recordText, { numbers: "python" });
    if (
      typeof record === "object" && record !== null &&
      (record as Record<string, unknown>).digest === digest
    ) found = { index: b.index, type: b.type, record };
  });
  if (w !== null && w.head === expectedHead) {
    const ledger: LedgerVerification = {
      ok: true,
      blocks: w.blocks,
      problems: [],
      head: w.head,
      format: { ledger: LEDGER_NAME, version: LEDGER_VERSION },
      types: w.types,
    };
    return bindingOf(ledger, found, digest, types, expect);
  }
  const { text } = await readWholeLedger(path);
  try {
    return bindToLedger(text, expectedHead, digest, types, expect);
  } catch (e) {
    throw new UsageError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}
