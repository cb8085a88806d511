/**
 * The MCP wire: JSON-RPC frames, the stdio client (spawns the server) and
 * one session's handshake and `tools/list` pages.
 *
 * @module
 */
export * from "./client.ts";
export * from "./frames.ts";
export * from "./http_client.ts";
export * from "./lines.ts";
export * from "./list_tools.ts";
export * from "./local_http.ts";
export * from "./port_relay.ts";
export * from "./redact.ts";
export * from "./server_process.ts";
export * from "./sse.ts";
export * from "./session.ts";
export * from "./spawn_spec.ts";
export * from "./stdio_client.ts";
export * from "./stderr_tail.ts";
