/**
 * Evidence of state verity cannot observe: identical calls in one session
 * that answer differently (after masking ids and timestamps) while the
 * observed state did not move. A toggle answering "Started" then
 * "Stopped", a counter, a growing history: the state lives in the process.
 * Pure.
 *
 * @module
 */
import type { CallObservation, SessionObservation } from "../history/types.ts";

/** Differing answers to identical calls, with the responses as evidence. */
export interface ProcessMemoryEvidence {
  run: number;
  first: string;
  second: string;
}

const MASKS: readonly [RegExp, string][] = [
  // ISO 8601 date-times and dates
  [
    /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g,
    "<time>",
  ],
  // clock times such as 12:04:05 or 12:04:05.123
  [/\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b/g, "<time>"],
  // UUIDs
  [
    /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g,
    "<id>",
  ],
  // long hex (digests, object ids) and epoch seconds or milliseconds
  [/\b[0-9a-fA-F]{16,}\b/g, "<id>"],
  [/\b1\d{9}(?:\d{3})?(?:\.\d+)?\b/g, "<time>"],
];

/**
 * A response with ids and timestamps masked, so two answers that differ only
 * in them compare equal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   maskVolatile('{"at":"2026-11-30T18:00:01.5Z","id":"3f2c0a9e-1b2c-4d5e-8f90-123456789abc"}'),
 *   '{"at":"<time>","id":"<id>"}',
 * );
 * ```
 */
export function maskVolatile(text: string): string {
  let out = text;
  for (const [re, to] of MASKS) out = out.replace(re, to);
  return out;
}

/**
 * A short readable form of a response: the text of its content blocks when
 * it has them, otherwise the JSON itself; at most `max` characters.
 */
export function responsePreview(response: string, max = 120): string {
  let text = response;
  try {
    const r = JSON.parse(response) as { content?: { text?: unknown }[] };
    const parts = (Array.isArray(r.content) ? r.content : [])
      .map((c) => typeof c?.text === "string" ? c.text : null)
      .filter((t) => t !== null);
    if (parts.length) text = parts.join(" ");
  } catch {
    // a truncated response: show it as it is
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function okResponse(c: CallObservation | undefined): string | null {
  if (!c || c.status !== "ok" || typeof c.response !== "string") return null;
  return maskVolatile(c.response);
}

/**
 * Whether identical calls answered differently in every twice session that
 * has two successful answers, while single calls from a fresh reset agree
 * with one another (so the difference is not randomness). Null when there
 * is no such evidence (including reports recorded before responses were kept).
 *
 * @example
 * ```ts ignore
 * const ev = processMemoryEvidence(tool.once, tool.twice);
 * // [{ run: 1, first: "Started", second: "Stopped" }, ...]
 * ```
 */
export function processMemoryEvidence(
  once: readonly SessionObservation[],
  twice: readonly SessionObservation[],
): ProcessMemoryEvidence[] | null {
  const firsts = once.map((s) => okResponse(s.calls[0])).filter((r) =>
    r !== null
  );
  if (new Set(firsts).size > 1) return null; // answers vary from a fresh start
  const pairs = twice.map((s) => ({
    run: s.run,
    first: okResponse(s.calls[0]),
    second: okResponse(s.calls[1]),
  })).filter((p): p is ProcessMemoryEvidence =>
    p.first !== null && p.second !== null
  );
  if (pairs.length === 0 || pairs.some((p) => p.first === p.second)) {
    return null;
  }
  return pairs.map((p) => ({
    run: p.run,
    first: responsePreview(p.first, 300),
    second: responsePreview(p.second, 300),
  }));
}

/** What a probed session's reads said around the call. */
export interface ProbeReading {
  run: number;
  /** The read just before the call (the second of the two reads). */
  before: string;
  after: string;
  /** Whether the read after the call differs (ids and timestamps masked). */
  changed: boolean;
}

/** What the probed sessions show: readings where the read was stable, and the sessions where it was not. */
export interface ProbeEvidence {
  readings: ProbeReading[];
  /** Runs whose two reads before the call already differed (an unstable read: no evidence). */
  unstable: number[];
  /** Runs where a call of the four did not answer successfully. */
  incomplete: number[];
}

/**
 * The probe's reads in each probed session (probe, probe, the tool, probe):
 * where the two reads before the call agree, whether the read after it
 * differs. Masked as {@linkcode maskVolatile} does. Null without probed
 * sessions.
 *
 * @example
 * ```ts ignore
 * probeEvidence(tool.probed);
 * // { readings: [{ run: 1, before: "hits: 0", after: "hits: 1", changed: true }, ...], unstable: [], incomplete: [] }
 * ```
 */
export function probeEvidence(
  probed: readonly SessionObservation[] | undefined,
): ProbeEvidence | null {
  if (probed === undefined || probed.length === 0) return null;
  const out: ProbeEvidence = { readings: [], unstable: [], incomplete: [] };
  for (const s of probed) {
    const [r1, r2, call, r3] = [0, 1, 2, 3].map((i) =>
      okResponse(s.calls[i]) ?? null
    );
    if (r1 === null || r2 === null || call === null || r3 === null) {
      out.incomplete.push(s.run);
    } else if (r1 !== r2) out.unstable.push(s.run);
    else {
      out.readings.push({
        run: s.run,
        before: responsePreview(s.calls[1]!.response!, 300),
        after: responsePreview(s.calls[3]!.response!, 300),
        changed: r3 !== r2,
      });
    }
  }
  return out;
}
