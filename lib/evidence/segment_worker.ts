/**
 * The second thread of `verifyLedgerFile` for a large ledger. It takes
 * segments of the file one after the other (the next one neither thread
 * has taken, from a shared counter) and walks each with its hashing
 * deferred ({@linkcode walkSegmentDeferred}): layout, chain links and
 * canonical form, each block's hashed input and published digits left in
 * a shared slot. Both threads hash the slots' blocks, a chunk at a time
 * ({@linkcode hashChunk}): the first thread whenever it can, this one when
 * every slot is full. Slots are filled in turn, each only once it is free
 * again. Every walk's outcome comes to the first thread as a message
 * (which also wakes it when it has nothing to do). Reads only the ledger
 * file it is given.
 *
 * @module
 */
import type { HashSlot } from "./chain.ts";
import {
  CONTROL,
  type DeferredOutcome,
  hashChunk,
  markReady,
  type SegmentPlan,
  walkSegmentDeferred,
} from "./segment_walk.ts";

/** What to walk: the file, its plan, the shared control words and slots. */
export interface SegmentRequest {
  path: string;
  plan: SegmentPlan;
  /** The control words ({@linkcode CONTROL}). */
  control: SharedArrayBuffer;
  /** One Int32 per segment: 1 once its deferred hashes were all found equal. */
  verified: SharedArrayBuffer;
  /** Backed by shared memory. */
  slots: HashSlot[];
}

/**
 * A segment walked here and its outcome ("hash here" asks the first thread
 * to walk it itself); then "done", or null when walking threw.
 */
export type SegmentReply =
  | { k: number; outcome: DeferredOutcome }
  | "done"
  | null;

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<SegmentRequest>) => void) | null;
  postMessage(message: SegmentReply): void;
};
scope.onmessage = async (ev) => {
  const { path, plan, control, verified, slots } = ev.data;
  const c = new Int32Array(control);
  const done = new Int32Array(verified);
  const hash = () => hashChunk(c, slots, done, plan.count);
  let ring = 0;
  try {
    while (true) {
      const k = Atomics.add(c, CONTROL.next, 1);
      if (k >= plan.count) break;
      // The next slot not free yet: hash what is not claimed meanwhile.
      const state = CONTROL.slot(ring % slots.length);
      while (Atomics.load(c, state) !== 0) {
        if (!hash()) Atomics.wait(c, state, 1, 5);
      }
      const r = await walkSegmentDeferred(
        path,
        plan,
        k,
        slots[ring % slots.length]!,
      );
      if (
        r.outcome !== null && typeof r.outcome === "object" && r.deferred > 0
      ) {
        markReady(c, slots.length, ring, k, r.deferred);
        ring++;
      }
      scope.postMessage({ k, outcome: r.outcome });
      // A segment that failed fails the whole: stop both threads.
      if (r.outcome === null) Atomics.store(c, CONTROL.next, plan.count);
    }
    while (hash());
    Atomics.store(c, CONTROL.worker, 1);
    scope.postMessage("done");
  } catch {
    Atomics.store(c, CONTROL.next, plan.count);
    Atomics.store(c, CONTROL.worker, 2);
    scope.postMessage(null);
  }
};
