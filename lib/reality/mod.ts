/**
 * The reality check: realistic arguments generated from each tool's
 * `inputSchema`, read-only calls, and rules that judge whether answers look
 * like real data. Pure: generation, planning, rules, scoring, rendering.
 * Effectful: `runner.ts` (calls a live server) and `target.ts`.
 *
 * @module
 */
export * from "./formats.ts";
export * from "./generate.ts";
export * from "./name_hints.ts";
export * from "./pattern.ts";
export * from "./plan.ts";
export * from "./prng.ts";
export * from "./refusal.ts";
export * from "./render.ts";
export * from "./report.ts";
export * from "./rules.ts";
export * from "./runner.ts";
export * from "./schema_validate.ts";
export * from "./score.ts";
export * from "./target.ts";
