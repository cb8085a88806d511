/**
 * The MCP wire: JSON-RPC frames, the stdio client (spawns the server) and
 * one session's handshake and `tools/list` pages.
 *
 * @module
 */
export * from "./frames.ts";
export * from "./session.ts";
export * from "./stdio_client.ts";
