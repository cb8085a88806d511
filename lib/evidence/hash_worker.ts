/**
 * The second thread of `verifyLedgerFile` for a large ledger: it hashes.
 * The first thread walks the file's segments in turn, each into a shared
 * slot with its blocks' hashing deferred (layout, chain links and
 * canonical form checked, each block's hashed input built in place beside
 * its published digits); this thread claims the slots' blocks a chunk at
 * a time and hashes them ({@linkcode hashChunk}), as the first thread does
 * too whenever its next slot is not free yet. It imports only
 * `slot_hash.ts` (and the module that writes the WebAssembly it hashes
 * with; the compiled module is sent, not compiled again), so that it is
 * hashing soon after it is started, and reads nothing but the shared
 * memory it is given.
 *
 * @module
 */
import { CONTROL, hashChunk, type HashSlot, LaneHasher } from "./slot_hash.ts";

/** The shared control words and slots, and the per-segment verified marks. */
export interface HashRequest {
  /** The arena's memory and compiled module, and this thread's work area. */
  memory: WebAssembly.Memory;
  module: WebAssembly.Module;
  work: number;
  /** The control words ({@linkcode CONTROL}). */
  control: SharedArrayBuffer;
  /** One Int32 per segment: 1 once its deferred hashes were all found equal. */
  verified: SharedArrayBuffer;
  /** Backed by shared memory. */
  slots: HashSlot[];
}

/** How long to sleep at most between looks when there is nothing to hash (ms). */
const NAP = 50;

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<HashRequest>) => void) | null;
};
scope.onmessage = (ev) => {
  const { control, verified, slots } = ev.data;
  const hasher = new LaneHasher(ev.data, ev.data.work);
  const c = new Int32Array(control);
  const done = new Int32Array(verified);
  while (Atomics.load(c, CONTROL.mismatch) === 0) {
    const seen = Atomics.load(c, CONTROL.ready);
    const n = hashChunk(c, hasher, slots, done);
    if (n > 0) {
      Atomics.add(c, CONTROL.there, n);
      continue;
    }
    // Nothing to claim: the first thread has walked every segment (it
    // hashes what is left itself), or the next slot is not ready yet.
    if (Atomics.load(c, CONTROL.over) !== 0) break;
    Atomics.wait(c, CONTROL.ready, seen, NAP);
  }
};
