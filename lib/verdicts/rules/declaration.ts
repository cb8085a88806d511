/**
 * The declaration rule: whether a tool's declared hint makes a claim the
 * test can contradict, and if not, why the verdict is NOT_APPLICABLE. Pure.
 *
 * @module
 */
import type { HintName, HintState } from "../../contracts/contracts.ts";
import type { TestName } from "../../definition/types.ts";
import type { Reason } from "../types.ts";
import { CHECKS } from "../battery.ts";

/**
 * Why a test does not apply to a tool's declaration, or null when the
 * declaration is a claim the test can contradict. A read-only claim
 * supersedes the idempotence and destructive tests.
 *
 * @example
 * ```ts ignore
 * declarationReason("destructive", tool); // "NO_DECLARATION" when destructiveHint is absent
 * ```
 */
export function declarationReason(
  test: TestName,
  t: { hints: Readonly<Record<HintName, { state: HintState }>> },
): Reason | null {
  const { hint, claim } = CHECKS[test];
  if (
    test !== "read_only" && test !== "open_world" &&
    t.hints.readOnlyHint.state === "TRUE"
  ) return "SUPERSEDED_BY_READ_ONLY";
  const state: HintState = t.hints[hint].state;
  if (state === "ABSENT") return "NO_DECLARATION";
  if (state === "MALFORMED") return "MALFORMED_DECLARATION";
  if (state !== claim) return "PERMISSIVE_DECLARATION";
  return null;
}
