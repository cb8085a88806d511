/**
 * The process-memory rule: state the server keeps where no adapter looks
 * shows in its answers. When it does while the observed state stayed put,
 * nothing "holds": the behaviour is unknown. Pure.
 *
 * @module
 */
import type {
  DefinitionObservations,
  ToolObservations,
} from "../../history/types.ts";
import type { Rule } from "../rule.ts";
import { any, type Comparator } from "../_observe.ts";
import { processMemoryEvidence, responsePreview } from "../process_memory.ts";

/** Whether the single call changed no observed state in any run. */
function onceLeftStateAlone(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): boolean {
  const ref = defn.control[0]?.stateDigest;
  if (!ref || t.once.length === 0) return false;
  return t.once.every((s) =>
    s.stateDigest !== null &&
    (s.stateDigest === ref ||
      !any(cmp.delta(ref, s.stateDigest), [
        "business",
        "append_only",
        "unclassified",
      ]))
  );
}

/**
 * Identical calls that answer differently while the observed state stayed
 * put (rules version 3 on): the state lives where verity cannot see it, so
 * nothing "holds" (UNOBSERVED_STATE, both answers as evidence).
 */
export const processMemoryRule: Rule = {
  name: "process memory",
  says:
    "identical calls in one session answer differently (ids and timestamps masked) while no observed state changed: unknown, UNOBSERVED_STATE",
  applies: (test, rules) => test !== "open_world" && rules >= 3,
  apply(o, { cmp, defn, tool: t }) {
    const ev = processMemoryEvidence(t.once, t.twice);
    if (ev === null || !onceLeftStateAlone(cmp, defn, t)) return;
    const first = ev[0]!;
    o.evidence.process_memory = ev;
    o.facts.process_memory = true;
    o.details.unshift(
      `unknown: state may live in process memory: identical calls answered differently with no observed state change (twice run ${first.run}: ${
        JSON.stringify(responsePreview(first.first))
      } then ${JSON.stringify(responsePreview(first.second))})`,
    );
    if (o.behaviour === "holds") {
      o.behaviour = "unknown";
      o.blockers.unshift("UNOBSERVED_STATE");
    } else o.blockers.push("UNOBSERVED_STATE");
  },
};
