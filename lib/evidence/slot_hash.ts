/**
 * The hashing half of a two-thread ledger verify, shared by both threads:
 * the slots a walk leaves its segment's bytes and where each block's parts
 * lie in ({@linkcode HashSlot}), all in one shared WebAssembly memory
 * ({@linkcode HashArena}); the control words by which the slots are passed
 * between the thread that fills them and the threads that hash them
 * ({@linkcode CONTROL}); and the hashing itself, a chunk at a time, each
 * block's input built in place and hashed four at a time by
 * `sha256_lanes.ts` ({@linkcode hashChunk}, {@linkcode LaneHasher}). It
 * imports only pure modules that write the WebAssembly, so that the worker
 * that only hashes (`hash_worker.ts`) starts with the least to load.
 *
 * @module
 */
import {
  GROUP_BYTES,
  instantiateLanes,
  type Lanes,
  lanesModule,
  SCRATCH_BYTES,
} from "./sha256_lanes.ts";
import { WALK_STACK_BYTES, walkOutBytes } from "./block_walk_wasm.ts";

/**
 * Where a walk that defers its hashing (`VerityByteWalker.deferTo`)
 * leaves each block of the block lines it walked in `data`: block i's
 * type starts at `at[4 i]` and ends at `at[4 i + 1]` (a JSON string of at
 * most 73 bytes), its record ends at `at[4 i + 2]`, and its published
 * hash's 64 digits start at `at[4 i + 3]`. Another thread builds each
 * block's input in place and hashes it ({@linkcode LaneHasher.check});
 * both lie in a {@linkcode HashArena}'s memory.
 */
export interface HashSlot {
  data: Uint8Array;
  at: Int32Array;
}

/** `,"type":` as two big-endian words. */
const BODY_TYPE = new DataView(new TextEncoder().encode(',"type":').buffer);
const BODY_TYPE0 = BODY_TYPE.getUint32(0);
const BODY_TYPE1 = BODY_TYPE.getUint32(4);

/**
 * The longest type (a JSON string, quotes included) whose block's input
 * can be built in place ({@linkcode inputInPlace}): `,"type":` + T + `}`
 * must fit in the 82 bytes after the record.
 */
export const MAX_TYPE_IN_PLACE = 73;

/**
 * Build a block's hashed input, `P + '{"record":' + R + ',"type":' + T +
 * '}'`, in place over its line in `b` (`dv` a view of the same bytes),
 * `{"index":N,"prev_hash":…,"type":T,"record":R,"hash":"sha256:<hex>"}`
 * (T at `[typeStart, typeEnd)`, at most {@linkcode MAX_TYPE_IN_PLACE}
 * bytes, R ending at `recEnd`): `,"type":` + T + `}` over
 * `,"hash":"sha256:` and the digits after R, `{` over the `,` before
 * `"record":`, and P, the 71 bytes at `prevAt` in `prev`, over the 71
 * bytes before that. Only R's bytes are left as they were, and nothing
 * outside the line is touched. P may be the line's own `prev_hash` (it is
 * moved: copied from its end down). Returns where the input starts; it
 * ends at `recEnd + 9 + (typeEnd - typeStart)`.
 */
export function inputInPlace(
  b: Uint8Array,
  dv: DataView,
  prev: DataView,
  prevAt: number,
  typeStart: number,
  typeEnd: number,
  recEnd: number,
): number {
  const typeLen = typeEnd - typeStart;
  dv.setUint32(recEnd, BODY_TYPE0);
  dv.setUint32(recEnd + 4, BODY_TYPE1);
  if (typeLen <= 16) {
    for (let k = 0; k < typeLen; k++) b[recEnd + 8 + k] = b[typeStart + k]!;
  } else b.copyWithin(recEnd + 8, typeStart, typeEnd);
  b[recEnd + 8 + typeLen] = 0x7d;
  b[typeEnd] = 0x7b;
  const start = typeEnd - 71;
  dv.setUint32(start + 67, prev.getUint32(prevAt + 67));
  for (let k = 64; k >= 0; k -= 4) {
    dv.setUint32(start + k, prev.getUint32(prevAt + k));
  }
  return start;
}

/** Blocks hashed per claim. */
export const CHUNK = 128;

