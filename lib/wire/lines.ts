/**
 * Newline-delimited frames read from a byte stream one at a time, each
 * bounded: never the whole stream in memory, at most one frame and one
 * chunk. Effect-free apart from reading the stream it is given.
 *
 * @module
 */
import { concatBytes } from "./frames.ts";

/** A line longer than the bound: its size so far and its first bytes. */
export class LineTooLong extends RangeError {
  constructor(readonly bytes: number, readonly head: Uint8Array) {
    super(`a line longer than ${bytes - 1} bytes`);
    this.name = "LineTooLong";
  }
}

/**
 * Every line of `stream` without its `\n` (a last line without one
 * included), as bytes. Throws {@linkcode LineTooLong} as soon as a line
 * passes `maxLineBytes`, before reading the rest of it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const s = ReadableStream.from([new TextEncoder().encode("a\nb")]);
 * const got: string[] = [];
 * for await (const l of boundedLines(s, 8)) got.push(new TextDecoder().decode(l));
 * assert.deepEqual(got, ["a", "b"]);
 * ```
 */
export async function* boundedLines(
  stream: ReadableStream<Uint8Array>,
  maxLineBytes: number,
): AsyncGenerator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let len = 0;
  for await (const chunk of stream) {
    let start = 0;
    for (
      let nl = chunk.indexOf(0x0a);
      nl !== -1;
      nl = chunk.indexOf(0x0a, start)
    ) {
      const piece = chunk.subarray(start, nl);
      if (len + piece.length > maxLineBytes) {
        throw new LineTooLong(
          len + piece.length,
          concatBytes([...parts, piece]).slice(0, 256),
        );
      }
      const line = len === 0 ? piece : concatBytes([...parts, piece]);
      parts = [];
      len = 0;
      start = nl + 1;
      yield line;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      len += rest.length;
      parts.push(rest.slice());
      if (len > maxLineBytes) {
        throw new LineTooLong(len, concatBytes(parts).slice(0, 256));
      }
    }
  }
  if (len > 0) yield parts.length === 1 ? parts[0]! : concatBytes(parts);
}

/**
 * The first `limit` bytes of `stream`, how many bytes it carried, and
 * whether it was longer (then it is cancelled, the rest unread). `take`
 * sees each chunk's size first; false stops the reading there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const s = ReadableStream.from([new TextEncoder().encode("abcdef")]);
 * const r = await readAtMost(s, 4);
 * assert.deepEqual([r.bytes.length, r.seen, r.over], [4, 6, true]);
 * ```
 */
export async function readAtMost(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  take: (n: number) => boolean = () => true,
): Promise<{ bytes: Uint8Array; seen: number; over: boolean }> {
  const parts: Uint8Array[] = [];
  let kept = 0;
  let seen = 0;
  const reader = stream?.getReader();
  try {
    while (reader) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value.length;
      if (!take(value.length)) break;
      parts.push(value.subarray(0, limit - kept));
      kept += parts.at(-1)!.length;
      if (kept === limit && seen > limit) {
        await reader.cancel().catch(() => {});
        return { bytes: concatBytes(parts), seen, over: true };
      }
    }
  } finally {
    reader?.releaseLock();
  }
  return { bytes: concatBytes(parts), seen, over: false };
}
