/**
 * What a launch is made of, decided once: the placeholder values of a
 * session and the exact {@linkcode LaunchRequest} the sandbox receives. Pure:
 * the facts about the host (the deno and python binaries, the prepared
 * cache, the chosen backend) come in as a {@linkcode LaunchSetup}, gathered
 * by `launcher.ts`.
 *
 * This is the one place where launch options are assembled: a new
 * placeholder, a new field of the sandbox request or a new backend is added
 * here (and its fact gathered in `launcher.ts`), and every command that
 * starts a server picks it up.
 *
 * @module
 */
import type { Definition, PostgresVars } from "../definition/types.ts";
import {
  type PlaceholderValues,
  PROBE_POSTGRES,
  substitute,
} from "../definition/placeholders.ts";
import { isDenoRun } from "../sandbox/choose_backend.ts";
import type { LaunchRequest, SandboxBackend } from "../sandbox/types.ts";

/** What the launcher needs of a definition; a loaded `Definition` has all of it. */
export type LaunchableDefinition = Pick<
  Definition,
  | "kind"
  | "name"
  | "file"
  | "dir"
  | "command"
  | "env"
  | "read"
  | "cwd"
  | "allow"
  | "sandbox"
  | "source"
  | "adapters"
  | "transport"
  | "url"
>;

/** Facts about this machine and this definition, gathered once per command. */
export interface LaunchSetup {
  /** The sandbox every server of this definition runs under. */
  backend: SandboxBackend;
  /** Why that backend, in words (for messages and reports). */
  why: string;
  /** `{deno}`: the deno binary. */
  deno: string;
  /** `{python}`: the real Python interpreter (or "python3" when unused). */
  python: string;
  /** `{source}`: the prepared, verified package directory, or null. */
  source: string | null;
  /** The DENO_DIR Deno servers run from (a prepared target's cache), or null for the default. */
  denoDir: string | null;
  /** `{node}`: the Node.js binary, or null when the definition does not use it. @default {null} */
  node?: string | null;
  /** `{node_modules}`: a prepared Node target's npm install (read-only for the server), or null. @default {null} */
  nodeModules?: string | null;
}

/** A session's scratch directories. */
export interface SessionDirs {
  /** The state directory (exists, reset) the server may write. */
  state: string;
  /** Where the sandbox's evidence (audit logs) goes, outside the state directory. */
  evidence: string;
  /**
   * `{port}`: the loopback port this process listens on (HTTP servers).
   * @default {unset}
   */
  port?: number;
  /**
   * The directory holding every session's directories (the run's work
   * directory): hidden from the server, its own directories bound back.
   * @default {unset}
   */
  siblings?: string;
}

/** The values of every placeholder for one session (the definition module's type). */
export type { PlaceholderValues };

/** A session's database: its placeholders and the socket or port the sandbox must let through. */
export interface SessionDatabase extends PostgresVars {
  /** The Unix socket file of the run's private cluster (null: over TCP). */
  socket: string | null;
  /** The loopback port of the run's private cluster (`listen = "tcp"`), else null. */
  tcpPort?: number | null;
  /** With `tcpPort`: the cluster's Unix socket file behind that port (for a relay). */
  tcpSocket?: string | null;
}

/**
 * Whether a definition mentions `{python}` anywhere a launch substitutes.
 *
 * @example
 * ```ts
 * const def = { command: ["{python}", "server.py"], env: {}, read: [] };
 * console.assert(usesPython(def));
 * ```
 */
export function usesPython(
  def: Pick<Definition, "command" | "env" | "read">,
): boolean {
  return [...def.command, ...Object.values(def.env), ...def.read].some((s) =>
    s.includes("{python}")
  );
}

/**
 * Whether a definition mentions `{node}` in its command.
 *
 * @example
 * ```ts
 * console.assert(usesNode({ command: ["{node}", "{node_modules}/x/cli.js"] }));
 * ```
 */
export function usesNode(def: Pick<Definition, "command">): boolean {
  return def.command.some((s) => s.includes("{node}"));
}

/**
 * The placeholder values of a session whose state lives in `stateDir`.
 *
 * @example
 * ```ts
 * const setup = { backend: "deno" as const, why: "", deno: "/bin/deno", python: "python3", source: null, denoDir: null };
 * const v = placeholderValues({ dir: "/t" }, setup, "/s");
 * console.assert(v.state === "/s" && v.target === "/t");
 * ```
 */
