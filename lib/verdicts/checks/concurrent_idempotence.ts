/**
 * The `concurrent_idempotence` check: a call declared idempotent, made twice at once, must leave business state as one call leaves it in every attempt. Pure.
 *
 * @module
 */
import type { Check, CheckContext } from "../check.ts";
import {
  base,
  callFailed,
  type Observation,
  onceReference,
  stateGate,
  summarizeDelta,
  userUnclassified,
} from "../_observe.ts";
import { attemptOverlap } from "../overlap.ts";
import { attemptTimedOut } from "../../history/call_outcome.ts";

function observeConcurrent(
  { cmp, defn, tool: t, rules }: CheckContext,
): Observation {
  const o = base();
  if (t.concurrent === null) {
    // Not run: the tool makes no idempotence claim (see --observe-concurrent).
    o.details.push("no concurrent attempts were run");
    return o;
  }
  const gate = stateGate(defn, t.once);
  if (gate) return gate;
  const ref = onceReference(cmp, t, o);
  if (ref === null) return o;
  const attempts = t.concurrent;
  const usable = attempts.filter((a) =>
    a.setupFailure === null && a.stateDigest !== null
  );
  // Rules version 9: an attempt whose every call failed and that left the
  // business state as the control sessions leave it did nothing at all
  // (both calls refused: SQLITE_BUSY, a lock): it differs from one call
  // only by the call's work, not by a race, so it is no divergence.
  const control = defn.control[0]?.stateDigest ? defn.control[0] : null;
  const didNothing = (a: (typeof usable)[number]) =>
    rules >= 9 && control !== null &&
    a.calls.length > 0 && a.calls.every((c) => c.status !== "ok") &&
    cmp.delta(control, a).business.empty;
  const rows = usable.map((a) => {
    const d = cmp.delta(ref, a);
    const nothing = didNothing(a);
    return {
      a,
      d,
      diverged: !d.business.empty && !nothing,
      nothing,
      ov: attemptOverlap(a),
    };
  });
  const idle = rows.filter((r) => r.nothing && !r.d.business.empty);
  if (idle.length > 0) {
    o.facts.failed_without_effect_attempts = idle.length;
    o.details.push(
      `${idle.length} attempt(s) in which every call failed and nothing changed: no evidence either way; first: ${
        idle[0]!.a.mode
      } attempt ${idle[0]!.a.attempt}: ${
        idle[0]!.a.calls.find((c) => c.message !== null)?.message ?? ""
      }`,
    );
  }
  const timedOutIn = (mode: string) =>
    attempts.filter((a) => a.mode === mode && attemptTimedOut(a)).length;
  const counts: Record<string, Record<string, number>> = {};
  for (const mode of ["single_connection", "two_process"] as const) {
    const mine = rows.filter((r) => r.a.mode === mode);
    counts[mode] = {
      attempts: attempts.filter((a) => a.mode === mode).length,
      diverged: mine.filter((r) => r.diverged).length,
      overlapped: mine.filter((r) => r.ov.overlap).length,
      // Rules 6: an attempt that ran out of time is counted as timed out only.
      setup_failed: attempts.filter((a) =>
        a.mode === mode && a.setupFailure !== null &&
        (rules < 6 || !attemptTimedOut(a))
      ).length,
      // Named only when some attempt ran out of time: evidence without
      // timeouts reads the same under rules 5 and 6.
      ...(rules >= 6 && timedOutIn(mode) > 0
        ? { timed_out: timedOutIn(mode) }
        : {}),
    };
  }
  // Rules version 6: an attempt that ran out of time (a call unanswered,
  // the attempt's deadline passed, its timer killed) is named, and no PASS
  // is given beside it: a server that hangs only when calls overlap must
  // not read as safe under concurrency.
  const timedOut = rules >= 6 ? attempts.filter(attemptTimedOut) : [];
  const timedOutDetail = () => {
    const a = timedOut[0]!;
    const why = a.setupFailure ??
      a.calls.find((c) => c.message !== null)?.message ?? "";
    return `${timedOut.length}/${attempts.length} attempt(s) ran out of time; first: ${a.mode} attempt ${a.attempt}: ${why}`;
  };
  if (timedOut.length > 0) o.facts.timed_out_attempts = timedOut.length;
  const producedBy = [
    ...new Set(rows.filter((r) => r.diverged).map((r) => r.a.mode)),
  ];
  o.evidence.counts = counts;
  o.evidence.attempts = rows.map((r) => ({
    mode: r.a.mode,
    attempt: r.a.attempt,
    diverged: r.diverged,
    overlap: r.ov.overlap,
    overlapDetail: r.ov.detail,
    calls: r.a.calls.map((c) => c.status),
    timeline: r.a.timeline,
    ...(r.diverged ? { delta: summarizeDelta(r.d) } : {}),
  }));
  o.evidence.producedBy = producedBy;
  o.facts.diverged_attempts = rows.filter((r) => r.diverged).length;
  o.facts.overlapped_attempts = rows.filter((r) => r.ov.overlap).length;
  if (t.twoProcessSkipped) {
    o.blockers.push("TWO_PROCESS_SKIPPED_STARTUP_WRITES");
    o.details.push(`two-process attempts skipped: ${t.twoProcessSkipped}`);
  }
  if (rows.length === 0 && timedOut.length > 0) {
    o.blockers.unshift("TIMED_OUT");
    o.details.push(timedOutDetail());
    return o;
  }
  if (rows.length === 0) {
    o.blockers.unshift("SETUP_FAILED");
    o.details.push("no concurrent attempt could be set up");
    return o;
  }
  const diverged = rows.filter((r) => r.diverged);
  if (diverged.length > 0) {
    o.behaviour = "fails";
    const first = diverged[0]!;
    o.details.push(
      `${diverged.length} attempt(s) diverged from one call; first: ${first.a.mode} attempt ${first.a.attempt}`,
    );
    return o;
  }
  if (timedOut.length > 0) {
    o.blockers.unshift("TIMED_OUT");
    o.details.push(timedOutDetail());
    return o;
  }
  if (rows.some((r) => !userUnclassified(r.d, rules).empty)) {
    o.blockers.unshift("UNCLASSIFIED_STATE");
    o.details.push("attempts differ from one call only in unclassified state");
    return o;
  }
  // Without divergence, only attempts where a call did its work are evidence
  // that concurrent calls are safe; a call that failed may never have reached
  // the code that races.
  if (t.once.every((s) => callFailed(s))) {
    o.blockers.unshift("CALL_ERROR");
    o.details.push(
      "the single call failed in every once session: nothing to compare",
    );
    return o;
  }
  const informative = rows.filter((r) =>
    r.a.calls.some((c) => c.status === "ok")
  );
  o.facts.informative_attempts = informative.length;
  if (informative.length === 0) {
    o.blockers.unshift("CALL_ERROR");
    o.details.push(
      "every call failed in every concurrent attempt, and nothing changed",
    );
    return o;
  }
  if (informative.some((r) => r.ov.overlap)) {
    o.behaviour = "holds";
    return o;
  }
  o.blockers.unshift("NO_OVERLAP_OBSERVED");
  o.details.push("no attempt diverged and no attempt overlapped");
  return o;
}

/** A call declared idempotent, made twice at once, must leave business state as one call leaves it in every attempt. */
export const concurrentIdempotenceCheck: Check = {
  test: "concurrent_idempotence",
  hint: "idempotentHint",
  claim: "TRUE",
  property: "idempotent",
  observes:
    "once vs two concurrent calls (one connection; two processes): business state, overlap from the timer's stamps",
  observe: observeConcurrent,
};