/**
 * Where a verify's slots lie: one shared WebAssembly memory holding every
 * slot's data, then a work area per thread (the list of messages
 * `sha256_lanes.ts`'s `many` reads and writes its digests into, and its
 * scratch), and the compiled module that hashes them. Every thread that
 * hashes makes its own {@linkcode LaneHasher} over it.
 */
export interface HashArena {
  memory: WebAssembly.Memory;
  module: WebAssembly.Module;
  slots: HashSlot[];
  /** Where each thread's work area starts in the memory. */
  work: number[];
}

/**
 * Bytes of a thread's work area for slots of `blocks` blocks: a chunk's
 * groups, scratch, a chunk's digits, the stack of the walk in WebAssembly,
 * then what it writes (the first index, and the runs of equal types: at
 * most one per block, as when types alternate line by line).
 */
function workBytes(blocks: number): number {
  return (CHUNK / 4) * GROUP_BYTES + SCRATCH_BYTES + 64 * CHUNK +
    WALK_STACK_BYTES + walkOutBytes(blocks);
}

/**
 * An arena of `slots` slots of `bytes` bytes each (their `at` words in
 * shared memory too) and work areas for `threads` threads, hashed by the
 * module of `wasm` (tests: other bytes; the lanes module by default).
 * Throws when this runtime cannot make it (no WebAssembly SIMD, no shared
 * memory, or not enough of it).
 */
export function newHashArena(
  bytes: number,
  slots: number,
  threads: number,
  wasm?: Uint8Array<ArrayBuffer>,
): HashArena {
  // A block line is at least 199 bytes long.
  const blocks = Math.floor(bytes / 199) + 1;
  const atBytes = 16 * blocks;
  // Each slot's data starts on a 16-byte boundary (and so does what
  // follows); sixteen-byte reads may run a little past a slot's last line.
  const stride = Math.ceil(bytes / 16) * 16;
  const work = Math.ceil(workBytes(blocks) / 16) * 16;
  const size = slots * (stride + atBytes) + threads * work + 64;
  const pages = Math.ceil(size / 65536);
  const memory = new WebAssembly.Memory({
    initial: pages,
    maximum: pages,
    shared: true,
  });
  const module = wasm === undefined
    ? lanesModule()
    : new WebAssembly.Module(wasm);
  return {
    memory,
    module,
    slots: Array.from({ length: slots }, (_, k) => ({
      data: new Uint8Array(memory.buffer, k * stride, bytes),
      at: new Int32Array(
        memory.buffer,
        slots * stride + k * atBytes,
        4 * blocks,
      ),
    })),
    work: Array.from(
      { length: threads },
      (_, t) => slots * (stride + atBytes) + t * work,
    ),
  };
}

/** What a walk of block lines in WebAssembly found (see {@linkcode LaneHasher.walkLines}). */
export interface SegmentLines {
  first: number;
  blocks: number;
  startPrev: string;
  lastHash: string;
  types: Record<string, number>;
}

/**
 * One thread's hashing over an arena's memory: an instance of the lanes
 * module and its work area (the chunk's list of messages, scratch, and the
 * chunk's published digits).
 */
export class LaneHasher {
  readonly #lanes: Lanes;
  readonly #mem: DataView;
  readonly #list: number;
  readonly #scratch: number;
  readonly #digits: number;
  readonly #stack: number;
  readonly #out: number;
  /** Segments {@linkcode LaneHasher.walkLines} took. */
  segmentsWalked = 0;

  constructor(arena: Pick<HashArena, "memory" | "module">, work: number) {
    this.#lanes = instantiateLanes(arena.memory, arena.module);
    this.#mem = new DataView(arena.memory.buffer);
    this.#list = work;
    this.#scratch = work + (CHUNK / 4) * GROUP_BYTES;
    this.#digits = this.#scratch + SCRATCH_BYTES;
    this.#stack = this.#digits + 64 * CHUNK;
    this.#out = this.#stack + WALK_STACK_BYTES;
  }