export function placeholderValues(
  def: Pick<Definition, "dir">,
  setup: LaunchSetup,
  stateDir: string,
  port?: number,
  postgres: PostgresVars | null = null,
): PlaceholderValues {
  return {
    ...(port !== undefined ? { port: String(port) } : {}),
    deno: setup.deno,
    python: setup.python,
    state: stateDir,
    target: def.dir,
    source: setup.source,
    ...(setup.node ? { node: setup.node } : {}),
    node_modules: setup.nodeModules ?? null,
    postgres,
  };
}

/**
 * The command as the backend choice sees it: placeholders substituted with a
 * stand-in state directory (the choice never depends on it).
 */
export function commandForChoice(
  def:
    & Pick<Definition, "dir" | "command">
    & Partial<Pick<Definition, "transport">>,
  setup: Omit<LaunchSetup, "backend" | "why">,
): string[] {
  const vars = placeholderValues(
    def,
    { ...setup, backend: "none", why: "" },
    "/state",
    def.transport === "http" ? 1 : undefined,
    PROBE_POSTGRES,
  );
  return def.command.map((c) => substitute(c, vars));
}

/**
 * Whether the backend choice depends on bubblewrap working here: not under
 * `--no-sandbox`, not for a declared deno sandbox, and not for an
 * undeclared `deno run` command.
 *
 * @example
 * ```ts
 * const def = { sandbox: null, command: ["{python}", "s.py"] };
 * console.assert(needsBubblewrapProbe(def, ["/usr/bin/python3", "s.py"], "/bin/deno", false));
 * ```
 */
export function needsBubblewrapProbe(
  def: Pick<Definition, "sandbox">,
  command: readonly string[],
  deno: string,
  noSandbox: boolean,
): boolean {
  if (noSandbox || def.sandbox === "deno" || def.sandbox === "none") {
    return false;
  }
  return def.sandbox === "bubblewrap" || !isDenoRun(command, deno);
}

/**
 * The exact request the sandbox gets for one server process of a session:
 * command and environment with placeholders substituted, `VERITY_STATE_DIR`,
 * read paths, backend, evidence directory and the prepared DENO_DIR.
 * Throws `InputError` for an unknown placeholder or `{source}` without one.
 *
 * @example
 * ```ts
 * const def = { dir: "/t", command: ["{deno}", "run", "server.ts"], env: { DB: "{state}/db" }, read: [] };
 * const setup = { backend: "deno" as const, why: "", deno: "/bin/deno", python: "python3", source: null, denoDir: null };
 * const req = launchRequest(def, setup, { state: "/s", evidence: "/e" }, "server");
 * console.assert(req.command[0] === "/bin/deno" && req.env.DB === "/s/db");
 * ```
 */
export function launchRequest(
  def:
    & Pick<Definition, "dir" | "command" | "env" | "read">
    & Partial<Pick<Definition, "cwd" | "allow">>,
  setup: LaunchSetup,
  dirs: SessionDirs,
  label: string,
  database: SessionDatabase | null = null,
): LaunchRequest {
  const vars = placeholderValues(def, setup, dirs.state, dirs.port, database);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(def.env)) env[k] = substitute(v, vars);
  env.VERITY_STATE_DIR = dirs.state;
  return {
    command: def.command.map((c) => substitute(c, vars)),
    env,
    stateDir: dirs.state,
    definitionDir: def.dir,
    readPaths: [
      ...def.read.map((r) => substitute(r, vars)),
      // A Node target's prepared install (it may sit in a hidden directory).
      ...(setup.nodeModules ? [setup.nodeModules] : []),
    ],
    ...(def.cwd ? { cwd: substitute(def.cwd, vars) } : {}),
    ...(def.allow ? { allow: { sys: def.allow.sys, run: def.allow.run } } : {}),
    ...(database?.socket ? { sockets: [database.socket] } : {}),
    ...(database?.tcpPort && database.tcpSocket
      ? { connect: [{ port: database.tcpPort, socket: database.tcpSocket }] }
      : {}),
    ...(dirs.siblings !== undefined ? { hide: [dirs.siblings] } : {}),
    backend: setup.backend,
    evidenceDir: dirs.evidence,
    label,
    ...(setup.denoDir !== null ? { denoDir: setup.denoDir } : {}),
    ...(dirs.port !== undefined ? { listen: dirs.port } : {}),
  };
}

/**
 * The URL of an HTTP server process listening on `port`, or null for a
 * stdio definition.
 *
 * @example
 * ```ts
 * console.assert(serverUrl({ transport: "http", url: "http://127.0.0.1:{port}/mcp" }, 8123) === "http://127.0.0.1:8123/mcp");
 * ```
 */
export function serverUrl(
  def: Partial<Pick<Definition, "transport" | "url">>,
  port: number,
): string | null {
  if (def.transport !== "http" || !def.url) return null;
  return def.url.replace("{port}", String(port));
}
