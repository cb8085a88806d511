/**
 * `verity init`: start a server sandboxed (through the launcher), list its
 * tools and write a starting `target.toml`, from a command line or a
 * client's MCP configuration entry. Above the launcher.
 *
 * Effectful: `init.ts`. Pure: `init_plan.ts`, `init_template.ts`,
 * `mcp_config.ts`.
 *
 * @module
 */
export * from "./init.ts";
export * from "./init_plan.ts";
export * from "./init_template.ts";
export * from "./mcp_config.ts";
