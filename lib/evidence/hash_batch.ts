/**
 * Checking a batch of ledger blocks' hashes: each block's hashed input, as
 * a deferring {@linkcode VerityByteWalker} left it in a piece of the file's
 * bytes, against the hash the block publishes. Pure; also run by
 * `hash_worker.ts` on a second thread.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Blocks' hashed inputs in a piece of bytes, and their published digits. */
export interface HashBatch {
  /** Start and end (exclusive) of each block's hashed input, in pairs. */
  offsets: Int32Array;
  /** Each block's published hash: 64 lowercase hex digits (ASCII) each. */
  published: Uint8Array;
  /** How many blocks. */
  count: number;
}

/** A fresh SHA-256, copied for each digest (a little cheaper than createHash). */
const SHA256 = createHash("sha256");

/**
 * Whether every block's SHA-256 over its hashed input (in `bytes`) is, in
 * hex, its published hash.
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode("abc");
 * const published = new TextEncoder().encode(
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * batchHolds(bytes, { offsets: new Int32Array([0, 3]), published, count: 1 }); // true
 * ```
 */
export function batchHolds(bytes: Uint8Array, batch: HashBatch): boolean {
  const { offsets, published, count } = batch;
  for (let i = 0; i < count; i++) {
    const h = SHA256.copy()
      .update(bytes.subarray(offsets[2 * i]!, offsets[2 * i + 1]!))
      .digest("hex");
    const at = 64 * i;
    for (let k = 0; k < 64; k++) {
      if (published[at + k] !== h.charCodeAt(k)) return false;
    }
  }
  return true;
}
