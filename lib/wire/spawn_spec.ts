/**
 * How a server process is started and how it ended: plain data shared by the
 * stdio client, the HTTP server process and the database relay (types only).
 *
 * @module
 */
import type { StoppedBy } from "./process_group.ts";

/** What a held server needs relayed (`SpawnSpec.portRelay`; see `port_relay.ts`). */
export interface PortRelaySpec {
  /** The FIFO bubblewrap blocks on until the relay listens (`--block-fd`). */
  gate: string;
  /** Each loopback port, and the Unix socket on the host it leads to. */
  connect: { port: number; socket: string }[];
}

/** How to start a server process. */
export interface SpawnSpec {
  /** argv; the first element is the program. */
  command: string[];
  /** The complete environment the server sees (nothing is inherited). */
  env: Record<string, string>;
  /** Working directory. */
  cwd?: string;
  /**
   * Run it inside its own PID namespace that dies with verity (see
   * `contain.ts`); false only for processes verity itself wrote.
   * @default {true}
   */
  contain?: boolean;
  /**
   * The server is held at start in a network namespace of its own
   * (bubblewrap `--block-fd`) until a relay there listens on each loopback
   * port it may connect to, forwarding to a Unix socket on the host (the
   * run's database; see `port_relay.ts`). The relay stops with the server.
   * @default {unset: no relay}
   */
  portRelay?: PortRelaySpec;
  /**
   * The sandbox's part in a failure at start, from the server's stderr
   * (`lib/sandbox/cause.ts`): `openSession` adds it to the reason.
   * @default {unset}
   */
  explain?: (stderr: string) => string | null;
}

/** How the process ended. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** How it was stopped: it exited by itself, after stdin closed, SIGTERM or SIGKILL. */
  stoppedBy: StoppedBy;
}
