/**
 * The check-failed rule: a check that throws yields INCONCLUSIVE with its
 * own reason and the error as evidence, not a crashed run. Pure.
 *
 * @module
 */
import type { TestName } from "../../definition/types.ts";
import { base, type Observation } from "../_observe.ts";
import { CHECKS } from "../battery.ts";

/**
 * The observation of a check that threw: unknown, CHECK_FAILED with
 * `check_error` as evidence (rules version 4 on; before, SETUP_FAILED).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const o = checkFailed("read_only", new TypeError("no snapshot"), 4);
 * assert.deepEqual(o.blockers, ["CHECK_FAILED"]);
 * assert.equal(o.facts.observed, "read_only=unknown");
 * ```
 */
export function checkFailed(
  test: TestName,
  e: unknown,
  rules: number,
): Observation {
  const o = base();
  const message = e instanceof Error ? e.message : String(e);
  if (rules >= 4) {
    o.blockers.push("CHECK_FAILED");
    o.details.push(`the ${test} check failed: ${message}`);
    o.evidence.check_error = {
      check: test,
      name: e instanceof Error ? e.name : typeof e,
      message,
    };
  } else {
    o.blockers.push("SETUP_FAILED");
    o.details.push(`evidence incomplete: ${message}`);
  }
  o.facts.observed = `${CHECKS[test].property}=unknown`;
  return o;
}
