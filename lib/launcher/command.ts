/**
 * The command launcher: how `verity tools`, `verity capture` and
 * `verity reality -- <command...>` start a server given as a bare command
 * line, with no definition. Sandboxed by default, by the same policy as an
 * audit (`deno run` commands under the deno backend, anything else under
 * bubblewrap), on a scratch state directory of its own that is removed
 * afterwards; `--no-sandbox` runs the command as given with the caller's
 * basic environment.
 *
 * A package runner (`npx`, `npm exec`, `pnpm dlx`, `bunx`) runs the way a
 * prepared target does: its package pinned and fetched once into verity's
 * cache (`lib/prepare/npx.ts`), then started by Deno from there, offline.
 * `uvx`, `pipx run` and `docker run` are refused at once, saying what to
 * install instead.
 *
 * Requires `--allow-read`, `--allow-write` (the scratch directory),
 * `--allow-run` (the bubblewrap probe) and `--allow-env`.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { InputError, PrepareError, ServerError } from "../errors.ts";
import {
  chooseBackend,
  prepareLaunch,
  probeBackends,
  resolveDeno,
} from "../sandbox/sandbox.ts";
import { isDenoRun } from "../sandbox/choose_backend.ts";
import type { Allowance, Launch, SandboxBackend } from "../sandbox/types.ts";
import type { SpawnSpec } from "../wire/stdio_client.ts";
import { SandboxError } from "../sandbox/errors.ts";
import { markOwner } from "../common/owner.ts";
import { findExecutable } from "../common/executable.ts";
import { exists } from "../common/exists.ts";
import { isWithin } from "../common/paths.ts";
import { parsePackageRun } from "../prepare/source.ts";
import { type ReadyPackage, readyPackageRun } from "../prepare/npx.ts";
import type { PreparedRun } from "../prepare/local.ts";

const readied = new Map<string, Promise<ReadyPackage>>();

/** Options for {@linkcode launchCommand}. */
export interface CommandLaunchOptions {
  /**
   * `--no-sandbox`: run the command as given.
   * @default {false}
   */
  noSandbox?: boolean;
  /**
   * The command name that prefixes refusals.
   * @default {"verity"}
   */
  commandName?: string;
  /**
   * `--offline`: a package runner's package must be in verity's cache
   * already (nothing is pinned or fetched).
   * @default {false}
   */
  offline?: boolean;
  /**
   * Where the one networked step of a package runner says what it does.
   * @default {(line) => console.error(line)}
   */
  say?: (line: string) => void;
  /**
   * The directory the server may write (absolute, existing), kept as it is
   * after the session (`verity guard --state DIR`).
   * @default {a scratch directory, removed by dispose}
   */
  stateDir?: string;
  /**
   * A definition's allowances (`allow.sys`, `allow.run`) and extra
   * readable paths (absolute), for a sandboxed server.
   * @default {none}
   */
  allow?: Allowance;
  readPaths?: string[];
}

/**
 * Why a command that fetches and starts a program this sandbox cannot
 * (PyPI and image registries are out of reach, and a launcher that starts
 * a child is refused) cannot run, and what to do instead; null for any
 * other command. Pure.
 *
 * @example
 * ```ts
 * console.assert(runnerRefusal(["uvx", "mcp-server-time"], false)!.includes("uv tool install mcp-server-time"));
 * console.assert(runnerRefusal(["python3", "server.py"], true) === null);
 * ```
 */
