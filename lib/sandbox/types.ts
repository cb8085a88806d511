/**
 * The sandbox seam: how the runner asks for a server process to be launched.
 * Pure types. Implemented in `sandbox.ts`.
 *
 * @module
 */
import type { SpawnSpec } from "../wire/stdio_client.ts";

/** Which isolation a server runs under. */
export type SandboxBackend = "deno" | "bubblewrap" | "none";

/** What the runner knows when it launches one server process. */
export interface LaunchRequest {
  /** The command after placeholder substitution (`{deno}` already resolved). */
  command: string[];
  /** Environment the definition declares (already substituted). */
  env: Record<string, string>;
  /** The session's state directory (absolute); the only writable place. */
  stateDir: string;
  /** The definition's directory (absolute): readable, for the server's code. */
  definitionDir: string;
  /** Extra readable paths (absolute). */
  readPaths: string[];
  /**
   * Of `readPaths`, the trees a shim's program runs from (its virtualenv, its
   * install): bound read-only, never handed to the server's uid in an overlay.
   * @default {[]}
   */
  programTrees?: string[];
  /**
   * Directories the server must not see although the read-only root would
   * show them: the run's work directory, which holds the other sessions'
   * state (hidden by a tmpfs under bubblewrap; the deno backend never
   * grants them). The session's own directories are bound back.
   * @default {[]}
   */
  hide?: string[];
  /**
   * The server's working directory (absolute); it must be the definition's
   * directory, the state directory, a read path or inside one of them.
   * @default {the definition's directory}
   */
  cwd?: string;
  /**
   * Declared allowances: Deno `--allow-sys` names, and programs the server
   * may start (a name looked up on PATH, or an absolute path). Everything
   * else stays denied.
   * @default {{ sys: [], run: [] }}
   */
  allow?: Allowance;
  /**
   * Unix socket files the server may connect to (absolute), e.g. the run's
   * private PostgreSQL socket: deno grants read and write on each socket
   * file (what connecting needs), bubblewrap binds each one in.
   * @default {[]}
   */
  sockets?: string[];
  /**
   * Loopback TCP ports the server may connect to, e.g. the run's private
   * PostgreSQL on 127.0.0.1 (`listen = "tcp"`), each with the Unix socket
   * (absolute) that serves the same thing on the host: deno grants
   * `--allow-net=127.0.0.1:<port>` and nothing else; under bubblewrap (its
   * own network namespace, nothing but loopback) a relay listens on
   * 127.0.0.1:<port> inside that namespace and forwards to the socket
   * (`lib/wire/port_relay.ts`), and the server is held until it listens.
   * @default {[]}
   */
  connect?: { port: number; socket: string }[];
  /** Requested backend. */
  backend: SandboxBackend;
  /** Directory where permission audit logs go (absolute, outside the state dir). */
  evidenceDir: string;
  /** Unique label of this process within the session, used in file names. */
  label: string;
  /**
   * The Deno cache the deno backend runs from (`--cached-only`), prepared
   * beforehand. Passed to the server's Deno as `DENO_DIR`, because `HOME`
   * moves into the state directory and Deno would otherwise look for its
   * cache there.
   * @default {DENO_DIR, else $XDG_CACHE_HOME/deno, else $HOME/.cache/deno (Linux)}
   */
  denoDir?: string;
  /**
   * An HTTP server's loopback port: the only network access it gets is
   * listening there (Deno: `--allow-net` scoped to that port).
   * @default {unset: no network at all}
   */
  listen?: number;
  /**
   * Run the server on an overlay of the whole file system, whose upper
   * layer keeps every write outside the state directory
   * (`Launch.writes`), wherever one can be had (Linux, verity as root).
   * @default {true}
   */
  overlay?: boolean;
}

/** What a definition allows beyond the default sandbox. */
export interface Allowance {
  sys: string[];
  run: string[];
}

/** Kinds of access a Deno permission check (and an attempt) can concern. */
export type AccessKind =
  | "net"
  | "read"
  | "write"
  | "env"
  | "run"
  | "ffi"
  | "sys"
  | "import";

/** What a launch grants: tells a refused attempt from a permitted access. */
export interface LaunchPolicy {
  /** Absolute directories the server may write (the state directory). */
  writable: string[];
  /** Absolute paths the server may read. */
  readable: string[];
  /** Environment variable names the server may read. */
  env: string[];
  /** System-information names granted (`allow.sys`). @default {[]} */
  sys?: string[];
  /** Programs the server may start (absolute paths, `allow.run`). @default {[]} */
  run?: string[];
  /**
   * Network addresses granted, exactly as Deno logs them: an HTTP server's
   * own listening address, or `unix:<socket>` of the run's own database.
   * Checks of exactly these are not network attempts (the database is
   * observed state, not the open world). @default {[]}
   */
  net?: string[];
}

/** A prepared launch: the spawn spec plus where its evidence will appear. */
export interface Launch {
  spawn: SpawnSpec;
  backend: SandboxBackend;
  /** Path of the Deno permission audit log (deno backend only). */
  auditLog: string | null;
  /** Whether this backend can see network attempts. */
  seesNetwork: boolean;
  /** What the launch grants (always set by `prepareLaunch`). */
  policy?: LaunchPolicy;
  /**
   * Which kinds of attempt the backend records as evidence (always set by
   * `prepareLaunch`): deno sees net, read, write, env, ffi, sys and import
   * checks but not run; bubblewrap and none see nothing.
   */
  observes?: AccessKind[];
  /**
   * Writes outside the state directory: the overlay they land in, or why
   * they are not observed (set by `prepareLaunch`).
   */
  writes?: WriteCapture;
}

/**
 * Where one server process's writes outside its state directory went: the
 * layers of its overlay. After the process exits, each layer's `upper`
 * directory holds everything written at or below `at` in the server's
 * view: files and directories created or changed, deletions as whiteouts
 * (character devices 0/0) and opaque directories.
 */
export interface OverlayLayout {
  /**
   * `/` over the host's root file system (`lower: "/"`), and each hidden
   * directory (`/tmp`, `/run`, the auditor's home) over nothing (`lower:
   * null`: everything in it was written by the session).
   */
  layers: { at: string; upper: string; lower: string | null }[];
  /** The overlay's work directory. */
  work: string;
  /** Its mount point (inside the mount namespace only). */
  merged: string;
  /**
   * What the launch itself makes for its mounts (destinations and their
   * ancestors), not the server's changes. Sorted.
   */
  scaffold: string[];
  /**
   * Directories handed to the server's uid inside the overlay (its code:
   * the definition directory and read paths), as a server owns the
   * directory it is installed in; the host's are untouched.
   */
  owned: string[];
}

/** Whether a launch observes writes outside the state directory (an overlay), and why not. */
export type WriteCapture =
  | { observed: true; layout: OverlayLayout }
  | { observed: false; why: string };

/** One permission check recorded by Deno's audit log. */
export interface PermissionEvent {
  permission: string;
  value: string | null;
}
