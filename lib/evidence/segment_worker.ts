/**
 * The second thread of `verifyLedgerFile` for a large ledger: it takes
 * segments of the file one after the other (the next one neither thread
 * has taken, from a shared counter), walks each ({@linkcode walkSegment}),
 * and answers with their walks. Reads only the ledger file it is given.
 *
 * @module
 */
import {
  type SegmentOutcome,
  type SegmentPlan,
  walkSegment,
} from "./segment_walk.ts";

/** What to walk: the file, its plan, and the counter both threads take segments from. */
export interface SegmentRequest {
  path: string;
  plan: SegmentPlan;
  /** One Int32: the next segment to take. */
  counter: SharedArrayBuffer;
}

/** The segments walked here, by number; null when walking one threw. */
export type SegmentReply = [number, SegmentOutcome][] | null;

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<SegmentRequest>) => void) | null;
  postMessage(message: SegmentReply): void;
};
scope.onmessage = async (ev) => {
  const { path, plan, counter } = ev.data;
  const next = new Int32Array(counter);
  const walked: [number, SegmentOutcome][] = [];
  try {
    while (true) {
      const k = Atomics.add(next, 0, 1);
      if (k >= plan.count) break;
      const r = await walkSegment(path, plan, k);
      walked.push([k, r]);
      // A segment that failed fails the whole: stop both threads.
      if (r === null) Atomics.store(next, 0, plan.count);
    }
    scope.postMessage(walked);
  } catch {
    Atomics.store(next, 0, plan.count);
    scope.postMessage(null);
  }
};
