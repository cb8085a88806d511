/**
 * The task-required rule: a tool whose listing declares
 * `execution.taskSupport: "required"` answers only through the task
 * protocol, which verity does not speak, so `verity run` does not call it.
 * Its hints are not judged: a claim is INCONCLUSIVE:TASK_REQUIRED (never
 * the server's call error), a test its declaration does not claim stays
 * NOT_APPLICABLE with TASK_REQUIRED beside it. Pure.
 *
 * @module
 */
import type { TestName } from "../../definition/types.ts";
import type { ToolObservations } from "../../history/types.ts";
import type { Verdict } from "../types.ts";
import { CHECKS } from "../battery.ts";
import { declarationReason } from "./declaration.ts";

/**
 * The verdict of a test for a tool that was not called because it needs
 * the task protocol.
 *
 * @example
 * ```ts ignore
 * taskRequiredVerdict("read_only", tool).outcome; // "INCONCLUSIVE:TASK_REQUIRED"
 * ```
 */
export function taskRequiredVerdict(
  test: TestName,
  t: ToolObservations,
  message: string,
): Verdict {
  const { hint, property } = CHECKS[test];
  const na = declarationReason(test, t);
  const observed = `${property}=unknown`;
  return {
    tool: t.tool,
    variant: t.variant,
    test,
    hint,
    declared: t.hints[hint].state,
    outcome: na === null
      ? "INCONCLUSIVE:TASK_REQUIRED"
      : `NOT_APPLICABLE:${na}`,
    kind: na === null ? "INCONCLUSIVE" : "NOT_APPLICABLE",
    reason: na ?? "TASK_REQUIRED",
    secondary: na === null ? [] : ["TASK_REQUIRED"],
    observed,
    overDeclared: false,
    facts: { observed, task_required: true },
    details: [`not called: ${message}`],
    evidence: {},
  };
}
