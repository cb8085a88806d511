/**
 * The battery: the five named checks, by test, and the rules every check's
 * observation is then subject to, in order. Pure.
 *
 * @module
 */
import type { TestName } from "../definition/types.ts";
import type { Check } from "./check.ts";
import { concurrentIdempotenceCheck } from "./checks/concurrent_idempotence.ts";
import { destructiveCheck } from "./checks/destructive.ts";
import { openWorldCheck } from "./checks/open_world.ts";
import { readOnlyCheck } from "./checks/read_only.ts";
import { sequentialIdempotenceCheck } from "./checks/sequential_idempotence.ts";
import type { Rule } from "./rule.ts";
import { coverageRule, coverageRuleV2 } from "./rules/coverage.ts";
import { probeRule, processMemoryRule } from "./rules/process_memory.ts";
import { nothingToChangeRule } from "./rules/nothing_to_change.ts";

/** Every check, by the test it runs. */
export const CHECKS: Readonly<Record<TestName, Check>> = {
  sequential_idempotence: sequentialIdempotenceCheck,
  concurrent_idempotence: concurrentIdempotenceCheck,
  read_only: readOnlyCheck,
  destructive: destructiveCheck,
  open_world: openWorldCheck,
};

/** The rules applied after each check, in order (each says which tests and rules versions it covers). */
export const RULES: readonly Rule[] = [
  coverageRuleV2,
  coverageRule,
  processMemoryRule,
  probeRule,
  nothingToChangeRule,
];
