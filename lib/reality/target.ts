/**
 * The `<target>` form of `verity reality`: load a definition, run the server
 * sandboxed against a scratch reset of its state, and give every write tool
 * (with `--include-destructive`) a fresh server on a fresh reset of its own,
 * so no write can touch real data or another call's view of the state.
 *
 * Requires `--allow-read`, `--allow-write` (a temporary work directory),
 * `--allow-run` and `--allow-env`.
 *
 * @module
 */
import {
  type Definition,
  loadDefinition,
  substitute,
} from "../definition/definition.ts";
import { resetState } from "../state/reset.ts";
import {
  chooseBackend,
  prepareLaunch,
  probeBackends,
  resolveDeno,
  resolvePython,
  type SandboxBackend,
} from "../sandbox/sandbox.ts";
import { isDenoRun } from "../sandbox/choose_backend.ts";
import type { RealityReport } from "./report.ts";
import {
  type LaunchedServer,
  type LaunchPurpose,
  runReality,
} from "./runner.ts";

/** Options for {@linkcode runTargetReality}. */
export interface TargetRealityOptions {
  seed: number;
  includeDestructive: boolean;
  /** Milliseconds per answer; null takes the definition's `timeouts.call`. */
  timeoutMs: number | null;
  /**
   * Run without a sandbox (`--no-sandbox`).
   * @default {false}
   */
  noSandbox?: boolean;
}

function usesPython(def: Definition): boolean {
  return [...def.command, ...Object.values(def.env), ...def.read].some((s) =>
    s.includes("{python}")
  );
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
  const deno = resolveDeno();
  const python = usesPython(def) ? await resolvePython() : "python3";
  const vars = (state: string) => ({
    deno,
    python,
    state,
    target: def.dir,
    source: null,
  });
  const probeCommand = def.command.map((c) => substitute(c, vars("/state")));
  const needsProbe = !options.noSandbox && def.sandbox !== "deno" &&
    !(def.sandbox === null && isDenoRun(probeCommand, deno));
  const probe = needsProbe
    ? await probeBackends()
    : { bubblewrap: false, reason: "not probed (a deno run command)" };
  const choice = chooseBackend({
    declared: def.sandbox ?? undefined,
    command: probeCommand,
    noSandbox: options.noSandbox === true,
    audit: def.kind === "target",
    bubblewrap: { available: probe.bubblewrap, reason: probe.reason },
    deno,
    source: def.file,
  });
  const backend: SandboxBackend = choice.backend;
  const workDir = await Deno.makeTempDir({ prefix: "verity-reality-" });
  let seq = 0;
  const launcher = {
    async launch(purpose: LaunchPurpose): Promise<LaunchedServer> {
      seq++;
      const label = purpose.kind === "shared"
        ? `shared-${seq}`
        : `isolated-${seq}`;
      const root = `${workDir}/${String(seq).padStart(4, "0")}-${label}`;
      const stateDir = `${root}/state`;
      const evidenceDir = `${root}/evidence`;
      await Deno.mkdir(evidenceDir, { recursive: true });
      await resetState(def, stateDir);
      const v = vars(stateDir);
      const env: Record<string, string> = {};
      for (const [k, val] of Object.entries(def.env)) {
        env[k] = substitute(val, v);
      }
      env.VERITY_STATE_DIR = stateDir;
      const launch = prepareLaunch({
        command: def.command.map((c) => substitute(c, v)),
        env,
        stateDir,
        definitionDir: def.dir,
        readPaths: def.read.map((r) => substitute(r, v)),
        backend,
        evidenceDir,
        label,
      });
      return {
        spec: launch.spawn,
        dispose: () => Deno.remove(root, { recursive: true }).catch(() => {}),
      };
    },
  };
  try {
    return await runReality(launcher, {
      seed: options.seed,
      includeDestructive: options.includeDestructive,
      timeoutMs: options.timeoutMs ?? def.timeouts.call_s * 1000,
      startTimeoutMs: def.timeouts.start_s * 1000,
      isolateWrites: true,
      server: {
        command: def.command,
        target: def.file,
        definition: { name: def.name, kind: def.kind, digest: def.digest },
        sandbox: backend,
        scratchState: true,
      },
    });
  } finally {
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
}
