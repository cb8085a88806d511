/**
 * Walking one segment of a ledger file in verity's layout: the block lines
 * that start in a range of its bytes, read from the file at that range
 * (see {@linkcode SegmentWalk}), hashing each block or leaving its hashing
 * to a slot another thread may hash ({@linkcode HashSlot}); the walks
 * are joined by `joinSegments`. `verifyLedgerFile` walks a large ledger so
 * on one thread while a worker hashes (`slot_hash.ts`).
 *
 * @module
 */
import { type SegmentWalk, VerityByteWalker } from "./chain.ts";
import type { HashSlot, LaneHasher } from "./slot_hash.ts";

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
 * enough that the worker has its first blocks to hash soon after it is
 * up, and the last segment's hashing (left after the walk) is short.
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
 * What walking a segment with its hashing deferred gave: as
 * {@linkcode SegmentOutcome}, or "hash here" when a block could not be left
 * in the slot (or the segment's bytes do not fit it): the segment is then
 * to be walked with its hashes ({@linkcode walkSegment}).
 */
export type DeferredOutcome = SegmentOutcome | "hash here";

/**
 * Walk segment `k` of `plan` in `file` (open for reading): its lines are
 * those that start in `[k * plan.bytes, (k + 1) * plan.bytes)` (to the end
 * of the file for the last). Its bytes are read whole (memory: the segment
 * and its last line), by blocking reads: the thread that walks has nothing
 * else to do meanwhile, and a blocking read costs less than an
 * asynchronous one. Throws what reading throws.
 */
export function walkSegment(
  file: Deno.FsFile,
  plan: SegmentPlan,
  k: number,
): SegmentOutcome {
  const bytes = readSegment(file, plan, k, null);
  if (bytes === "empty") return bytes;
  if (bytes === null || bytes === "too long") return null;
  const { outcome } = walkSegmentBytes(bytes, plan, k, null);
  return outcome === "hash here" ? null : outcome;
}

/**
 * Walk segment `k` with its hashing deferred: its bytes are read into
 * `slot.data`, and each block's hashed input and published digits left in
 * the slot (see {@linkcode HashSlot}), by `lanes` in WebAssembly when the
 * segment is neither the file's first nor its last and its lines are in
 * the subset that walk takes, else by `VerityByteWalker`; the outcome holds once
 * `LaneHasher.check` (slot_hash.ts) finds the slot's first `deferred` hashes
 * equal.
 */
export function walkSegmentDeferred(
  file: Deno.FsFile,
  plan: SegmentPlan,
  k: number,
  slot: HashSlot,
  lanes?: LaneHasher,
): { outcome: DeferredOutcome; deferred: number } {
  const bytes = readSegment(file, plan, k, slot.data);
  if (bytes === "too long") return { outcome: "hash here", deferred: 0 };
  if (bytes === null || bytes === "empty") {
    return { outcome: bytes, deferred: 0 };
  }
  return walkSegmentBytes(bytes, plan, k, slot, lanes);
}

/**
 * The bytes of segment `k` from its first line's start to the end of its
 * last line (to the end of the file for the last segment): read into
 * `into` when given ("too long" when they do not fit it), else into a
 * buffer of their size. "empty" when no line starts in the segment; null
 * when the file changed size, a segment before the last ends inside a
 * line the file does not finish, or the last holds no newline.
 */
function readSegment(
  file: Deno.FsFile,
  plan: SegmentPlan,
  k: number,
  into: Uint8Array | null,
): Uint8Array | "empty" | "too long" | null {
  const last = k === plan.count - 1;
  const start = k * plan.bytes;
  const end = last ? plan.size : start + plan.bytes;
  if (file.statSync().size !== plan.size) return null;
  // From the byte before the segment: the first line that starts in it
  // begins after the first newline at or after start - 1.
  const base = k > 0 ? start - 1 : 0;
  file.seekSync(base, Deno.SeekMode.Start);
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
    const n = file.readSync(buf.subarray(filled, want));
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
  lanes?: LaneHasher,
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
    if (slot !== null && lanes !== undefined && !last) {
      // Block lines only, in the common case: walked in WebAssembly (which
      // takes a strict subset of what the walker below takes).
      const fast = lanes.walkLines(bytes, slot);
      if (fast !== null) {
        return {
          outcome: {
            ...fast.walk,
            lastHadComma: true,
            closed: false,
            clean: true,
            recipes: [],
          },
          deferred: fast.deferred,
        };
      }
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
