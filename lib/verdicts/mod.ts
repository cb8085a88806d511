/**
 * Verdicts: the pure engine that judges each tool's hints from the recorded
 * sessions, and the verdict types shared by the runner and the reports.
 *
 * @module
 */
export * from "./engine.ts";
export * from "./types.ts";
export * from "./process_memory.ts";
export * from "./overlap.ts";
export * from "./check.ts";
export * from "./battery.ts";
