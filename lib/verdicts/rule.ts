/**
 * A named rule: what every check's observation is also subject to (where
 * the state could not be seen, state kept in process memory). The engine
 * applies the rules of `battery.ts` in order after a check observed. Pure
 * types.
 *
 * @module
 */
import type { TestName } from "../definition/types.ts";
import type { CheckContext } from "./check.ts";
import type { Observation } from "./_observe.ts";

/** One cross-cutting rule, applied to the observation of each test it covers. */
export interface Rule {
  /** Its name in docs and tests. */
  name: string;
  /** What it adds, in words. */
  says: string;
  /** Whether it applies to `test` under verdict rules version `rules`. */
  applies(test: TestName, rules: number): boolean;
  /** Add its blockers, details, facts and evidence to `o`. */
  apply(o: Observation, ctx: CheckContext): void;
}
