/**
 * Walking one segment of a ledger file in verity's layout: the block lines
 * that start in a range of its bytes, read from the file at that range
 * (see {@linkcode SegmentWalk}), hashing each block or leaving its hashing
 * to another thread ({@linkcode HashSlot}), and the shared control words
 * by which `verifyLedgerFile`'s two threads (this one and
 * `segment_worker.ts`) split a large ledger: the worker walks segments,
 * both hash ({@linkcode hashChunk}); the walks are joined
 * ({@linkcode joinSegments}).
 *
 * @module
 */
import {
  checkDeferred,
  type HashSlot,
  type SegmentWalk,
  VerityByteWalker,
} from "./chain.ts";

/** How a file is cut into segments. */
export interface SegmentPlan {
  /** The file's size in bytes, when planned. */
  size: number;
  /** Bytes per segment (the last one takes the rest: it is never shorter). */
  bytes: number;
  /** How many segments. */
  count: number;
}

/**
 * Segments of `bytes` over a file of `size` bytes. 1 MiB by default: small
 * enough that the first thread, walking segments whole while the worker
 * comes up, turns to hashing soon after.
 */
export function segmentPlan(size: number, bytes = 1 << 20): SegmentPlan {
  return { size, bytes, count: Math.max(1, Math.floor(size / bytes)) };
}

/** A segment that holds only the closing line `]}` (first -1: see joinSegments). */
const CLOSING: SegmentWalk = {
  first: -1,
  blocks: 0,
  startPrev: "",
  lastHash: "",
  lastHadComma: false,
  closed: true,
  clean: true,
  types: {},
  recipes: [],
};

/**
 * What walking a segment gave: its walk; "empty" when no line starts in
 * it (a line longer than a segment); null when the walk failed or the
 * segment could not be walked on its own (its first line is not a block
 * line, or the file changed size): the file is then walked whole.
 */
export type SegmentOutcome = SegmentWalk | "empty" | null;

/**
 * The shared control words of a two-thread walk (an `Int32Array` made by
 * {@linkcode newControl}). Slots are filled in ring order (ring
 * index r in slot r mod the slot count, once that slot is free: slots are
 * freed in the order their last chunks finish); `head` is the ring index of the
 * oldest slot whose blocks may not all be claimed yet. A slot's claim word
 * is its ring index (mod 2^15) above its count of chunks claimed, so a
 * thread that read an old head can never claim in a slot written since.
 */
export const CONTROL = {
  /** The next segment to take. */
  next: 0,
  /** The worker: 0 walking, 1 done (every segment it took is told), 2 failed. */
  worker: 1,
  /** Set when a deferred hash was not the published one. */
  mismatch: 2,
  head: 3,
  /** Slot s: state (0 free, 1 ready), segment, blocks, claim word, blocks hashed. */
  slot: (s: number) => 4 + 5 * s,
} as const;

/** The claim word of a free slot: a ring index no slot ever has. */
const FREED = 0xffff << 16;

/** The control words of a walk with `slots` slots, every slot free. */
export function newControl(slots: number): Int32Array {
  const c = new Int32Array(new SharedArrayBuffer(4 * (4 + 5 * slots)));
  for (let s = 0; s < slots; s++) c[CONTROL.slot(s) + 3] = FREED;
  return c;
}

/** Blocks hashed per claim. */
const CHUNK = 128;

/**
 * Mark the slot of ring index `ring` ready: it holds segment `k`'s walk
 * with `blocks` deferred hashes (the worker, after walking into it).
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
}

/**
 * Claim and hash the next chunk of the oldest ready slot's deferred hashes
 * ({@linkcode checkDeferred}); either thread calls it. False when there is
 * none to claim now (or a hash was not the published one: then
 * `mismatch` is set and no segment is taken any more). The thread that
 * hashes a slot's last block marks its segment in `verified` and frees
 * the slot.
 */
export function hashChunk(
  c: Int32Array,
  slots: readonly HashSlot[],
  verified: Int32Array,
  segments: number,
): boolean {
  while (true) {
    if (Atomics.load(c, CONTROL.mismatch) !== 0) return false;
    const h = Atomics.load(c, CONTROL.head);
    const s = h % slots.length;
    const at = CONTROL.slot(s);
    const w = Atomics.load(c, at + 3);
    if (w >>> 16 !== (h & 0x7fff) || Atomics.load(c, at) !== 1) return false;
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
      Atomics.store(c, CONTROL.next, segments);
      return false;
    }
    if (Atomics.add(c, at + 4, to - from) + (to - from) === n) {
      Atomics.store(verified, c[at + 1]!, 1);
      // No claim on this ring index can succeed any more, even from a
      // thread that read the claim word before.
      Atomics.store(c, at + 3, FREED);
      Atomics.store(c, at, 0);
      Atomics.notify(c, at);
    }
    return true;
  }
}

/**
 * What walking a segment with its hashing deferred gave: as
 * {@linkcode SegmentOutcome}, or "hash here" when a block could not be left
 * in the slot (or the segment's bytes do not fit it): the segment is then
 * to be walked with its hashes ({@linkcode walkSegment}).
 */
export type DeferredOutcome = SegmentOutcome | "hash here";

