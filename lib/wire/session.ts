/**
 * The MCP session opening every verity session shares: spawn, `initialize`,
 * `notifications/initialized`, `tools/list` to the last page.
 *
 * Requires `--allow-run`.
 *
 * @module
 */
import type { WireFailure } from "./frames.ts";
import { boundSize } from "./bound.ts";
import { isMcpClient, type McpClient } from "./client.ts";
import {
  type SpawnSpec,
  StdioClient,
  type StdioClientOptions,
} from "./stdio_client.ts";
import { VERSION } from "../version.ts";

/** The protocol revision verity speaks. */
export const PROTOCOL_VERSION = "2025-11-25";

/** verity's client identity in `initialize`. */
export const CLIENT_INFO = { name: "verity", version: VERSION };

/** One `tools/list` page: which frame carried it. */
export interface ListPage {
  /** Index into the client's frames of the response. */
  frameIndex: number;
  /** The cursor sent to obtain it (absent for the first page). */
  cursor?: string;
}

/** Options for {@linkcode openSession}. */
export interface OpenSessionOptions extends StdioClientOptions {
  /**
   * Timeout for each request, in milliseconds.
   * @default {30000}
   */
  timeoutMs?: number;
  /**
   * Most `tools/list` pages followed before giving up.
   * @default {1000}
   */
  maxPages?: number;
  /**
   * Milliseconds the whole listing (every page) may take, on top of the
   * per-answer timeout: a server that drips pages just inside the timeout
   * is stopped here.
   * @default {timeoutMs}
   */
  listDeadlineMs?: number;
}

/** Most characters of `serverInfo` kept (as JSON text); longer is a marker. */
export const MAX_SERVER_INFO_CHARS = 64 * 1024;

/** An opened session, or the reason it could not be opened. */
export interface OpenedSession {
  client: McpClient;
  /** Frame index of the initialize response, when one came. */
  initializeFrame: number | null;
  /** The server's `serverInfo`, as sent. */
  serverInfo: unknown;
  pages: ListPage[];
  /** Set when the opening failed (the client is still to be closed). */
  failure: WireFailure | null;
}

/**
 * Open a session: spawn (or take a started client, e.g. an
 * {@linkcode HttpClient}), initialize (advertising no roots, sampling or
 * elicitation), send `notifications/initialized`, list every tool page.
 */
export async function openSession(
  spec: SpawnSpec | McpClient,
  options: OpenSessionOptions = {},
): Promise<OpenedSession> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxPages = options.maxPages ?? 1000;
  const listDeadlineMs = options.listDeadlineMs ?? timeoutMs;
  const client = isMcpClient(spec) ? spec : StdioClient.start(spec, options);
  const out: OpenedSession = {
    client,
    initializeFrame: null,
    serverInfo: null,
    pages: [],
    failure: null,
  };
  const init = await client.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: CLIENT_INFO,
  }, timeoutMs);
  if (init.status !== "ok") {
    out.failure = init.status === "unknown" ? init.failure : {
      reason: "closed",
      message: `initialize failed: ${JSON.stringify(init.error).slice(0, 200)}`,
    };
    // A server that died or went silent at start: the sandbox's part in it.
    const cause = isMcpClient(spec)
      ? null
      : spec.explain?.(client.stderr().text) ?? null;
    if (cause !== null) {
      out.failure = {
        ...out.failure,
        message: `${out.failure.message}; ${cause}`,
      };
    }
    return out;
  }
  out.initializeFrame = init.frameIndex;
  const r = init.result;
  out.serverInfo = typeof r === "object" && r !== null
    ? boundSize(
      (r as Record<string, unknown>).serverInfo ?? null,
      MAX_SERVER_INFO_CHARS,
    )
    : null;
  client.notify("notifications/initialized");
  const seen = new Set<string>();
  let cursor: string | undefined;
  const listStart = client.now();
  const listingLate = (): WireFailure => ({
    reason: "deadline",
    message: `tools/list did not finish within ${
      (listDeadlineMs / 1000).toFixed(1)
    } s (${out.pages.length} page(s) received)`,
  });
  while (true) {
    const left = listDeadlineMs - (client.now() - listStart);
    if (left <= 0) {
      out.failure = listingLate();
      return out;
    }
    if (out.pages.length >= maxPages) {
      out.failure = {
        reason: "closed",
        message: `tools/list returned more than ${maxPages} pages`,
      };
      return out;
    }
    const res = await client.request(
      "tools/list",
      cursor === undefined ? {} : { cursor },
      Math.min(timeoutMs, left),
    );
    if (res.status === "unknown" && res.failure.reason === "timeout") {
      if (client.now() - listStart >= listDeadlineMs - 1) {
        out.failure = listingLate();
        return out;
      }
    }
    if (res.status !== "ok") {
      out.failure = res.status === "unknown" ? res.failure : {
        reason: "closed",
        message: `tools/list failed: ${
          JSON.stringify(res.error).slice(0, 200)
        }`,
      };
      return out;
    }
    out.pages.push({
      frameIndex: res.frameIndex,
      ...(cursor === undefined ? {} : { cursor }),
    });
    const next = typeof res.result === "object" && res.result !== null
      ? (res.result as Record<string, unknown>).nextCursor
      : undefined;
    if (next === undefined || next === null) break;
    if (typeof next !== "string") {
      out.failure = {
        reason: "closed",
        message: "tools/list nextCursor is not a string",
      };
      return out;
    }
    if (seen.has(next)) {
      out.failure = {
        reason: "closed",
        message: `tools/list cursor loop: cursor ${
          JSON.stringify(next)
        } repeated`,
      };
      return out;
    }
    seen.add(next);
    cursor = next;
  }
  return out;
}
