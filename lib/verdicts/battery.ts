/**
 * The battery: the five named checks, by test. Pure.
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

/** Every check, by the test it runs. */
export const CHECKS: Readonly<Record<TestName, Check>> = {
  sequential_idempotence: sequentialIdempotenceCheck,
  concurrent_idempotence: concurrentIdempotenceCheck,
  read_only: readOnlyCheck,
  destructive: destructiveCheck,
  open_world: openWorldCheck,
};
