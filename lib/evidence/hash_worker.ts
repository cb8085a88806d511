/**
 * The worker that checks ledger hash batches on a second thread for
 * `verifyLedgerFile` (see `ledger.ts`): it receives a piece of the file's
 * bytes (transferred) with a {@linkcode HashBatch}, answers whether the
 * batch holds, and transfers the bytes back for reuse. Touches nothing but
 * the messages.
 *
 * @module
 */
import { batchHolds, type HashBatch } from "./hash_batch.ts";

/** A piece to check. */
export interface HashRequest {
  id: number;
  buffer: ArrayBuffer;
  batch: HashBatch;
}

/** The answer for a piece. */
export interface HashReply {
  id: number;
  holds: boolean;
  buffer: ArrayBuffer;
}

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<HashRequest>) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
};
scope.onmessage = (ev) => {
  const { id, buffer, batch } = ev.data;
  const holds = batchHolds(new Uint8Array(buffer), batch);
  const reply: HashReply = { id, holds, buffer };
  scope.postMessage(reply, [buffer]);
};
scope.postMessage("ready");
