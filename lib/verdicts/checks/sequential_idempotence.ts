/**
 * The `sequential_idempotence` check: a call declared idempotent, made twice, must leave business state as one call leaves it, in every run. Pure.
 *
 * @module
 */
import type { Check, CheckContext } from "../check.ts";
import {
  base,
  callFailed,
  callMessages,
  decideRuns,
  disagreement,
  markNondeterministic,
  type Observation,
  onceReference,
  stateGate,
  summarizeDelta,
  userUnclassified,
} from "../_observe.ts";

function observeSequential(
  { cmp, defn, tool: t, rules }: CheckContext,
): Observation {
  const gate = stateGate(defn, [...t.once, ...t.twice]);
  if (gate) return gate;
  const o = base();
  const ref = onceReference(cmp, t, o);
  if (ref === null) return o;
  const cols = disagreement(cmp, t.twice, ["business"]);
  if (cols.length > 0) {
    markNondeterministic(
      o,
      cols,
      "business state after two calls differs between runs in",
    );
    return o;
  }
  const perRun = t.twice.map((s, i) => {
    const once = t.once[i] ?? t.once[0]!;
    return { s, once, d: cmp.delta(once, s) };
  });
  o.facts.business_changed = perRun.some(({ d }) => !d.business.empty);
  o.facts.append_only_changed = perRun.some(({ d }) => !d.append_only.empty);
  o.facts.unclassified_changed = perRun.some(({ d }) => !d.unclassified.empty);
  o.evidence.once_vs_twice = perRun.map(({ s, once, d }) => ({
    run: s.run,
    from: once.stateDigest,
    to: s.stateDigest,
    delta: summarizeDelta(d),
  }));
  decideRuns(
    o,
    perRun.map(({ s, once, d }) => ({
      run: s.run,
      effect: !d.business.empty,
      unclassifiedOnly: d.business.empty && !userUnclassified(d, rules).empty,
      // Only the first call decides whether the tool did its work at all.
      failed: callFailed(once) ||
        (callFailed(s, 0) && s.calls[0]?.status !== "ok"),
      messages: [...callMessages(once), ...callMessages(s)],
    })),
    "business state after two calls differs from after one",
  );
  if (o.behaviour !== "unknown" && t.twice.some((s) => callFailed(s, 1))) {
    o.details.push("the second call failed; idempotence judged on state");
    o.blockers.push("CALL_ERROR");
    o.facts.repeat_errored = true;
  }
  return o;
}

/** A call declared idempotent, made twice, must leave business state as one call leaves it, in every run. */
export const sequentialIdempotenceCheck: Check = {
  test: "sequential_idempotence",
  hint: "idempotentHint",
  claim: "TRUE",
  property: "idempotent",
  observes: "once vs twice, separate runs from a clean reset: business state",
  observe(ctx) {
    const o = observeSequential(ctx);
    // Rules version 2 did not record an errored repeat.
    if (ctx.rules < 3) delete o.facts.repeat_errored;
    return o;
  },
};
