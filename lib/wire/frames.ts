/**
 * Verbatim capture of what crossed the wire. Pure data types and helpers.
 *
 * @module
 */

/** Direction of a captured frame: `out` is harness → server, `in` is server → harness. */
export type Direction = "out" | "in";

/** One newline-delimited frame exactly as it crossed the pipe. */
export interface Frame {
  /** Direction of travel. */
  dir: Direction;
  /** Milliseconds since the session's process was spawned (monotonic clock). */
  t: number;
  /** The frame as text when it was valid UTF-8, without the trailing newline. */
  text?: string;
  /** The frame's bytes as base64 when it was not valid UTF-8 (or was truncated). */
  base64?: string;
  /** Byte length of the frame as received. */
  bytes: number;
  /** Set when the frame could not be used: why. */
  problem?: string;
}

/** Why a session ended before its work was done. */
export type EndReason =
  | "timeout"
  | "exited"
  | "frame_too_large"
  | "spawn_failed"
  | "budget_exceeded"
  | "deadline"
  | "invalid_output"
  | "closed";

/** A terminal problem of a session, with the bytes seen as evidence. */
export interface WireFailure {
  reason: EndReason;
  /** One line a person can read. */
  message: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Encode bytes as base64 (no Node buffer). */
export function toBase64(bytes: Uint8Array): string {
  let bin = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) {
    bin += String.fromCharCode(...bytes.subarray(i, i + step));
  }
  return btoa(bin);
}

/**
 * Decode one frame's bytes into a {@linkcode Frame}: text when valid UTF-8,
 * base64 otherwise, with the problem named.
 *
 * @example
 * ```ts
 * const f = decodeFrame(new TextEncoder().encode("{}"), "in", 1);
 * // f.text === "{}"
 * ```
 */
export function decodeFrame(
  bytes: Uint8Array,
  dir: Direction,
  t: number,
): Frame {
  try {
    return { dir, t, text: utf8.decode(bytes), bytes: bytes.length };
  } catch {
    return {
      dir,
      t,
      base64: toBase64(bytes),
      bytes: bytes.length,
      problem: "invalid UTF-8",
    };
  }
}
