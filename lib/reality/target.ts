/**
 * The `<target>` form of `verity reality`: load a definition, run the server
 * sandboxed against a scratch reset of its state, and give every write call
 * (with `--include-destructive`) a fresh server on a fresh reset of its own,
 * so no write can touch real data or another call's view of the state. Each
 * tool the definition gives `[[tools]]` arguments for is called with every
 * one of its argument sets; only the others get generated arguments.
 *
 * Requires `--allow-read`, `--allow-write` (a temporary work directory),
 * `--allow-run` and `--allow-env`.
 *
 * @module
 */
import { loadDefinition } from "../definition/load.ts";
import { definitionGitState } from "../prepare/definition_git.ts";
import { targetProvenance } from "../prepare/provenance.ts";
import { checkSeededState } from "../state_io/seeded.ts";
import { type DefinitionLauncher, openLauncher } from "../launcher/launcher.ts";
import { substituteDeep } from "../definition/placeholders.ts";
import { checkListed } from "../definition/listed.ts";
import type { RealityReport } from "./report.ts";
import {
  type LaunchedServer,
  type LaunchPurpose,
  type RealityObserver,
  runReality,
  type ServerLauncher,
} from "./runner.ts";

/** Options for {@linkcode runTargetReality}. */
export interface TargetRealityOptions {
  seed: number;
  includeDestructive: boolean;
  /** Milliseconds per answer; null takes the definition's `timeouts.call`. */
  timeoutMs: number | null;
  /**
   * Milliseconds the shared session may take in all (`--session-deadline`).
   * @default {DEFAULT_SESSION_DEADLINE_MS}
   */
  sessionDeadlineMs?: number;
  /**
   * Run without a sandbox (`--no-sandbox`).
   * @default {false}
   */
  noSandbox?: boolean;
  /**
   * Told the listing and each call's privilege use (`--observed-out`).
   * @default {undefined}
   */
  observer?: RealityObserver;
}

/**
 * Reality's view of a definition launcher: every session (the shared one,
 * and each write tool's own) gets a fresh reset of the definition's state in
 * its own directory under `workDir`, removed when the session is disposed.
 */
export function scratchStateLauncher(
  launcher: DefinitionLauncher,
  workDir: string,
  startTimeoutMs = 30_000,
): ServerLauncher {
  let seq = 0;
  return {
    async launch(purpose: LaunchPurpose): Promise<LaunchedServer> {
      seq++;
      const label = purpose.kind === "shared"
        ? `shared-${seq}`
        : `isolated-${seq}`;
      const root = `${workDir}/${String(seq).padStart(4, "0")}-${label}`;
      const dirs = { state: `${root}/state`, evidence: `${root}/evidence` };
      const dispose = async () => {
        await launcher.release(dirs.state);
        await Deno.remove(root, { recursive: true }).catch(() => {});
      };
      try {
        await Deno.mkdir(dirs.evidence, { recursive: true });
        await launcher.reset(dirs.state);
        const started = await launcher.start(dirs, label, startTimeoutMs);
        const vars = launcher.placeholders(dirs.state);
        return {
          spec: started.target,
          launch: started.launch,
          dispose,
          resolveArguments: (args) =>
            substituteDeep(args, vars) as Record<string, unknown>,
        };
      } catch (e) {
        await dispose();
        throw e;
      }
    },
  };
}

/**
 * Run a reality check on a fixture or target definition.
 * Throws `DefinitionError`/`SandboxError`/`ServerError` (exit 2) for a bad
 * definition, a refused launch, or a server that cannot be listed.
 *
 * @example
 * ```ts ignore
 * const report = await runTargetReality("fixtures/reality", { seed: 1, includeDestructive: true, timeoutMs: null });
 * ```
 */
export async function runTargetReality(
  target: string,
  options: TargetRealityOptions,
): Promise<RealityReport> {
  const def = await loadDefinition(target);
  await checkSeededState(def);
  const definitionGit = await definitionGitState(def.file);
  const defLauncher = await openLauncher(def, {
    noSandbox: options.noSandbox === true,
    commandName: "verity reality",
  });
  const workDir = await Deno.makeTempDir({ prefix: "verity-reality-" });
  const launcher = scratchStateLauncher(
    defLauncher,
    workDir,
    def.timeouts.start_s * 1000,
  );
  await defLauncher.startState(workDir).catch(async (e) => {
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
    throw e;
  });
  try {
    return await runReality(launcher, {
      seed: options.seed,
      includeDestructive: options.includeDestructive,
      timeoutMs: options.timeoutMs ?? def.timeouts.call_s * 1000,
      ...(options.sessionDeadlineMs !== undefined
        ? { sessionDeadlineMs: options.sessionDeadlineMs }
        : {}),
      startTimeoutMs: def.timeouts.start_s * 1000,
      isolateWrites: true,
      checkListing: (names) => checkListed(def, names),
      argumentSets: def.tools.map((t) => ({
        tool: t.name,
        variant: t.variant,
        arguments: t.arguments,
      })),
      ...(options.observer ? { observer: options.observer } : {}),
      server: {
        command: def.command,
        target: def.file,
        definition: {
          name: def.name,
          kind: def.kind,
          digest: def.digest,
          git: definitionGit,
        },
        pin: targetProvenance(def, defLauncher.prepared?.entry ?? null),
        sandbox: defLauncher.backend,
        scratchState: true,
      },
    });
  } finally {
    await defLauncher.close();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
}
