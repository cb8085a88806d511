/**
 * The hashing half of a two-thread ledger verify, shared by both threads:
 * the slots a walk leaves its segment's bytes and where each block's parts
 * lie in ({@linkcode HashSlot}), the control words by which the slots are
 * passed between the thread that fills them and the threads that hash
 * them ({@linkcode CONTROL}), and the hashing itself, a chunk at a time,
 * each block's input built in place ({@linkcode hashChunk},
 * {@linkcode checkDeferred}). It imports node:crypto and nothing else, so
 * that the worker that only hashes (`hash_worker.ts`) starts with the
 * least to load.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** A SHA-256 hash with nothing hashed yet; each digest starts from a copy of it (as the byte walker's). */
const SHA256 = createHash("sha256");

/**
 * Where a walk that defers its hashing (`VerityByteWalker.deferTo`)
 * leaves each block of the block lines it walked in `data`: block i's
 * type starts at `at[4 i]` and ends at `at[4 i + 1]` (a JSON string of at
 * most 73 bytes), its record ends at `at[4 i + 2]`, and its published
 * hash's 64 digits start at `at[4 i + 3]`. Another thread builds each
 * block's input in place and hashes it ({@linkcode checkDeferred}); the
 * arrays may be shared.
 */
export interface HashSlot {
  data: Uint8Array;
  at: Int32Array;
}

/** A slot for a segment of up to `bytes` bytes (backed by shared memory when `shared`). */
export function newHashSlot(bytes: number, shared: boolean): HashSlot {
  // A block line is at least 199 bytes long.
  const blocks = Math.floor(bytes / 199) + 1;
  const mem = (n: number) =>
    shared ? new SharedArrayBuffer(n) : new ArrayBuffer(n);
  return {
    data: new Uint8Array(mem(bytes)),
    at: new Int32Array(mem(16 * blocks)),
  };
}

/** `,"type":` */
const BODY_TYPE = new TextEncoder().encode(',"type":');

/**
 * Build the inputs of blocks `from` to `to` (exclusive) a deferred walk
 * left in `slot`, hash each and compare it with its published digits:
 * true when every one is equal (once all are, the segment's walk holds as
 * if it had hashed them itself). A block line is
 * `{"index":N,"prev_hash":P,"type":T,"record":R,"hash":"sha256:<hex>"}`
 * and its input `P + '{"record":' + R + ',"type":' + T + '}'`; it is built
 * over the line's own bytes, which no other block's input touches (so
 * that two threads may build blocks of one slot at once): the digits are
 * read first, `,"type":` + T + `}` is written over `,"hash":"sha256:` and
 * the digits after R, `{` over the `,` before `"record":`, and P moved to
 * just before that, over its own end and T.
 */
export function checkDeferred(
  slot: HashSlot,
  from: number,
  to: number,
): boolean {
  const { data, at } = slot;
  const digits = DIGITS;
  for (let i = from; i < to; i++) {
    const typeStart = at[4 * i]!;
    const typeEnd = at[4 * i + 1]!;
    const recEnd = at[4 * i + 2]!;
    const hex = at[4 * i + 3]!;
    const typeLen = typeEnd - typeStart;
    digits.set(data.subarray(hex, hex + 64));
    data.set(BODY_TYPE, recEnd);
    data.copyWithin(recEnd + 8, typeStart, typeEnd);
    data[recEnd + 8 + typeLen] = 0x7d;
    data[typeEnd] = 0x7b;
    // P is the 71 bytes before '","type":' (9 bytes before T).
    data.copyWithin(typeEnd - 71, typeStart - 80, typeStart - 9);
    const h = SHA256.copy().update(
      data.subarray(typeEnd - 71, recEnd + 9 + typeLen),
    ).digest("hex");
    for (let k = 0; k < 64; k++) {
      if (digits[k] !== h.charCodeAt(k)) return false;
    }
  }
  return true;
}

/** The digits of the block being checked (per thread: module state). */
const DIGITS = new Uint8Array(64);

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

/** Blocks hashed per claim. */
export const CHUNK = 128;

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
 * ({@linkcode checkDeferred}); either thread calls it. The number of
 * blocks hashed, or 0 when there is none to claim now (or a hash was not
 * the published one: then `mismatch` is set). The thread that hashes a
 * slot's last block marks its segment in `verified` and frees the slot.
 */
export function hashChunk(
  c: Int32Array,
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
    if (!checkDeferred(slots[s]!, from, to)) {
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