/**
 * Walk segment `k` of `plan` in the file at `path`: its lines are those
 * that start in `[k * plan.bytes, (k + 1) * plan.bytes)` (to the end of the
 * file for the last). Its bytes are read whole (memory: the segment and
 * its last line). Throws what `Deno.open` and reading throw.
 */
export async function walkSegment(
  path: string,
  plan: SegmentPlan,
  k: number,
): Promise<SegmentOutcome> {
  const bytes = await readSegment(path, plan, k, null);
  if (bytes === "empty") return bytes;
  if (bytes === null || bytes === "too long") return null;
  const { outcome } = walkSegmentBytes(bytes, plan, k, null);
  return outcome === "hash here" ? null : outcome;
}

/**
 * Walk segment `k` with its hashing deferred: its bytes are read into
 * `slot.data`, and each block's hashed input and published digits left in
 * the slot (see {@linkcode HashSlot}); the outcome holds once
 * {@linkcode checkDeferred} finds the slot's first `deferred` hashes equal.
 */
export async function walkSegmentDeferred(
  path: string,
  plan: SegmentPlan,
  k: number,
  slot: HashSlot,
): Promise<{ outcome: DeferredOutcome; deferred: number }> {
  const bytes = await readSegment(path, plan, k, slot.data);
  if (bytes === "too long") return { outcome: "hash here", deferred: 0 };
  if (bytes === null || bytes === "empty") {
    return { outcome: bytes, deferred: 0 };
  }
  return walkSegmentBytes(bytes, plan, k, slot);
}

/**
 * The bytes of segment `k` from its first line's start to the end of its
 * last line (to the end of the file for the last segment): read into
 * `into` when given ("too long" when they do not fit it), else into a
 * buffer of their size. "empty" when no line starts in the segment; null
 * when the file changed size, a segment before the last ends inside a
 * line the file does not finish, or the last holds no newline.
 */
async function readSegment(
  path: string,
  plan: SegmentPlan,
  k: number,
  into: Uint8Array | null,
): Promise<Uint8Array | "empty" | "too long" | null> {
  const last = k === plan.count - 1;
  const start = k * plan.bytes;
  const end = last ? plan.size : start + plan.bytes;
  using f = await Deno.open(path, { read: true });
  if ((await f.stat()).size !== plan.size) return null;
  // From the byte before the segment: the first line that starts in it
  // begins after the first newline at or after start - 1.
  const base = k > 0 ? start - 1 : 0;
  if (base > 0) await f.seek(base, Deno.SeekMode.Start);
  // Read what the segment surely needs first, then more as its last line
  // asks (into a bigger buffer, unless one was given).
  const need = Math.min(
    plan.size - base,
    last ? plan.size - base : end - base + 4096,
  );
  let buf = into ?? new Uint8Array(need);
  let want = Math.min(buf.length, need);
  let filled = 0;
  // stop: the newline that ends the line holding byte end - 1 (not last).
  let stop = -1;
  while (true) {
    if (filled === want) {
      if (last && base + filled === plan.size) break;
      if (want === buf.length) {
        if (into !== null) return "too long";
        const bigger = new Uint8Array(buf.length * 2);
        bigger.set(buf);
        buf = bigger;
      }
      want = Math.min(buf.length, 2 * want);
    }
    const n = await f.read(buf.subarray(filled, want));
    if (n === null) break;
    filled += n;
    if (!last && base + filled >= end) {
      stop = buf.subarray(0, filled).indexOf(0x0a, end - base - 1);
      if (stop >= 0) break;
    }
  }
  if (last ? base + filled !== plan.size : stop < 0) return null;
  let from = 0;
  if (k > 0) {
    const nl = buf.subarray(0, filled).indexOf(0x0a);
    if (nl < 0) return null; // bytes after the file's last newline
    if (base + nl + 1 >= end) return "empty";
    from = nl + 1;
  }
  return buf.subarray(from, last ? filled : stop + 1);
}

/**
 * Walk the bytes of segment `k` (see readSegment), hashing each block, or
 * with the hashing deferred to `slot`; `deferred`: how many blocks were
 * left there.
 */
function walkSegmentBytes(
  bytes: Uint8Array,
  plan: SegmentPlan,
  k: number,
  slot: HashSlot | null,
): { outcome: DeferredOutcome; deferred: number } {
  const last = k === plan.count - 1;
  let w: VerityByteWalker;
  if (k > 0) {
    if (
      bytes.length === 3 && bytes[0] === 0x5d && bytes[1] === 0x7d &&
      bytes[2] === 0x0a
    ) {
      // Only the closing line "]}" starts here (the last block's line is
      // longer than a segment). The join takes it only as the last
      // segment with a line: anything after it fails.
      return { outcome: CLOSING, deferred: 0 };
    }
    const s = VerityByteWalker.segmentAt(bytes, 0);
    if (s === null) return { outcome: null, deferred: 0 };
    w = s;
  } else w = new VerityByteWalker();
  if (slot !== null) w.deferTo(slot);
  const tail = w.lines(bytes);
  const deferred = w.deferred;
  if (tail < 0) {
    return { outcome: w.cannotDefer ? "hash here" : null, deferred };
  }
  const rest = bytes.subarray(tail);
  // A segment before the last ends at a newline.
  const outcome = last
    ? w.segment(true, rest)
    : rest.length === 0
    ? w.segment(false, rest)
    : null;
  return { outcome, deferred };
}
