/**
 * Walking a ledger file in verity's layout as it is read
 * ({@linkcode feedLines}: the whole file on one thread), or one segment of
 * it: the block lines that start in a range of its bytes, read from the
 * file at that range (see {@linkcode SegmentWalk}). `verifyLedgerFile` walks a large ledger's
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

/** Options of {@linkcode feedLines}. */
export interface FeedOptions {
  /** Bytes per read; a line longer than the buffer doubles it. */
  pieceBytes: number;
  /** Bytes already read, starting at a line's start (none by default). */
  first?: Uint8Array;
  /** The file offset of the first byte (of `first`, or of the first read). */
  base?: number;
  /** Feed only the lines that start before this offset (all by default). */
  end?: number;
}

const NOTHING = new Uint8Array(0);

/**
 * Feed a file's lines to a walker as they are read: every complete line
 * that starts before `end` to `w.lines`. Returns the bytes after the last
 * line fed (those after the file's last newline when the file ended first,
 * none when `end` stopped it), or null when the walk failed. The next piece
 * is read while the walker works on the current one (two buffers); memory
 * is bounded by the buffers and the longest line. Throws what `read`
 * throws.
 */
export async function feedLines(
  w: VerityByteWalker,
  read: (into: Uint8Array) => Promise<number | null>,
  options: FeedOptions,
): Promise<Uint8Array | null> {
  const end = options.end ?? Infinity;
  const first = options.first ?? NOTHING;
  let base = options.base ?? 0;
  let cur = new Uint8Array(Math.max(options.pieceBytes, 2 * first.length));
  let nxt = new Uint8Array(cur.length);
  cur.set(first);
  // cur[0, filled) starts at a line's start, at file offset base; eof:
  // nothing more to read.
  let filled = first.length;
  let n = await read(cur.subarray(filled));
  if (n !== null) filled += n;
  let eof = n === null;
  while (true) {
    if (base >= end) return NOTHING;
    const lines = cur.subarray(0, filled);
    if (end - base <= filled) {
      // The line holding byte end - 1 is the last one that starts before end.
      const stop = lines.indexOf(0x0a, end - base - 1);
      if (stop >= 0) {
        return w.lines(lines.subarray(0, stop + 1)) < 0 ? null : NOTHING;
      }
    }
    if (eof) {
      const tail = w.lines(lines);
      return tail < 0 ? null : lines.subarray(tail);
    }
    const cut = lines.lastIndexOf(0x0a) + 1;
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
    base += cut;
    filled = rest + (n ?? 0);
    eof = n === null;
  }
}

/**
 * Walk segment `k` of `plan` in the file at `path`: its lines are those
 * that start in `[k * plan.bytes, (k + 1) * plan.bytes)` (to the end of the
 * file for the last). Reads up to 1 MiB at a time (a segment's size when it
 * is smaller); memory is bounded by that and the longest line. Throws what
 * `Deno.open` and reading throw.
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
  const read = (into: Uint8Array) => f.read(into);
  const pieceBytes = Math.min(1 << 20, Math.max(4096, plan.bytes));
  let w = new VerityByteWalker();
  let first = NOTHING;
  let base = 0;
  if (k > 0) {
    // The first line that starts at or after `start`: just after the
    // first newline at or after start - 1.
    base = start - 1;
    await f.seek(base, Deno.SeekMode.Start);
    let cur = new Uint8Array(pieceBytes);
    let filled = 0;
    let eof = false;
    const more = async (): Promise<void> => {
      if (filled === cur.length) {
        const bigger = new Uint8Array(cur.length * 2);
        bigger.set(cur);
        cur = bigger;
      }
      const n = await read(cur.subarray(filled));
      if (n === null) eof = true;
      else filled += n;
    };
    let nl = -1;
    while (nl < 0) {
      await more();
      nl = cur.subarray(0, filled).indexOf(0x0a);
      if (nl < 0 && eof) return null;
    }
    if (base + nl + 1 >= end) return "empty";
    base += nl + 1;
    cur.copyWithin(0, nl + 1, filled);
    filled -= nl + 1;
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
    first = cur.subarray(0, filled);
  }
  const rest = await feedLines(w, read, { pieceBytes, first, base, end });
  if (rest === null) return null;
  if (last) return w.segment(true, rest);
  // A segment before the last ends at a newline; bytes left over mean the
  // file ended inside a line.
  return rest.length === 0 ? w.segment(false, rest) : null;
}
