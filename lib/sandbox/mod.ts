/**
 * The sandbox: choosing a backend (deno permissions, bubblewrap, none),
 * building the exact launch (pure, `build_launch.ts`) and running it with
 * budgets, the permission audit log read back.
 *
 * @module
 */
export * from "./audit_log.ts";
export * from "./build_launch.ts";
export * from "./choose_backend.ts";
export * from "./privilege.ts";
export * from "./sandbox.ts";
export * from "./types.ts";
