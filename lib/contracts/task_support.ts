/**
 * Whether a listed tool answers only through the MCP task protocol. One
 * rule for `verity run` (not called: TASK_REQUIRED) and `verity reality`
 * (skipped: `task_required`). Pure.
 *
 * @module
 */

/** Why such a tool is not called, in words. */
export const TASK_REQUIRED_MESSAGE =
  "execution.taskSupport is required: the tool answers only through the task protocol, which verity does not speak";

/**
 * Whether a tool's raw listing declares `execution.taskSupport: "required"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(requiresTask({ execution: { taskSupport: "required" } }), true);
 * assert.equal(requiresTask({ execution: { taskSupport: "optional" } }), false);
 * assert.equal(requiresTask({}), false);
 * ```
 */
export function requiresTask(raw: Readonly<Record<string, unknown>>): boolean {
  const execution = raw.execution;
  return execution !== null && typeof execution === "object" &&
    (execution as { taskSupport?: unknown }).taskSupport === "required";
}
