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
import { HttpClient } from "./http_client.ts";
import { ServerProcess } from "./server_process.ts";
import { PortRelay } from "./port_relay.ts";
import { deathMessage } from "./stderr_tail.ts";
import {
  children,
  lastLine,
  procPid,
  sandboxNetns,
  startRelayIn,
} from "./_netns.ts";
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
  // Never hand out the same port twice in one verity process: two parallel
  // sessions must not race for one port (the OS may offer a just-closed
  // port again).
  for (let i = 0; i < 100; i++) {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    if (HANDED_OUT.has(port)) continue;
    HANDED_OUT.add(port);
    return port;
  }
  throw new Error("no fresh loopback port after 100 tries");
}

const HANDED_OUT = new Set<number>();

/** Options for {@linkcode startLocalHttp}. */
export interface LocalHttpOptions {
  /**
   * The server runs in its own network namespace (bubblewrap
   * `--unshare-net`): reach it through a relay. A relay process entered
   * into that namespace (nsenter) serves a Unix socket in `relayDir`; verity
   * listens on 127.0.0.1:<port> itself and pipes each connection there.
   * @default {unset: the server listens on the host's loopback}
   */
  relayDir?: string;
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
  const relay = options.relayDir === undefined
    ? null
    : new Relay(options.relayDir, port);
  // A server held until the relay to its database listens (port_relay.ts).
  let dbRelayError: string | null = null;
  const dbRelay = spawn.portRelay === undefined || server.pid === null
    ? null
    : PortRelay.start(spawn.portRelay, server.pid, (message) => {
      dbRelayError ??= message;
      server.kill();
    }, startTimeoutMs);
  server.status?.finally(() => dbRelay?.close()).catch(() => {});
  const client = new HttpClient(url, {
    server,
    cleanup: async () => {
      await relay?.close();
      await dbRelay?.close();
    },
  });
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
      return fail({
        reason: dbRelayError !== null ? "spawn_failed" : "exited",
        message: dbRelayError ?? deathMessage(
          `server exited before listening on port ${port}`,
          server.exited.code,
          server.exited.signal,
          server.output().text,
        ),
      });
    }
    const ready = relay !== null
      ? await relay.step(server.pid!)
      : await listening(port, server.pid!);
    if (ready === true) return client;
    if (typeof ready === "string") {
      return fail({ reason: "spawn_failed", message: ready });
    }
    if (performance.now() - t0 > startTimeoutMs) {
      return fail({
        reason: "timeout",
        message: `server did not listen on 127.0.0.1:${port}${
          relay !== null ? " inside its sandbox" : ""
        } within ${(startTimeoutMs / 1000).toFixed(1)} s`,
      });
    }
    await sleep(25);
  }
}

/** Inodes of sockets listening on `port` (any address), from /proc/net. */
function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = Deno.readTextFileSync(f);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== "0A") continue;
      if (cols[1]!.split(":")[1] === hex) out.add(cols[9]!);
    }
  }
  return out;
}

/**
 * Whether our child `localPid` listens on `port`: a string when another
 * process took the port (it was free when picked), found by the socket's
 * inode among the fds of our child's process tree; when /proc cannot tell,
 * the listener is taken for ours.
 */
async function listening(
  port: number,
  localPid: number,
): Promise<boolean | string> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
  } catch {
    return false;
  }
  const inodes = listeningInodes(port);
  const root = procPid(localPid);
  if (inodes.size === 0 || root === null) return true;
  const queue = [root];
  for (let i = 0; i < queue.length && i < 256; i++) {
    const pid = queue[i]!;
    try {
      for (const e of Deno.readDirSync(`/proc/${pid}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(
            Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`),
          );
          if (m && inodes.has(m[1]!)) return true;
        } catch {
          // closed meanwhile
        }
      }
      queue.push(...children(pid));
    } catch {
      // gone or not ours to read
    }
  }
  return `port ${port} was taken by another process before the server listened on it`;
}

/**
 * The two halves of the relay to a server in its own network namespace:
 * the inner process (nsenter into the namespace; `relay_in.ts`) and the
 * host listener on 127.0.0.1:<port> in this process.
 */
class Relay {
  #dir: string;
  #port: number;
  #socket: string;
  #inner: ServerProcess | null = null;
  #listener: Deno.Listener | null = null;
  #conns = new Set<Deno.Conn>();

  constructor(dir: string, port: number) {
    this.#dir = dir;
    this.#port = port;
    this.#socket = `${dir}/relay-${port}.sock`;
  }

  /** One step of starting: true when ready, a string when it cannot work. */
  async step(serverPid: number): Promise<boolean | string> {
    if (this.#inner === null) {
      const pid = sandboxNetns(serverPid);
      if (pid === null) return false;
      this.#inner = startRelayIn(pid, [this.#socket, String(this.#port)], {
        net: [`127.0.0.1:${this.#port}`, `unix:${this.#socket}`],
        read: [this.#dir],
        write: [this.#dir],
      });
      if (this.#inner.spawnError !== null) return this.#inner.spawnError;
      return false;
    }
    if (this.#inner.exited !== null) {
      const out = lastLine(this.#inner);
      return `the relay into the sandbox's network namespace exited${
        out ? `: ${out}` : ""
      }`;
    }
    try {
      (await Deno.connect({ transport: "unix", path: this.#socket })).close();
    } catch {
      return false;
    }
    this.#listen();
    return true;
  }

  #listen(): void {
    const l = Deno.listen({ hostname: "127.0.0.1", port: this.#port });
    this.#listener = l;
    (async () => {
      for await (const conn of l) {
        this.#conns.add(conn);
        Deno.connect({ transport: "unix", path: this.#socket }).then(
          async (inner) => {
            this.#conns.add(inner);
            await Promise.race([
              conn.readable.pipeTo(inner.writable).catch(() => {}),
              inner.readable.pipeTo(conn.writable).catch(() => {}),
            ]);
            for (const c of [conn, inner]) this.#drop(c);
          },
          () => this.#drop(conn),
        );
      }
    })().catch(() => {}); // the listener closed
  }

  #drop(c: Deno.Conn | Deno.Listener): void {
    this.#conns.delete(c as Deno.Conn);
    try {
      c.close();
    } catch {
      // closed
    }
  }

  async close(): Promise<void> {
    if (this.#listener !== null) this.#drop(this.#listener);
    for (const c of this.#conns) this.#drop(c);
    await this.#inner?.close(500);
  }
}
