/**
 * The definition launcher: the one way every command starts a server from a
 * definition. Opening one gathers the facts once (a prepared target's
 * verified cache and `{source}`, the deno and python binaries, whether
 * bubblewrap works here, the backend the policy allows); then each session
 * resets its state and launches processes from the same setup.
 *
 * `verity run` (the runner), `verity reality <target>` and `verity init` all
 * start servers through {@linkcode openLauncher}; the request itself is
 * assembled in the pure `request.ts`.
 *
 * Requires `--allow-read`, `--allow-write` (state and evidence directories),
 * `--allow-run` (the bubblewrap probe, python) and `--allow-env`.
 *
 * @module
 */
import { PrepareError } from "../errors.ts";
import {
  type CacheOptions,
  type PreparedRun,
  resolvePreparedRun,
} from "../prepare/local.ts";
import {
  chooseBackend,
  prepareLaunch,
  probeBackends,
  resolveDeno,
  resolveNode,
  resolvePython,
} from "../sandbox/sandbox.ts";
import type {
  Launch,
  LaunchRequest,
  SandboxBackend,
} from "../sandbox/types.ts";
import { resetState } from "../state_io/reset.ts";
import type { McpClient } from "../wire/client.ts";
import type { SpawnSpec } from "../wire/stdio_client.ts";
import { freeLoopbackPort, startLocalHttp } from "../wire/local_http.ts";
// Types only: the cluster module (and the `pg` driver under it, ~40 ms to
// load) is loaded by startState, for a definition with a postgres adapter.
import type { PostgresCluster } from "../state_io/postgres_cluster.ts";
import {
  commandForChoice,
  type LaunchableDefinition,
  launchRequest,
  type LaunchSetup,
  needsBubblewrapProbe,
  type PlaceholderValues,
  placeholderValues,
  serverUrl,
  type SessionDatabase,
  type SessionDirs,
  usesNode,
  usesPython,
} from "./request.ts";

export type { LaunchableDefinition, LaunchSetup, SessionDirs };

/** The definition's postgres adapters. */
function postgresAdapters(
  def: Pick<LaunchableDefinition, "adapters">,
): LaunchableDefinition["adapters"] {
  return def.adapters.filter((a) => a.kind === "postgres");
}

/** One started server process: its launch, and what `openSession` takes. */
export interface StartedServer {
  launch: Launch;
  /** The spawn spec (stdio), or a client of the started HTTP server. */
  target: SpawnSpec | McpClient;
  /** `transport = "http"`: the URL it listens on; null for stdio. */
  url: string | null;
}

/** Options for {@linkcode openLauncher}. */
export interface LauncherOptions {
  /**
   * `--no-sandbox`: run the server without a sandbox.
   * @default {false}
   */
  noSandbox?: boolean;
  /**
   * Apply the audit policy (a definition may not declare `sandbox = "none"`).
   * @default {definition.kind === "target"}
   */
  audit?: boolean;
  /**
   * Where the prepared cache (`.verity/`) lives.
   * @default {{ root: "<cwd>/.verity" }}
   */
  cache?: CacheOptions;
  /**
   * The command name that prefixes refusals about the prepared cache.
   * @default {"verity"}
   */
  commandName?: string;
  /**
   * What a package runner's pin verified moments ago (`readyPackageRun`):
   * a learned target whose `[source]` pins that package runs from it
   * (`verity run --audit -- npx ...`) instead of its own prepared entry.
   * @default {the target's entry in `.verity/prepared.json`}
   */
  prepared?: PreparedRun;
}

/**
 * Starts the servers of one definition: resets a session's state and builds
 * the sandboxed launch of each process, all from one {@linkcode LaunchSetup}.
 */
export class DefinitionLauncher {
  #postgres: PostgresCluster | null = null;
  /**
   * Told of every launch with its session's state directory (the run's
   * observer of writes outside the declared state reads each overlay).
   * @default {null}
   */
  watcher: { launched(stateDir: string, launch: Launch): void } | null = null;

  /** Use {@linkcode openLauncher}; this constructor takes facts already gathered. */
  constructor(
    /** The definition whose servers this launcher starts. */
    readonly definition: LaunchableDefinition,
    /** The facts every launch is built from. */
    readonly setup: LaunchSetup,
    /**
     * What `verity prepare` verified for a target with a `[source]` (its
     * servers run only from that cache), or null for a local command.
     */
    readonly prepared: PreparedRun | null = null,
  ) {}

  /** The sandbox backend of every launch. */
  get backend(): SandboxBackend {
    return this.setup.backend;
  }

