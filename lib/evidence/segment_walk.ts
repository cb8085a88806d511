/**
 * Walking one segment of a ledger file in verity's layout: the block lines
 * that start in a range of its bytes, read from the file at that range
 * (see {@linkcode SegmentWalk}). `verifyLedgerFile` walks a large ledger's
 * segments on two threads, this one and `segment_worker.ts`, each taking
 * the next segment not yet taken, and joins them ({@linkcode joinSegments}).
 *
 * @module
 */
import { type SegmentWalk, VerityByteWalker } from "./chain.ts";

/** How a file is cut into segments. */
export interface SegmentPlan {
  /** The file's size in bytes, when planned. */
  size: number;
  /** Bytes per segment (the last one takes the rest: it is never shorter). */
  bytes: number;
  /** How many segments. */
  count: number;
}

/** Segments of `bytes` (2 MiB by default) over a file of `size` bytes. */
export function segmentPlan(size: number, bytes = 2 << 20): SegmentPlan {
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
 * Walk segment `k` of `plan` in the file at `path`: its lines are those
 * that start in `[k * plan.bytes, (k + 1) * plan.bytes)` (to the end of the
 * file for the last). Reads up to 1 MiB at a time (a segment's size when it
 * is smaller); memory is bounded by that and the longest line. Throws what `Deno.open` and reading throw.
 */
export async function walkSegment(
  path: string,
  plan: SegmentPlan,
  k: number,
): Promise<SegmentOutcome> {
  const last = k === plan.count - 1;
  const start = k * plan.bytes;
  const end = last ? Infinity : start + plan.bytes;
  using f = await Deno.open(path, { read: true });
  if ((await f.stat()).size !== plan.size) return null;
  // cur[0, filled) holds the file's bytes from offset base.
  let base = k === 0 ? 0 : start - 1;
  await f.seek(base, Deno.SeekMode.Start);
  let cur = new Uint8Array(Math.min(1 << 20, Math.max(4096, plan.bytes)));
  let filled = 0;
  let eof = false;
  const more = async (): Promise<void> => {
    if (filled === cur.length) {
      const bigger = new Uint8Array(cur.length * 2);
      bigger.set(cur);
      cur = bigger;
    }
    const n = await f.read(cur.subarray(filled));
    if (n === null) eof = true;
    else filled += n;
  };
  const drop = (n: number): void => {
    cur.copyWithin(0, n, filled);
    filled -= n;
    base += n;
  };
  let w: VerityByteWalker;
  if (k === 0) w = new VerityByteWalker();
  else {
    // The first line that starts at or after `start`: just after the
    // first newline at or after start - 1.
    let nl = -1;
    while (nl < 0) {
      await more();
      nl = cur.subarray(0, filled).indexOf(0x0a);
      if (nl < 0 && eof) return null;
    }
    if (base + nl + 1 >= end) return "empty";
    drop(nl + 1);
    while (filled < 256 && !eof) await more();
    if (filled === 0) return "empty"; // the file's end: no line starts here
    if (filled === 3 && eof && cur[0] === 0x5d && cur[1] === 0x7d) {
      // Only the closing line "]}" starts here (the last block's line is
      // longer than a segment).
      return cur[2] === 0x0a ? CLOSING : null;
    }
    const s = VerityByteWalker.segmentAt(cur.subarray(0, filled), 0);
    if (s === null) return null;
    w = s;
  }
  while (true) {
    // cur starts at a line's start. Walk the complete lines that start
    // before `end`.
    const lines = cur.subarray(0, filled);
    let cut: number;
    let done = false;
    if (base >= end) done = true;
    const stop = base < end && end - base <= filled
      ? lines.indexOf(0x0a, end - base - 1)
      : -1;
    if (stop >= 0) {
      cut = stop + 1;
      done = true;
    } else cut = done ? 0 : lines.lastIndexOf(0x0a) + 1;
    if (cut > 0) {
      if (w.lines(lines.subarray(0, cut)) < 0) return null;
      drop(cut);
    }
    if (done) return w.segment(false, new Uint8Array(0));
    if (eof) {
      return last ? w.segment(true, cur.subarray(0, filled)) : null;
    }
    if (cut === 0 && filled > 0 && !w.mayContinue(filled)) return null;
    await more();
  }
}
