/**
 * The overlap decision of a concurrent attempt, made from the overlap
 * timer's raw stamps. Pure. The timer stores only the stamps; the
 * concurrent check decides here ({@linkcode attemptOverlap}), so
 * `verity report verify` decides again from the same stored timeline.
 *
 * @module
 */
import type { AttemptObservation } from "../history/types.ts";

/** A call's send and receive stamps (ms on the timer's clock; receive null when unanswered). */
export interface CallStamps {
  sendT: number;
  recvT: number | null;
}

/** The decision and the numbers behind it. */
export interface OverlapDecision {
  overlap: boolean;
  detail: string;
}

/** Timeline event names of a ping to instance `i` (1-based). */
export function pingEvents(i: number): { send: string; receive: string } {
  return { send: `ping ${i} send`, receive: `ping ${i} receive` };
}

/** The median of some round trips (the upper median for an even count; 0 for none). */
export function medianRtt(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]!;
}

/**
 * Decide overlap from the two calls' stamps and each instance's median
 * ping round trip.
 *
 * Two processes overlap when both calls were in flight together for longer
 * than the two instances' ping round trips combined. On one connection
 * overlap is never assumed: it counts only when the second call was
 * answered before the first (the server was still working on the first).
 *
 * @example
 * ```ts
 * decideOverlap("single_connection", [{ sendT: 0, recvT: 9 }, { sendT: 1, recvT: 5 }], []).overlap; // true
 * ```
 */
export function decideOverlap(
  mode: "single_connection" | "two_process",
  calls: readonly CallStamps[],
  rtt: readonly number[],
): OverlapDecision {
  const [a, b] = calls;
  if (!a || !b || a.recvT === null || b.recvT === null) {
    return { overlap: false, detail: "a call was not answered" };
  }
  if (mode === "single_connection") {
    if (b.recvT < a.recvT) {
      return {
        overlap: true,
        detail: `second call answered ${
          (a.recvT - b.recvT).toFixed(1)
        } ms before the first`,
      };
    }
    return {
      overlap: false,
      detail: "answered in order (overlap on one connection is never assumed)",
    };
  }
  const inFlight = Math.min(a.recvT, b.recvT) - Math.max(a.sendT, b.sendT);
  const need = rtt.reduce((x, y) => x + y, 0);
  return {
    overlap: inFlight > need,
    detail: `both in flight ${
      inFlight.toFixed(1)
    } ms; ping round trips combined ${need.toFixed(1)} ms`,
  };
}

/**
 * Decide overlap again from a stored timeline (`send call N`,
 * `receive call N`, and for two processes `ping I send` / `ping I receive`
 * pairs). Null when the timeline lacks the stamps the decision needs (no
 * call was sent, or a two-process timeline from before ping stamps were
 * stored).
 */
export function overlapFromTimeline(
  mode: "single_connection" | "two_process",
  timeline: readonly { event: string; t: number }[],
): OverlapDecision | null {
  const at = (e: string) => timeline.find((x) => x.event === e)?.t;
  const calls: CallStamps[] = [];
  for (const n of [1, 2]) {
    const sendT = at(`send call ${n}`);
    if (sendT === undefined) return null;
    calls.push({ sendT, recvT: at(`receive call ${n}`) ?? null });
  }
  const rtt: number[] = [];
  if (mode === "two_process") {
    for (const i of [1, 2]) {
      const { send, receive } = pingEvents(i);
      const sends = timeline.filter((x) => x.event === send).map((x) => x.t);
      const receives = timeline.filter((x) => x.event === receive).map((x) =>
        x.t
      );
      if (sends.length === 0 || sends.length !== receives.length) return null;
      rtt.push(medianRtt(receives.map((r, k) => r - sends[k]!)));
    }
  }
  return decideOverlap(mode, calls, rtt);
}

/**
 * Whether an attempt's two calls overlapped, decided from its stored
 * stamps. A history version 1 attempt whose timeline lacks the stamps (a
 * two-process attempt recorded before ping stamps were stored) keeps the
 * timer's own decision; with neither, no overlap.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const d = attemptOverlap({
 *   mode: "single_connection",
 *   timeline: [
 *     { event: "send call 1", t: 0 },
 *     { event: "send call 2", t: 1 },
 *     { event: "receive call 2", t: 5 },
 *     { event: "receive call 1", t: 9 },
 *   ],
 * });
 * assert.equal(d.overlap, true);
 * ```
 */
export function attemptOverlap(
  a: Pick<
    AttemptObservation,
    "mode" | "timeline" | "overlap" | "overlapDetail"
  >,
): OverlapDecision {
  const d = overlapFromTimeline(a.mode, a.timeline);
  if (d !== null) return d;
  if (a.overlap !== undefined) {
    return { overlap: a.overlap, detail: a.overlapDetail ?? "" };
  }
  return {
    overlap: false,
    detail:
      "the timeline lacks the stamps to decide (overlap is never assumed)",
  };
}
