/**
 * Verbatim capture of what crossed the wire. Pure data types and helpers.
 *
 * @module
 */

/** The protocol revision verity speaks (and asks for over HTTP). */
export const PROTOCOL_VERSION = "2025-11-25";

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

/** Outcome of one request: ok, a JSON-RPC error, or unknown (timeout, death). */
export type RpcOutcome =
  | { status: "ok"; result: unknown; frameIndex: number; ms: number }
  | { status: "error"; error: unknown; frameIndex: number; ms: number }
  | { status: "unknown"; failure: WireFailure; ms: number };

/** The outcome a response message `m` (frame `frameIndex`) settles its request with. */
export function answered(
  m: Record<string, unknown>,
  frameIndex: number,
  ms: number,
): RpcOutcome {
  return "error" in m
    ? { status: "error", error: m.error, frameIndex, ms }
    : { status: "ok", result: m.result, frameIndex, ms };
}

/**
 * verity's answer to a request from the server: it advertises no
 * capability (roots, sampling, elicitation), so only `ping` gets a result.
 */
export function replyTo(id: unknown, method: unknown): unknown {
  return method === "ping" ? { jsonrpc: "2.0", id, result: {} } : {
    jsonrpc: "2.0",
    id,
    error: { code: -32601, message: "Method not found" },
  };
}

/** The failure of a request `method` nothing answered within `timeoutMs`. */
export function noAnswer(method: string, timeoutMs: number): WireFailure {
  return {
    reason: "timeout",
    message: `no answer to ${method} within ${(timeoutMs / 1000).toFixed(1)} s`,
  };
}

/** The bytes of `parts`, one after another. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

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
      base64: bytes.toBase64(),
      bytes: bytes.length,
      problem: "invalid UTF-8",
    };
  }
}
