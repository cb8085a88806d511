/**
 * The relay that lets a server in its own network namespace (bubblewrap)
 * reach the run's database on a loopback port: the outer half of
 * `relay_in.ts --out`. The launch (`lib/sandbox/build_launch.ts`) holds the
 * server at start on a FIFO `gate` (bubblewrap `--block-fd`);
 * {@linkcode PortRelay.start} waits for the sandbox's namespace and starts
 * the inner relay there, which listens on the database's port, pipes each
 * connection to its Unix socket and opens the gate (see `relay_in.ts`). That
 * port is the only thing the server can reach.
 *
 * Requires `--allow-run` (nsenter, deno), `--allow-read` (/proc).
 *
 * @module
 */
import { lastLine, sandboxNetns, startRelayIn } from "./_netns.ts";
import type { ServerProcess } from "./server_process.ts";
import type { PortRelaySpec } from "./spawn_spec.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The outer half of one server's database relay.
 *
 * @example
 * ```ts ignore
 * const relay = PortRelay.start(spec.portRelay, child.pid, (why) => abort(why), 30_000);
 * // … the session …
 * await relay.close();
 * ```
 */
export class PortRelay {
  #spec: PortRelaySpec;
  #inner: ServerProcess | null = null;
  #closed = false;

  private constructor(spec: PortRelaySpec) {
    this.#spec = spec;
  }

  /**
   * Start relaying for our child `localPid` (the contained launch line):
   * in the background, wait (up to `timeoutMs`) for its sandbox's network
   * namespace, then start the inner relay. `onFail` gets a one-line reason
   * when the relay cannot start or exits while not closed: the server
   * then has no database, and the session should end.
   */
  static start(
    spec: PortRelaySpec,
    localPid: number,
    onFail: (message: string) => void,
    timeoutMs = 30_000,
  ): PortRelay {
    const r = new PortRelay(spec);
    r.#run(localPid, onFail, timeoutMs).catch((e) =>
      onFail(`the database relay failed: ${(e as Error).message}`)
    );
    return r;
  }

  async #run(
    localPid: number,
    onFail: (message: string) => void,
    timeoutMs: number,
  ): Promise<void> {
    const t0 = performance.now();
    let pid: number | null = null;
    while (!this.#closed) {
      pid = sandboxNetns(localPid);
      if (pid !== null) break;
      if (performance.now() - t0 > timeoutMs) {
        onFail(
          `the server's sandbox had no network namespace of its own within ${
            (timeoutMs / 1000).toFixed(1)
          } s: no relay to its database`,
        );
        return;
      }
      await sleep(5);
    }
    if (this.#closed || pid === null) return;
    const { gate, connect } = this.#spec;
    const inner = startRelayIn(
      pid,
      ["--out", gate, ...connect.map((c) => `${c.port}=${c.socket}`)],
      {
        net: [
          ...connect.map((c) => `127.0.0.1:${c.port}`),
          ...connect.map((c) => `unix:${c.socket}`),
        ],
        read: [gate, ...connect.map((c) => c.socket)],
        write: [gate, ...connect.map((c) => c.socket)],
      },
    );
    this.#inner = inner;
    if (inner.spawnError !== null) {
      onFail(`the database relay could not start: ${inner.spawnError}`);
      return;
    }
    const status = await inner.status!;
    if (this.#closed) return;
    const out = lastLine(inner);
    onFail(
      `the relay to the database inside the server's network namespace exited (${
        status.signal ? `signal ${status.signal}` : `code ${status.code}`
      })${out ? `: ${out}` : ""}`,
    );
  }

  /** Stop the inner relay (the server is stopping or gone) and remove the gate. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#inner?.close(200);
    await Deno.remove(this.#spec.gate).catch(() => {});
  }
}
