/**
 * How a tool call ended, decided once: ok, tool_error (`isError: true`),
 * protocol_error (a JSON-RPC error) or unknown (no answer: timeout, crash,
 * garbage). A timeout or crash is unknown, never silently ok. The runner,
 * the overlap timer and `verity report verify` all classify with these
 * functions. Pure.
 *
 * @module
 */
import { readJson } from "../contracts/json_reader.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import type { CallStatus } from "./types.ts";

/** Longest message kept for a failed call of a session. */
export const CALL_MESSAGE_LIMIT = 300;

/**
 * Longest message the overlap timer keeps for a failed call of a concurrent
 * attempt (as published reports carry it).
 */
export const ATTEMPT_MESSAGE_LIMIT = 200;

/** What came back for one request: a result, a JSON-RPC error, or nothing. */
export type CallAnswer =
  | { status: "ok"; result: unknown }
  | { status: "error"; error: unknown }
  | { status: "unknown"; failure: { message: string } };

/** A call's outcome and, when it failed, one line for humans. */
export interface CallOutcome {
  status: CallStatus;
  message: string | null;
}

/**
 * Classify a tool call's `result`: `isError: true` is a tool error (with
 * its content as the message), anything else is ok.
 *
 * @example
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * assertEquals(classifyResult({ isError: true, content: [] }).status, "tool_error");
 * ```
 */
export function classifyResult(
  result: unknown,
  limit: number = CALL_MESSAGE_LIMIT,
): CallOutcome {
  const isError = isPlainObject(result) && result.isError === true;
  return {
    status: isError ? "tool_error" : "ok",
    message: isError
      ? JSON.stringify((result as Record<string, unknown>).content ?? null)
        .slice(0, limit)
      : null,
  };
}

/**
 * Classify the answer to a `tools/call` request, as the wire client
 * delivers it.
 *
 * @example
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * assertEquals(classifyAnswer({ status: "unknown", failure: { message: "timeout" } }), { status: "unknown", message: "timeout" });
 * assertEquals(classifyAnswer({ status: "error", error: { code: -32602 } }).status, "protocol_error");
 * ```
 */
export function classifyAnswer(
  answer: CallAnswer,
  limit: number = CALL_MESSAGE_LIMIT,
): CallOutcome {
  if (answer.status === "unknown") {
    return { status: "unknown", message: answer.failure.message };
  }
  if (answer.status === "error") {
    return {
      status: "protocol_error",
      message: JSON.stringify(answer.error).slice(0, limit),
    };
  }
  return classifyResult(answer.result, limit);
}

/**
 * Classify a call from its raw JSON-RPC response frame (what a session
 * record keeps); null (no frame) is unknown.
 *
 * @example
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * assertEquals(classifyResponseFrame('{"jsonrpc":"2.0","id":3,"result":{"content":[]}}').status, "ok");
 * assertEquals(classifyResponseFrame(null).status, "unknown");
 * ```
 */
export function classifyResponseFrame(
  text: string | null,
  limit: number = CALL_MESSAGE_LIMIT,
): CallOutcome {
  if (text === null) return { status: "unknown", message: null };
  let m: unknown;
  try {
    m = readJson(text).value;
  } catch {
    return { status: "unknown", message: "unreadable frame" };
  }
  if (!isPlainObject(m)) return { status: "unknown", message: "not an object" };
  if (Object.hasOwn(m, "error")) {
    return classifyAnswer({ status: "error", error: m.error }, limit);
  }
  return classifyResult(m.result, limit);
}

/**
 * Classify a concurrent attempt's call from the result text the overlap
 * timer kept (it keeps none for a JSON-RPC error or no answer, so null is
 * "protocol_error_or_unknown").
 *
 * @example
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * assertEquals(classifyResultText('{"isError":true,"content":[]}').status, "tool_error");
 * assertEquals(classifyResultText(null).status, "protocol_error_or_unknown");
 * ```
 */
export function classifyResultText(
  text: string | null,
  limit: number = ATTEMPT_MESSAGE_LIMIT,
): {
  status: CallStatus | "protocol_error_or_unknown";
  message: string | null;
} {
  if (text === null) {
    return { status: "protocol_error_or_unknown", message: null };
  }
  let r: unknown;
  try {
    r = readJson(text).value;
  } catch {
    return { status: "unknown", message: "unreadable result" };
  }
  return classifyResult(r, limit);
}

/**
 * How a concurrent attempt's setup failure or call message starts when it
 * ran out of time (a per-answer timeout or the attempt's deadline), so the
 * verdict can name the timeout instead of reading it as a failure to start.
 */
export const TIMED_OUT_PREFIX = "timed out: ";

/**
 * Whether a concurrent attempt ran out of time: its setup failed on a
 * timeout or deadline, or one of its calls got no answer in time.
 *
 * @example
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * assertEquals(attemptTimedOut({ setupFailure: "timed out: deadline", calls: [] }), true);
 * assertEquals(attemptTimedOut({ setupFailure: null, calls: [{ message: null }] }), false);
 * ```
 */
export function attemptTimedOut(a: {
  setupFailure: string | null;
  calls: readonly { message: string | null }[];
}): boolean {
  return (a.setupFailure?.startsWith(TIMED_OUT_PREFIX) ?? false) ||
    a.calls.some((c) => c.message?.startsWith(TIMED_OUT_PREFIX) ?? false);
}
