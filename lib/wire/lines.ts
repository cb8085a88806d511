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
