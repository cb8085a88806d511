/**
 * Where bytes stop being UTF-8, for messages that name the place. Pure.
 *
 * @module
 */

const lossy = new TextDecoder();
const enc = new TextEncoder();

/**
 * Offset of the first byte of `bytes` that is not valid UTF-8
 * (`bytes.length` when every byte is).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(firstInvalidUtf8(new Uint8Array([0x61, 0xef, 0xbf, 0xbd, 0xff])), 4);
 * assert.equal(firstInvalidUtf8(new TextEncoder().encode("ok")), 2);
 * ```
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const text = lossy.decode(bytes);
  let from = 0;
  let prefix = 0;
  for (
    let i = text.indexOf("\uFFFD");
    i >= 0;
    i = text.indexOf("\uFFFD", i + 1)
  ) {
    prefix += enc.encode(text.slice(from, i)).length;
    from = i;
    // A U+FFFD really sent is the three bytes EF BF BD.
    if (
      bytes[prefix] !== 0xef || bytes[prefix + 1] !== 0xbf ||
      bytes[prefix + 2] !== 0xbd
    ) {
      return prefix;
    }
  }
  return bytes.length;
}