export function runnerRefusal(
  command: readonly string[],
  installed: boolean,
): string | null {
  const [program = "", ...rest] = command;
  const base = program.slice(program.lastIndexOf("/") + 1);
  const uv = base === "uvx" || (base === "uv" && rest[0] === "tool");
  const pipx = base === "pipx" && rest[0] === "run";
  const pkg =
    rest.slice(base === "uvx" ? 0 : pipx ? 1 : 2).find((a) =>
      !a.startsWith("-")
    ) ?? "<package>";
  const missing = installed ? "" : ` (${base} is not installed here either)`;
  if (uv || pipx) {
    return `${
      command.slice(0, uv && base === "uv" ? 3 : pipx ? 2 : 1).join(" ")
    } fetches ${pkg} from PyPI and starts it as a child process: the sandbox has no network and lets no program start another${missing}. Install it first (\`uv tool install ${pkg}\` or \`pipx install ${pkg}\`) and give its installed command after -- (e.g. ~/.local/bin/${pkg}), or pass --no-sandbox to run it as given`;
  }
  // A package runner left here named no npm package (parsePackageRun).
  const sub = `${base} ${rest[0] ?? ""}`;
  if (
    ["npx", "pnpx", "bunx"].includes(base) ||
    ["npm exec", "npm x", "pnpm dlx", "yarn dlx", "bun x"].includes(sub)
  ) {
    return `${base} here names no npm package verity can pin (a path, a URL, a shell line with -c, or nothing): verity fetches npm packages by name and version (npx -y <package>[@<version>]); install the server and give its command after --, or pass --no-sandbox to run it as given`;
  }
  if (["docker", "podman", "nerdctl"].includes(base) && rest[0] === "run") {
    return `${base} run starts a container through a daemon and an image registry, which the sandbox hides (no network, no /run sockets)${missing}; verity runs the server's own command: give that after -- (the image's entrypoint, installed here), or pass --no-sandbox to run the container as given`;
  }
  return null;
}

/** A bare command line made ready to run sandboxed: see {@linkcode resolveCommand}. */
export interface ResolvedCommand {
  /** The command to run (a package runner's: `deno run ... npm:<pkg>@<version>`). */
  command: string[];
  /** The directory the server's code is read from. */
  definitionDir: string;
  /** What a package runner's pin verified (its lock, `{source}`, the Deno cache it runs from), else undefined. */
  prepared: PreparedRun | undefined;
  /** Absolute paths the command line names that exist: readable. */
  readPaths: string[];
}

/**
 * What a bare command runs as under the sandbox: a package runner pinned
 * and fetched into verity's cache (its relative path arguments that exist
 * made absolute), the paths the command line names, and a refusal
 * (`ServerError`, exit 2) for a runner verity cannot run or a program that
 * is not there.
 */
export async function resolveCommand(
  given: string[],
  options: Pick<CommandLaunchOptions, "commandName" | "offline" | "say"> = {},
): Promise<ResolvedCommand> {
  const name = options.commandName ?? "verity";
  const readPaths: string[] = [];
  let command = given;
  let definitionDir = Deno.cwd();
  let prepared: PreparedRun | undefined;
  const run = parsePackageRun(command);
  if (run !== null) {
    const say = options.say ?? ((line: string) => console.error(line));
    let ready;
    try {
      // Pinned and fetched once per process: later servers of the same
      // command (reality starts several) run from the same pin.
      const key = JSON.stringify([run, options.offline === true]);
      let ahead = readied.get(key);
      if (ahead === undefined) {
        ahead = readyPackageRun(run, {
          offline: options.offline === true,
          say: (line) => say(`${name}: ${line}`),
        });
        readied.set(key, ahead);
        ahead.catch(() => readied.delete(key));
      }
      ready = await ahead;
    } catch (e) {
      if (e instanceof InputError) {
        throw new PrepareError(
          `${name}: ${e.message.replace(/^verity: /, "")}`,
        );
      }
      throw e;
    }
    // Its code is in the cache: it runs there, and sees of the working
    // directory only the paths its arguments name (made absolute).
    command = [
      resolveDeno(),
      ...await Promise.all(ready.args.map(async (a, i) => {
        const rel = i >= ready.args.length - run.args.length &&
          !a.startsWith("/") && !a.startsWith("-") &&
          (a === "." || a === ".." || a.includes("/"));
        return rel && await exists(a) ? resolve(a) : a;
      })),
    ];
    definitionDir = ready.lockDir;
    prepared = ready.prepared;
  }
  // What the command line names by absolute path (a directory the server
  // serves, a config file) is readable, as it is to the client that runs it.
  for (const a of command.slice(1)) {
    const p = a.slice(a.indexOf("=") + 1);
    if (
      p.startsWith("/") && !isWithin(p, definitionDir) && await exists(p)
    ) readPaths.push(await Deno.realPath(p));
  }
  const first = command[0] ?? "";
  const found = findExecutable(first, Deno.env.get("PATH") ?? "");
  const refusal = runnerRefusal(command, found !== null);
  if (refusal !== null) throw new ServerError(`${name}: ${refusal}`);
  if (found === null) {
    throw new ServerError(
      `${name}: cannot start ${JSON.stringify(first)}: no such executable`,
    );
  }
  return { command, definitionDir, prepared, readPaths };
}

