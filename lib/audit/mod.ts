/**
 * Auditing published servers: where a target's code comes from (npm
 * pins, tarballs, local checkouts), preparing and checking the offline cache,
 * and `verity init`'s plan for a client's MCP server entry.
 *
 * Effectful: `fetch.ts` (network, npm), `local.ts` and `tarball.ts` (disk).
 * Pure: `init_plan.ts`, `init_template.ts`, `mcp_config.ts`, `prepared.ts`,
 * `source.ts` parsing.
 *
 * @module
 */
export * from "./fetch.ts";
export * from "./init.ts";
export * from "./init_plan.ts";
export * from "./init_template.ts";
export * from "./local.ts";
export * from "./mcp_config.ts";
export * from "./prepared.ts";
export * from "./source.ts";
export * from "./tarball.ts";
