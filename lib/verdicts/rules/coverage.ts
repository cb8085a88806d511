/**
 * The coverage rules: what a verdict cannot claim when state is declared
 * where no adapter looks. Pure.
 *
 * @module
 */
import type { Rule } from "../rule.ts";

/**
 * Coverage (rules version 3 on): no declared location is coverage "none"; a
 * declared `memory:` location is state no adapter can observe
 * (UNOBSERVED_STATE); any other unobserved location is PARTIAL_COVERAGE.
 */
export const coverageRule: Rule = {
  name: "coverage",
  says:
    "no declared location: PARTIAL_COVERAGE (coverage none); a memory: location: UNOBSERVED_STATE; another unobserved location, or a changeset cut short: PARTIAL_COVERAGE",
  applies: (test, rules) => test !== "open_world" && rules >= 3,
  apply(o, { cmp, defn, tool: t }) {
    // A changeset cut short (a budget) may miss what the call changed.
    const cut = [
      ...defn.control,
      ...t.once,
      ...t.twice,
      ...(t.probed ?? []),
      ...(t.concurrent ?? []),
    ].map((s) => cmp.changeset(s)).find((x) => x?.lossy);
    if (cut) {
      o.blockers.push("PARTIAL_COVERAGE");
      o.details.push(
        `writes outside the state directory not read whole: ${
          cut.problems[0] ?? "over a budget"
        }`,
      );
    }
    const c = defn.coverage;
    if (c.locations.length === 0) {
      o.blockers.push("PARTIAL_COVERAGE");
      o.facts.coverage = "none";
      o.details.push(
        "coverage none: the definition declares no state locations (declare where the state lives, or memory:process)",
      );
      return;
    }
    const unseen = c.locations.filter((l) => l.observedBy === null);
    const memory = unseen.filter((l) => l.location.startsWith("memory:"));
    const other = unseen.filter((l) => !l.location.startsWith("memory:"));
    if (memory.length) {
      o.blockers.push("UNOBSERVED_STATE");
      o.details.push(
        `state declared in process memory cannot be observed: ${
          memory.map((l) => l.location).join(", ")
        }`,
      );
    }
    if (other.length) {
      o.blockers.push("PARTIAL_COVERAGE");
      o.details.push(
        `not observed: ${other.map((l) => l.location).join(", ")}`,
      );
    }
  },
};

/**
 * Coverage under rules version 2: every unobserved location (`memory:`
 * included) was PARTIAL_COVERAGE, and no location at all was complete
 * coverage.
 */
export const coverageRuleV2: Rule = {
  name: "coverage (rules version 2)",
  says: "any unobserved location: PARTIAL_COVERAGE",
  applies: (test, rules) => test !== "open_world" && rules < 3,
  apply(o, { defn }) {
    if (defn.coverage.complete) return;
    o.blockers.push("PARTIAL_COVERAGE");
    o.details.push(
      `not observed: ${
        defn.coverage.locations.filter((l) => l.observedBy === null).map((l) =>
          l.location
        ).join(", ")
      }`,
    );
  },
};
