/**
 * The `destructive` check: a call declared non-destructive must not lose or overwrite a pre-existing business or append-only record. Pure.
 *
 * @module
 */
import type { Check, CheckContext } from "../check.ts";
import {
  callFailed,
  callMessages,
  controlVsOnce,
  decideRuns,
  lossy,
  type Observation,
  userUnclassified,
} from "../_observe.ts";

function observeDestructive(
  { cmp, defn, tool: t, rules }: CheckContext,
): Observation {
  const { o, perRun } = controlVsOnce(cmp, defn, t);
  if (perRun === null) return o;
  o.facts.lossy = perRun.some(({ d }) => lossy(d, ["business", "append_only"]));
  decideRuns(
    o,
    perRun.map(({ s, d }) => ({
      run: s.run,
      effect: lossy(d, ["business", "append_only"]),
      unclassifiedOnly: !lossy(d, ["business", "append_only"]) &&
        userUnclassified(d, rules).lossy,
      // A failed call that still added records is not a clean failure.
      failed: callFailed(s) && d.empty,
      messages: callMessages(s),
    })),
    "a pre-existing business or append-only record was lost or overwritten",
  );
  return o;
}

/** A call declared non-destructive must not lose or overwrite a pre-existing business or append-only record. */
export const destructiveCheck: Check = {
  test: "destructive",
  hint: "destructiveHint",
  claim: "FALSE",
  property: "non_destructive",
  observes:
    "control vs once: a pre-existing business or append-only record lost or overwritten",
  observe: observeDestructive,
};
