/**
 * The `open_world` check: a call declared closed-world must not attempt network access. Pure.
 *
 * @module
 */
import type { Check, CheckContext } from "../check.ts";
import {
  base,
  callFailed,
  callMessages,
  decideRuns,
  networkValues,
  type Observation,
  setupProblem,
} from "../_observe.ts";

function observeOpenWorld({ defn, tool: t }: CheckContext): Observation {
  const o = base();
  if (!defn.seesNetwork) {
    o.blockers.push("NO_NETWORK_OBSERVATION");
    o.details.push("the sandbox backend cannot see network attempts");
    return o;
  }
  const setup = setupProblem([...defn.control, ...t.once]);
  if (setup) {
    o.blockers.push("SETUP_FAILED");
    o.details.push(setup);
    return o;
  }
  const baseline = new Set(defn.control.flatMap(networkValues));
  const perRun = t.once.map((s) => ({
    s,
    attempts: networkValues(s).filter((v) => !baseline.has(v)),
  }));
  o.evidence.network = perRun.map(({ s, attempts }) => ({
    run: s.run,
    attempts,
  }));
  o.facts.network_attempted = perRun.some((r) => r.attempts.length > 0);
  decideRuns(
    o,
    perRun.map(({ s, attempts }) => ({
      run: s.run,
      effect: attempts.length > 0,
      unclassifiedOnly: false,
      failed: callFailed(s),
      messages: callMessages(s),
    })),
    "the call attempted network access",
  );
  if (o.behaviour === "fails") {
    o.details.push(
      `attempted: ${
        [...new Set(perRun.flatMap((r) => r.attempts))].join(", ")
      }`,
    );
  }
  return o;
}

/** A call declared closed-world must not attempt network access. */
export const openWorldCheck: Check = {
  test: "open_world",
  hint: "openWorldHint",
  claim: "FALSE",
  property: "closed_world",
  observes: "control vs once: network permission checks in the Deno audit log",
  observe: observeOpenWorld,
};