  /**
   * Fill a new (absent or empty) state directory from the definition's seeds.
   * Requires `--allow-read` and `--allow-write`.
   */
  reset(stateDir: string): Promise<void> {
    return resetState(this.definition, stateDir, { postgres: this.#postgres });
  }

  /**
   * Start what the definition's state lives in beyond files, once per run:
   * for a postgres adapter, a private PostgreSQL cluster under
   * `<workDir>/postgres` with its template seeded (a bad seed is a
   * `DefinitionError`). Nothing for other definitions. Pair with
   * {@linkcode DefinitionLauncher.close}.
   */
  async startState(
    workDir: string,
    progress: ((line: string) => void) | null = null,
  ): Promise<void> {
    if (this.#postgres !== null) return;
    if (postgresAdapters(this.definition).length === 0) return;
    const { clusterFor } = await import("../state_io/postgres_cluster.ts");
    this.#postgres = await clusterFor(this.definition, `${workDir}/postgres`, {
      progress,
    });
  }

  /** The run's PostgreSQL cluster, when started. */
  get postgres(): PostgresCluster | null {
    return this.#postgres;
  }

  /** Drop what a session's reset created outside its state directory (its database). */
  async release(stateDir: string): Promise<void> {
    if (this.#postgres === null) return;
    for (const a of postgresAdapters(this.definition)) {
      await this.#postgres.dropSession(stateDir, a).catch(() => {});
    }
  }

  /** Stop what {@linkcode DefinitionLauncher.startState} started. */
  async close(): Promise<void> {
    const pg = this.#postgres;
    this.#postgres = null;
    await pg?.stop();
  }

  /** The session's database (a postgres adapter, once started), else null. */
  database(stateDir: string): SessionDatabase | null {
    const a = postgresAdapters(this.definition)[0];
    return a && this.#postgres ? this.#postgres.connection(stateDir, a) : null;
  }

  /** Every placeholder's value for the session whose state is `stateDir`. */
  placeholders(stateDir: string): PlaceholderValues {
    return placeholderValues(
      this.definition,
      this.setup,
      stateDir,
      undefined,
      this.database(stateDir),
    );
  }

  /** The sandbox request for one process of a session (pure). */
  request(dirs: SessionDirs, label: string): LaunchRequest {
    return launchRequest(
      this.definition,
      this.setup,
      dirs,
      label,
      this.database(dirs.state),
    );
  }

  /**
   * Prepare one server process of a session (the state directory must
   * exist). Throws `SandboxError` when it cannot be launched safely.
   */
  launch(dirs: SessionDirs, label: string): Launch {
    const launch = prepareLaunch(this.request(dirs, label));
    this.watcher?.launched(dirs.state, launch);
    return launch;
  }

  /**
   * Launch one process of a session and make it ready for `openSession`:
   * stdio servers are spawned by the session; an HTTP server gets a free
   * loopback port (`{port}`), is started with network limited to listening
   * there, and is waited for (up to `startTimeoutMs`) until it answers.
   * Throws `SandboxError` when it cannot be launched safely.
   * Requires `--allow-run` and `--allow-net` (loopback) for HTTP.
   */
  async start(
    dirs: SessionDirs,
    label: string,
    startTimeoutMs: number,
  ): Promise<StartedServer> {
    if (this.definition.transport !== "http") {
      const launch = this.launch(dirs, label);
      return { launch, target: launch.spawn, url: null };
    }
    const port = freeLoopbackPort();
    const launch = this.launch({ ...dirs, port }, label);
    const url = serverUrl(this.definition, port)!;
    // Under bubblewrap the server has a network namespace of its own (only
    // loopback): it is reached through a relay (see local_http.ts).
    const ownNetwork = launch.spawn.command.includes("--unshare-net");
    const target = await startLocalHttp(
      launch.spawn,
      url,
      port,
      startTimeoutMs,
      ownNetwork ? { relayDir: dirs.evidence } : {},
    );
    return { launch, target, url };
  }
}

/**
 * Gather the facts for launching a definition's servers: check a prepared
 * target's cache (exit 2 naming `verity prepare` when it is missing or
 * stale), resolve `{deno}`, `{python}` and `{node}`, probe bubblewrap when the choice
 * depends on it, and choose the backend. Refusals are `PrepareError`s (one
 * line, exit 2).
 *
 * Requires `--allow-read`, `--allow-run`, `--allow-env` and `--allow-write`
 * (the bubblewrap probe's temporary directory).
 *
 * @example
 * ```ts ignore
 * const launcher = await openLauncher(await loadDefinition("honest-idempotent"));
 * await launcher.reset(`${work}/state`);
 * const launch = launcher.launch({ state: `${work}/state`, evidence: `${work}/evidence` }, "server");
 * const session = await openSession(launch.spawn);
 * ```
 */
export async function openLauncher(
  def: LaunchableDefinition,
  options: LauncherOptions = {},
): Promise<DefinitionLauncher> {
  const noSandbox = options.noSandbox === true;
  let prepared;
  try {
    prepared = options.prepared ?? await resolvePreparedRun(def, options.cache);
  } catch (e) {
    if (e instanceof PrepareError) {
      throw new PrepareError(
        `${options.commandName ?? "verity"}: ${e.message}`,
      );
    }
    throw e;
  }
  const deno = resolveDeno();
  const facts = {
    deno,
    python: usesPython(def) ? await resolvePython() : "python3",
    source: prepared?.source ?? null,
    denoDir: prepared?.denoDir ?? null,
    node: usesNode(def) ? resolveNode() : null,
    nodeModules: prepared?.nodeModules ?? null,
  };
  const command = commandForChoice(def, facts);
  const probe = needsBubblewrapProbe(def, command, deno, noSandbox)
    ? await probeBackends()
    : { bubblewrap: false, reason: "not probed: the choice does not need it" };
  const choice = chooseBackend({
    declared: def.sandbox ?? undefined,
    command,
    noSandbox,
    audit: options.audit ?? def.kind === "target",
    bubblewrap: { available: probe.bubblewrap, reason: probe.reason },
    deno,
    source: def.file,
  });
  return new DefinitionLauncher(def, {
    ...facts,
    backend: choice.backend,
    why: choice.why,
  }, prepared);
}
