/**
 * Verdicts: the pure engine that judges each tool's hints from the recorded
 * sessions, and the verdict types shared by the runner and the reports.
 * The engine composes named parts: one check per test (`checks/`), the
 * rules applied after each check (`rules/`: coverage, process memory), the
 * declaration, server-failure and check-failed rules; `battery.ts` lists
 * the checks and rules in order.
 *
 * @module
 */
export * from "./engine.ts";
export * from "./types.ts";
export * from "./process_memory.ts";
export * from "./overlap.ts";
export * from "./check.ts";
export * from "./rule.ts";
export * from "./battery.ts";
export * from "./rules/declaration.ts";
export * from "./rules/check_failed.ts";
export { serverFailedVerdict } from "./rules/server_failure.ts";
export * from "./rules/coverage.ts";
export * from "./rules/process_memory.ts";
export * from "./rules/task_required.ts";
