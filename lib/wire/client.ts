/**
 * The transport-neutral face of an MCP client: what every session, runner
 * and command needs from a connection, whether it speaks stdio or HTTP.
 * Both {@linkcode StdioClient} and {@linkcode HttpClient} implement it, so
 * the opening, the contract parser and the checkers see one evidence model.
 *
 * @module
 */
import type { Frame, WireFailure } from "./frames.ts";
import type { ExitInfo, RpcOutcome } from "./stdio_client.ts";

export type { ExitInfo, RpcOutcome };

/** A live MCP connection with its verbatim evidence. */
export interface McpClient {
  /** Every JSON-RPC message in both directions, verbatim, in order. */
  readonly frames: Frame[];
  /** Protocol problems seen (invalid JSON, unmatched ids, HTTP oddities). */
  readonly problems: string[];
  /** The first terminal failure, if any. */
  readonly failure: WireFailure | null;
  /** Milliseconds since the session began, on a monotonic clock. */
  now(): number;
  /** What the server wrote to stderr (local servers), bounded. */
  stderr(): { text: string; dropped: number };
  /** Send a notification (no response expected). */
  notify(method: string, params?: unknown): void;
  /** Send a request; resolves (never rejects) with ok, error or unknown. */
  request(
    method: string,
    params: unknown,
    timeoutMs: number,
  ): Promise<RpcOutcome>;
  /** End the session with `f`: every pending request resolves unknown with it. */
  abort(f: WireFailure): void;
  /** Stop at once: SIGKILL a started server, abort every HTTP stream. */
  kill(): void;
  /** Orderly shutdown of the session (and of a server it started). */
  close(graceMs?: number): Promise<ExitInfo>;
}
