/**
 * The `read_only` check: a call declared read-only must leave business and append-only state as a control session leaves it. Pure.
 *
 * @module
 */
import type { Check } from "../check.ts";
import type {
  DefinitionObservations,
  ToolObservations,
} from "../../history/types.ts";
import {
  any,
  callFailed,
  callMessages,
  type Comparator,
  controlVsOnce,
  decideRuns,
  type Observation,
} from "../_observe.ts";

function observeReadOnly(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): Observation {
  const { o, perRun } = controlVsOnce(cmp, defn, t);
  if (perRun === null) return o;
  o.facts.unclassified_changed = perRun.some(({ d }) => !d.unclassified.empty);
  decideRuns(
    o,
    perRun.map(({ s, d }) => ({
      run: s.run,
      effect: any(d, ["business", "append_only"]),
      unclassifiedOnly: !any(d, ["business", "append_only"]) &&
        !d.unclassified.empty,
      failed: callFailed(s),
      messages: callMessages(s),
    })),
    "state changed between control and once",
  );
  return o;
}

/** A call declared read-only must leave business and append-only state as a control session leaves it. */
export const readOnlyCheck: Check = {
  test: "read_only",
  hint: "readOnlyHint",
  claim: "TRUE",
  property: "read_only",
  observes: "control vs once: any business or append-only state differs",
  observe: (ctx) => observeReadOnly(ctx.cmp, ctx.defn, ctx.tool),
};
