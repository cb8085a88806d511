/**
 * The nothing-to-change rule: on a learned target (an audit with no
 * definition), a destructive test whose call could not have lost a record
 * holds nothing. Pure.
 *
 * @module
 */
import type { Rule } from "../rule.ts";
import { leftStateAlone } from "../_observe.ts";

/**
 * A learned set (`ToolObservations.learned`) on a seed with no state file,
 * or naming nothing seen and changing no observed state in any run: no
 * pre-existing record was at stake, so a holding behaviour is unknown
 * (fact `nothing_to_change`). Only learned targets carry the fact.
 */
export const nothingToChangeRule: Rule = {
  name: "nothing to change",
  says:
    "a learned argument set on an empty seed, or naming nothing seen and changing nothing: unknown, NOTHING_TO_CHANGE",
  applies: (test) => test === "destructive",
  apply(o, { cmp, defn, tool: t }) {
    if (o.behaviour !== "holds") return;
    const empty = t.learned === "empty_seed";
    if (
      !empty &&
      !(t.learned === "names_nothing" && leftStateAlone(cmp, defn, t.once))
    ) return;
    o.behaviour = "unknown";
    o.blockers.unshift("NOTHING_TO_CHANGE");
    o.facts.nothing_to_change = true;
    o.details.unshift(
      empty
        ? "nothing to change: the learned seed holds no state file, so no pre-existing record could be lost"
        : "nothing to change: no argument names a record the seed holds (every value generated) and the call changed nothing",
    );
  },
};
