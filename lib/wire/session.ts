/**
 * The MCP session opening every verity session shares: spawn, `initialize`,
 * `notifications/initialized`, `tools/list` to the last page.
 *
 * Requires `--allow-run`.
 *
 * @module
 */
import {
  PROTOCOL_VERSION,
  type RpcOutcome,
  type WireFailure,
} from "./frames.ts";
import { boundSize } from "./bound.ts";
import type { McpClient } from "./client.ts";
import {
  type SpawnSpec,
  StdioClient,
  type StdioClientOptions,
} from "./stdio_client.ts";
import { VERSION } from "../version.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

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
   * Timeout for each request, in milliseconds; the whole listing (every
   * page) gets as long again, so a server that drips pages just inside the
   * timeout is stopped.
   * @default {30000}
   */
  timeoutMs?: number;
}

/** Most `tools/list` pages followed before giving up. */
const MAX_PAGES = 1000;

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
  const started = !("command" in spec);
  const client = started ? spec : StdioClient.start(spec, options);
  const out: OpenedSession = {
    client,
    initializeFrame: null,
    serverInfo: null,
    pages: [],
    failure: null,
  };
  const fail = (f: WireFailure | string): OpenedSession => {
    out.failure = typeof f === "string" ? { reason: "closed", message: f } : f;
    return out;
  };
  const refused = (method: string, r: RpcOutcome) =>
    fail(
      r.status === "unknown"
        ? r.failure
        : `${method} failed: ${
          JSON.stringify((r as { error: unknown }).error).slice(0, 200)
        }`,
    );
  const init = await client.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: CLIENT_INFO,
  }, timeoutMs);
  if (init.status !== "ok") {
    refused("initialize", init);
    // A server that died or went silent at start: the sandbox's part in it.
    const cause = started ? null : spec.explain?.(client.stderr().text) ?? null;
    return cause === null ? out : fail({
      ...out.failure!,
      message: `${out.failure!.message}; ${cause}`,
    });
  }
  out.initializeFrame = init.frameIndex;
  const r = init.result;
  out.serverInfo = isPlainObject(r)
    ? boundSize(r.serverInfo ?? null, MAX_SERVER_INFO_CHARS)
    : null;
  client.notify("notifications/initialized");
  const seen = new Set<string>();
  let cursor: string | undefined;
  const listStart = client.now();
  const late = () =>
    fail({
      reason: "deadline",
      message: `tools/list did not finish within ${
        (timeoutMs / 1000).toFixed(1)
      } s (${out.pages.length} page(s) received)`,
    });
  while (true) {
    const left = timeoutMs - (client.now() - listStart);
    if (left <= 0) return late();
    if (out.pages.length >= MAX_PAGES) {
      return fail(`tools/list returned more than ${MAX_PAGES} pages`);
    }
    const res = await client.request(
      "tools/list",
      cursor === undefined ? {} : { cursor },
      Math.min(timeoutMs, left),
    );
    if (
      res.status === "unknown" && res.failure.reason === "timeout" &&
      client.now() - listStart >= timeoutMs - 1
    ) return late();
    if (res.status !== "ok") return refused("tools/list", res);
    out.pages.push({
      frameIndex: res.frameIndex,
      ...(cursor === undefined ? {} : { cursor }),
    });
    const next = isPlainObject(res.result) ? res.result.nextCursor : undefined;
    if (next === undefined || next === null) return out;
    if (typeof next !== "string") {
      return fail("tools/list nextCursor is not a string");
    }
    if (seen.has(next)) {
      return fail(
        `tools/list cursor loop: cursor ${JSON.stringify(next)} repeated`,
      );
    }
    seen.add(next);
    cursor = next;
  }
}