const HOST_ENV = [
  "PATH",
  "HOME",
  "LANG",
  "TERM",
  "USER",
  "LOGNAME",
  "SHELL",
  "DENO_DIR",
  "NO_COLOR",
];

/**
 * The caller's basic environment (PATH, HOME, ...), which a server run
 * with `noSandbox` gets under `env`; a sandboxed server sees `env` plus the
 * sandbox's minimal base.
 */
function hostEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of HOST_ENV) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** A server command ready to spawn, and how to clean up after it. */
export interface LaunchedCommand {
  spec: SpawnSpec;
  backend: SandboxBackend;
  /** The sandboxed launch (audit log, policy); undefined with `noSandbox`. */
  launch?: Launch;
  /** Remove the scratch directory (after the session is closed). */
  dispose(): Promise<void>;
}

/**
 * Prepare `command` for spawning, sandboxed unless `noSandbox`. Throws
 * `SandboxError` (exit 2) when the policy refuses it, e.g. bubblewrap is
 * unavailable for a non-Deno command, or a `deno run` command carries its
 * own permission flags.
 *
 * @example
 * ```ts ignore
 * const l = await launchCommand(["deno", "run", "server.ts"], {});
 * const s = await openSession(l.spec);
 * await s.client.close();
 * await l.dispose();
 * ```
 */
export async function launchCommand(
  given: string[],
  env: Record<string, string>,
  options: CommandLaunchOptions = {},
): Promise<LaunchedCommand> {
  const name = options.commandName ?? "verity";
  let command = given;
  if (options.noSandbox === true) {
    if (findExecutable(command[0] ?? "", Deno.env.get("PATH") ?? "") === null) {
      throw new ServerError(
        `${name}: cannot start ${
          JSON.stringify(command[0] ?? "")
        }: no such executable`,
      );
    }
    return {
      spec: { command, env: { ...hostEnv(), ...env } },
      backend: "none",
      dispose: () => Promise.resolve(),
    };
  }
  const resolved = await resolveCommand(given, options);
  command = resolved.command;
  const { definitionDir } = resolved;
  const denoDir = resolved.prepared?.denoDir;
  const readPaths = [...options.readPaths ?? [], ...resolved.readPaths];
  const deno = resolveDeno();
  const probe = isDenoRun(command, deno)
    ? { bubblewrap: false, reason: "not probed: a deno run command" }
    : await probeBackends();
  const refine = (e: unknown): never => {
    if (e instanceof SandboxError) {
      throw new SandboxError(
        `${name}: ${e.message.replace(/; pass --no-sandbox.*$/, "")}${
          e.message.includes("--no-sandbox")
            ? "; pass --no-sandbox to run it unsandboxed"
            : " (or pass --no-sandbox to run the command as given)"
        }`,
      );
    }
    throw e;
  };
  let choice;
  try {
    choice = chooseBackend({
      command,
      audit: true,
      bubblewrap: { available: probe.bubblewrap, reason: probe.reason },
      deno,
      source: "server command",
    });
  } catch (e) {
    return refine(e);
  }
  const root = await Deno.makeTempDir({ prefix: "verity-cmd-" });
  await markOwner(root);
  const dispose = () => Deno.remove(root, { recursive: true }).catch(() => {});
  try {
    const state = options.stateDir ?? join(root, "state");
    if (options.stateDir === undefined) await Deno.mkdir(state);
    const launch = prepareLaunch({
      command,
      env,
      stateDir: state,
      definitionDir,
      readPaths,
      ...(options.allow ? { allow: options.allow } : {}),
      backend: choice.backend,
      evidenceDir: join(root, "evidence"),
      label: "server",
      ...(denoDir === undefined ? {} : { denoDir }),
    });
    return { spec: launch.spawn, backend: launch.backend, launch, dispose };
  } catch (e) {
    await dispose();
    return refine(e);
  }
}