  /**
   * Walk the block lines `bytes` (all of a segment's lines, lying in
   * `slot.data`, none of them the file's first or last block line) in
   * WebAssembly, leaving each block's parts in `slot.at` as a deferred
   * walk does (`block_walk_wasm.ts`): null when they are not all in the
   * subset that walk takes (the segment is then walked by
   * `VerityByteWalker`, which decides), else the segment's walk and how
   * many blocks were left in the slot. Its hashes are still to be checked.
   */
  walkLines(
    bytes: Uint8Array,
    slot: HashSlot,
  ): { walk: SegmentLines; deferred: number } | null {
    const base = slot.data.byteOffset;
    if (bytes.buffer !== slot.data.buffer || bytes.byteOffset < base) {
      return null;
    }
    // At most one run of equal types per block.
    const blocks = slot.at.length >> 2;
    const n = this.#lanes.walk(
      bytes.byteOffset,
      bytes.byteOffset + bytes.length,
      base,
      slot.at.byteOffset,
      blocks,
      this.#out,
      blocks,
      this.#stack,
    );

    if (n <= 0) return null;
    this.segmentsWalked++;
    const mem = this.#mem;
    const data = slot.data;
    const at = slot.at;
    const text = (from: number, to: number) => {
      let t = "";
      for (let k = from; k < to; k++) t += String.fromCharCode(data[k]!);
      return t;
    };
    const types: Record<string, number> = {};
    const runs = mem.getInt32(this.#out + 4, true);
    for (let r = 0; r < runs; r++) {
      const rec = this.#out + 8 + 12 * r;
      const first = mem.getInt32(rec, true);
      const end = r + 1 < runs ? mem.getInt32(rec + 12, true) : n;
      // Printable ASCII with no quote or backslash: its text as it stands.
      const name = text(
        mem.getInt32(rec + 4, true) - base + 1,
        mem.getInt32(rec + 8, true) - base - 1,
      );
      types[name] = (types[name] ?? 0) + end - first;
    }
    // P ends 9 bytes before T; the published hash is "sha256:" + D.
    return {
      walk: {
        first: mem.getInt32(this.#out, true),
        blocks: n,
        startPrev: text(at[0]! - 80, at[0]! - 9),
        lastHash: text(at[4 * (n - 1) + 3]! - 7, at[4 * (n - 1) + 3]! + 64),
        types,
      },
      deferred: n,
    };
  }

  /**
   * Build the inputs of blocks `from` to `to` (exclusive, at most
   * {@linkcode CHUNK}) a deferred walk left in `slot` (its data in this
   * hasher's memory), hash them and compare each digest with its published
   * digits: true when every one is equal (once all are, the segment's walk
   * holds as if it had hashed them itself). The digits are copied aside
   * first and compared as they stand with each digest's lowercase hex
   * (anything else is not equal); each input is built over
   * its line's own bytes ({@linkcode inputInPlace}, P the line's own),
   * which no other block's input touches, so that two threads may build
   * blocks of one slot at once.
   */
  check(slot: HashSlot, from: number, to: number): boolean {
    const { data, at } = slot;
    const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const mem = this.#mem;
    const list = this.#list;
    const digits = this.#digits;
    const base = data.byteOffset;
    let j = 0;
    for (let i = from; i < to; i++, j++) {
      const typeStart = at[4 * i]!;
      const typeEnd = at[4 * i + 1]!;
      const recEnd = at[4 * i + 2]!;
      const hex = at[4 * i + 3]!;
      const aside = digits + 64 * j;
      for (let k = 0; k < 64; k += 4) {
        mem.setInt32(aside + k, dv.getInt32(hex + k));
      }
      // P is the 71 bytes before '","type":' (9 bytes before T).
      const start = inputInPlace(
        data,
        dv,
        dv,
        typeStart - 80,
        typeStart,
        typeEnd,
        recEnd,
      );
      const rec = list + (j >> 2) * GROUP_BYTES + 8 * (j & 3);
      mem.setInt32(rec, base + start, true);
      mem.setInt32(rec + 4, recEnd + 9 + typeEnd - typeStart - start, true);
    }
    const n = j;
    // The last group's unused lanes hash nothing.
    for (; (j & 3) !== 0; j++) {
      const rec = list + (j >> 2) * GROUP_BYTES + 8 * (j & 3);
      mem.setInt32(rec, this.#scratch, true);
      mem.setInt32(rec + 4, 0, true);
    }
    this.#lanes.many(list, j >> 2, this.#scratch);
    return this.#lanes.compare(list, n, digits) === n;
  }
}

/**
 * The shared control words of a two-thread verify (an `Int32Array` made by
 * {@linkcode newControl}). The first thread walks the segments in turn,
 * each into the next slot in ring order (ring index r in slot r mod the
 * slot count, once that slot is free: slots are freed in the order their
 * last chunks finish); both threads hash. `head` is the ring index of the
 * oldest slot whose blocks may not all be claimed yet. A slot's claim word
 * is its ring index (mod 2^15) above its count of chunks claimed, so a
 * thread that read an old head can never claim in a slot written since.
 */
export const CONTROL = {
  /** How many slots were made ready (the worker waits on it). */
  ready: 0,
  /** 1 once the first thread has walked every segment, or stopped. */
  over: 1,
  /** Set when a deferred hash was not the published one. */
  mismatch: 2,
  head: 3,
  /** Blocks the worker hashed. */
  there: 4,
  /** Slot s: state (0 free, 1 ready), segment, blocks, claim word, blocks hashed. */
  slot: (s: number) => 5 + 5 * s,
} as const;

/** The claim word of a free slot: a ring index no slot ever has. */
const FREED = 0xffff << 16;

/** The control words of a verify with `slots` slots, every slot free. */
export function newControl(slots: number): Int32Array {
  const c = new Int32Array(new SharedArrayBuffer(4 * CONTROL.slot(slots)));
  for (let s = 0; s < slots; s++) c[CONTROL.slot(s) + 3] = FREED;
  return c;
}

/**
 * Mark the slot of ring index `ring` ready: it holds segment `k`'s walk
 * with `blocks` deferred hashes (the first thread, after walking into it),
 * and wake a thread waiting for one.
 */
export function markReady(
  c: Int32Array,
  slots: number,
  ring: number,
  k: number,
  blocks: number,
): void {
  const at = CONTROL.slot(ring % slots);
  c[at + 1] = k;
  c[at + 2] = blocks;
  Atomics.store(c, at + 4, 0);
  Atomics.store(c, at + 3, (ring & 0x7fff) << 16);
  Atomics.store(c, at, 1);
  Atomics.add(c, CONTROL.ready, 1);
  Atomics.notify(c, CONTROL.ready);
}

/**
 * Claim and hash the next chunk of the oldest ready slot's deferred hashes
 * ({@linkcode LaneHasher.check}); either thread calls it, with its own
 * hasher. The number of
 * blocks hashed, or 0 when there is none to claim now (or a hash was not
 * the published one: then `mismatch` is set). The thread that hashes a
 * slot's last block marks its segment in `verified` and frees the slot.
 */
export function hashChunk(
  c: Int32Array,
  hasher: LaneHasher,
  slots: readonly HashSlot[],
  verified: Int32Array,
): number {
  while (true) {
    if (Atomics.load(c, CONTROL.mismatch) !== 0) return 0;
    const h = Atomics.load(c, CONTROL.head);
    const s = h % slots.length;
    const at = CONTROL.slot(s);
    const w = Atomics.load(c, at + 3);
    if (w >>> 16 !== (h & 0x7fff) || Atomics.load(c, at) !== 1) return 0;
    const n = c[at + 2]!;
    const m = w & 0xffff;
    if (m * CHUNK >= n) {
      // Every chunk claimed: the next slot is the oldest.
      Atomics.compareExchange(c, CONTROL.head, h, h + 1);
      continue;
    }
    if (Atomics.compareExchange(c, at + 3, w, w + 1) !== w) continue;
    const from = m * CHUNK;
    const to = Math.min(n, from + CHUNK);
    // The slot's last chunk: the next slot is the oldest from now on
    // (before this one can be freed and written again).
    if (to === n) Atomics.compareExchange(c, CONTROL.head, h, h + 1);
    if (!hasher.check(slots[s]!, from, to)) {
      Atomics.store(c, CONTROL.mismatch, 1);
      Atomics.notify(c, at);
      return 0;
    }
    if (Atomics.add(c, at + 4, to - from) + (to - from) === n) {
      Atomics.store(verified, c[at + 1]!, 1);
      // No claim on this ring index can succeed any more, even from a
      // thread that read the claim word before.
      Atomics.store(c, at + 3, FREED);
      Atomics.store(c, at, 0);
      Atomics.notify(c, at);
    }
    return to - from;
  }
}
