/**
 * Local HTTP servers: a free loopback port for each server process, and a
 * started server reached over Streamable HTTP once it answers.
 *
 * This is an edge module: it spawns processes and opens sockets. Requires
 * `--allow-run` and `--allow-net` (loopback).
 *
 * @module
 */
import type { WireFailure } from "./frames.ts";
import { HttpClient, type HttpClientOptions } from "./http_client.ts";
import { ServerProcess } from "./server_process.ts";
import type { SpawnSpec } from "./stdio_client.ts";

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (the OS picked it).
 *
 * @example
 * ```ts ignore
 * const port = freeLoopbackPort();
 * ```
 */
export function freeLoopbackPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Options for {@linkcode startLocalHttp}. */
export interface LocalHttpOptions extends HttpClientOptions {
  /**
   * Milliseconds between connection attempts while waiting for the server.
   * @default {25}
   */
  pollMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Start `spawn` (a server that listens on `port`) and wait until it accepts
 * connections on 127.0.0.1, up to `startTimeoutMs`; then return a client for
 * `url` that owns the process (closing the client stops it). When the server
 * exits or never answers, the client comes back already failed, with the
 * reason, and the process stopped.
 *
 * @example
 * ```ts ignore
 * const port = freeLoopbackPort();
 * const client = await startLocalHttp(launch.spawn, `http://127.0.0.1:${port}/mcp`, port, 30_000);
 * const session = await openSession(client);
 * ```
 */
export async function startLocalHttp(
  spawn: SpawnSpec,
  url: string,
  port: number,
  startTimeoutMs: number,
  options: LocalHttpOptions = {},
): Promise<HttpClient> {
  const server = ServerProcess.start(spawn);
  const client = new HttpClient(url, { ...options, server });
  const fail = (f: WireFailure) => {
    client.abort(f);
    return client;
  };
  if (server.spawnError !== null) {
    return fail({ reason: "spawn_failed", message: server.spawnError });
  }
  const t0 = performance.now();
  while (true) {
    if (server.exited !== null) {
      const tail = server.output().text.trim().split("\n").slice(-1)[0] ?? "";
      return fail({
        reason: "exited",
        message:
          `server exited (code ${server.exited.code}) before listening on port ${port}${
            tail ? ` (output: ${tail.slice(0, 200)})` : ""
          }`,
      });
    }
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return client;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > startTimeoutMs) {
      return fail({
        reason: "timeout",
        message: `server did not listen on 127.0.0.1:${port} within ${
          (startTimeoutMs / 1000).toFixed(1)
        } s`,
      });
    }
    await sleep(options.pollMs ?? 25);
  }
}
