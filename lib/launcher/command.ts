/**
 * The command launcher: how `verity tools`, `verity capture` and
 * `verity reality -- <command...>` start a server given as a bare command
 * line, with no definition. Sandboxed by default, by the same policy as an
 * audit (`deno run` commands under the deno backend, anything else under
 * bubblewrap), on a scratch state directory of its own that is removed
 * afterwards; `--no-sandbox` runs the command as given with the caller's
 * basic environment.
 *
 * Requires `--allow-read`, `--allow-write` (the scratch directory),
 * `--allow-run` (the bubblewrap probe) and `--allow-env`.
 *
 * @module
 */
import { join } from "node:path";
import { ServerError } from "../errors.ts";
import {
  chooseBackend,
  prepareLaunch,
  probeBackends,
  resolveDeno,
} from "../sandbox/sandbox.ts";
import { isDenoRun } from "../sandbox/choose_backend.ts";
import type { Launch, SandboxBackend } from "../sandbox/types.ts";
import type { SpawnSpec } from "../wire/stdio_client.ts";
import { SandboxError } from "../sandbox/errors.ts";
import { markOwner } from "../common/owner.ts";
import { findExecutable } from "../common/executable.ts";

/** Options for {@linkcode launchCommand}. */
export interface CommandLaunchOptions {
  /**
   * `--no-sandbox`: run the command as given.
   * @default {false}
   */
  noSandbox?: boolean;
  /**
   * The caller's basic environment (PATH, HOME, ...), used only without a
   * sandbox; a sandboxed server sees `env` plus the sandbox's minimal base.
   * @default {{}}
   */
  hostEnv?: Record<string, string>;
  /**
   * The command name that prefixes refusals.
   * @default {"verity"}
   */
  commandName?: string;
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
  command: string[],
  env: Record<string, string>,
  options: CommandLaunchOptions = {},
): Promise<LaunchedCommand> {
  const name = options.commandName ?? "verity";
  if (options.noSandbox === true) {
    return {
      spec: { command, env: { ...(options.hostEnv ?? {}), ...env } },
      backend: "none",
      dispose: () => Promise.resolve(),
    };
  }
  const first = command[0] ?? "";
  if (findExecutable(first, Deno.env.get("PATH") ?? "") === null) {
    throw new ServerError(
      `${name}: cannot start ${JSON.stringify(first)}: no such executable`,
    );
  }
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
    const state = join(root, "state");
    await Deno.mkdir(state);
    const launch = prepareLaunch({
      command,
      env,
      stateDir: state,
      definitionDir: Deno.cwd(),
      readPaths: [],
      backend: choice.backend,
      evidenceDir: join(root, "evidence"),
      label: "server",
    });
    return { spec: launch.spawn, backend: launch.backend, launch, dispose };
  } catch (e) {
    await dispose();
    return refine(e);
  }
}
