/**
 * `verity run`: the conformance battery on a fixture or an audit target.
 *
 * Requires `--allow-all` (spawns servers, writes reports).
 *
 * @module
 */
import { join, resolve } from "node:path";
import {
  gateMessage,
  parseCommandLine,
  parseCount,
  parseEnvPairs,
} from "./args.ts";
import { EvidenceError, UsageError } from "../errors.ts";
import { loadDefinition } from "../definition/load.ts";
import { checkListed } from "../definition/listed.ts";
import { checkSeededState } from "../state_io/seeded.ts";
import { openLauncher } from "../launcher/launcher.ts";
import { runBattery } from "../runner/runner.ts";
import { DeclaredStateObserver } from "../state_io/observer.ts";
import { OverlayObserver } from "../state_io/overlay_observer.ts";
import { selectTools } from "../runner/plan.ts";
import { buildRunReport } from "../report/build.ts";
import { renderText } from "../report/text.ts";
import { reportClaims } from "../report/claims.ts";
import { VERSION } from "../version.ts";
import { harnessGitState } from "./_io.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { packReport, reportText } from "../report/pack.ts";
import { appendReportToLedger } from "./_ledger.ts";
import { seedNotReproducible } from "../state_io/seed_ref.ts";
import { definitionGitState } from "../prepare/definition_git.ts";
import { targetProvenance } from "../prepare/provenance.ts";
import { cleanScratch, recoverRuns, WRITER_MARKER } from "./_recover.ts";
import { markOwner } from "../common/owner.ts";
import { runId } from "../common/run_id.ts";
import { reportOutputs, writeReportOutputs } from "./_formats.ts";
import { observedOptions, writeObserved } from "./_observed.ts";
import { Progress } from "./_progress.ts";
import { selfCpuMs } from "../common/process_cpu.ts";
import { terminalText } from "../common/show_controls.ts";
import { type Learned, learnTarget, readLearned } from "../init/learn.ts";
import { showControls } from "../common/show_controls.ts";

/** Run `verity run`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("run", argv, {
    tool: { type: "string", multiple: true },
    runs: { type: "string" },
    jobs: { type: "string" },
    "concurrent-attempts": { type: "string" },
    "observe-concurrent": { type: "boolean" },
    "runs-dir": { type: "string" },
    audit: { type: "boolean" },
    "fail-on-violation": { type: "boolean" },
    "fail-on-untested": { type: "boolean" },
    "no-sandbox": { type: "boolean" },
    json: { type: "boolean" },
    quiet: { type: "boolean" },
    html: { type: "string" },
    sarif: { type: "string" },
    junit: { type: "string" },
    "observed-out": { type: "string" },
    recipe: { type: "string" },
    url: { type: "string" },
    header: { type: "string", multiple: true },
    "header-env": { type: "string", multiple: true },
    env: { type: "string", multiple: true },
    offline: { type: "boolean" },
  });
  if (p.values.url !== undefined) {
    throw new UsageError(
      'verity run: a remote server (--url) cannot be reset, so its hints cannot be tested; list it with verity tools/capture --url, check its answers with verity reality --url, or write a local definition with verity init <dir> --url (transport = "http")',
    );
  }
  const zeroConfig = p.serverCommand !== null;
  if (zeroConfig ? p.positionals.length !== 0 : p.positionals.length !== 1) {
    throw new UsageError(
      zeroConfig
        ? "verity run: a server after -- is audited with no definition: give no definition as well"
        : "verity run: expected one definition (a fixture or target name or path), or --audit -- <command...>",
    );
  }
  if (zeroConfig && p.values.audit !== true) {
    throw new UsageError(
      "verity run: a server with no definition has no expectations: add --audit",
    );
  }
  if (zeroConfig && p.serverCommand!.length === 0) {
    throw new UsageError(
      "verity run: nothing after --: give the server command",
    );
  }
  for (const flag of ["env", "offline"] as const) {
    if (!zeroConfig && p.values[flag] !== undefined) {
      throw new UsageError(
        `verity run: --${flag} is for a server with no definition (--audit -- <command...>)`,
      );
    }
  }
  const runs = parseCount("run", "runs", p.values.runs, 3, 3);
  const jobs = parseCount(
    "run",
    "jobs",
    p.values.jobs,
    navigator.hardwareConcurrency || 2,
  );
  const attempts = parseCount(
    "run",
    "concurrent-attempts",
    p.values["concurrent-attempts"],
    20,
  );
  const audit = p.values.audit === true;
  const noSandbox = p.values["no-sandbox"] === true;
  for (const gate of ["fail-on-violation", "fail-on-untested"] as const) {
    if (p.values[gate] && !audit) {
      throw new UsageError(`verity run: --${gate} needs --audit`);
    }
  }
  const outputs = await reportOutputs("run", p.values);
  const observed = observedOptions("run", p.values);
  const marks: Record<string, number> = {
    process_to_command: performance.now(),
  };
  // This process's CPU (ms) at the same points: unlike wall time, barely
  // moved by the machine's load (VERITY_PHASE_TIMES).
  const cpuMarks: Record<string, number> = { start: selfCpuMs() };
  const runsDir = resolve(String(p.values["runs-dir"] ?? "runs"));
  // No definition: learn one from the server (seeding by use), kept in the
  // run's directory beside its report.
  let learned: Learned | null = null;
  let zeroStarted: Date | null = null;
  let zeroId: string | null = null;
  if (zeroConfig) {
    // Learned beside the runs (the same file system), then moved into the
    // run's directory once the run has its id.
    await Deno.mkdir(runsDir, { recursive: true });
    const learning = join(runsDir, `.learn-${crypto.randomUUID()}`);
    const scratch = await Deno.makeTempDir({ prefix: "verity-learn-" });
    await markOwner(scratch);
    try {
      learned = await learnTarget(p.serverCommand!, {
        dir: learning,
        workDir: scratch,
        env: parseEnvPairs("run", p.values.env),
        noSandbox,
        offline: p.values.offline === true,
        say: p.values.json || p.values.quiet
          ? () => {}
          : (line) => console.error(`verity: ${line}`),
      });
      zeroStarted = new Date();
      zeroId = runId(learned.definition.name, zeroStarted);
      await Deno.mkdir(join(runsDir, zeroId));
      await Deno.rename(learning, join(runsDir, zeroId, "target"));
      learned = {
        ...learned,
        dir: join(runsDir, zeroId, "target"),
        definition: await loadDefinition(join(runsDir, zeroId, "target")),
      };
    } finally {
      await Deno.remove(scratch, { recursive: true }).catch(() => {});
      await Deno.remove(learning, { recursive: true }).catch(() => {});
    }
  }
  const def = learned?.definition ??
    await loadDefinition(p.positionals[0]!);
  // A learned target run again: its learning record, as the first run's.
  const relearned = learned === null ? await readLearned(def) : null;
  if (relearned?.stale) {
    console.error(`verity: ${showControls(relearned.stale)}`);
  }
  marks.definition_load = performance.now();
  await checkSeededState(def);
  marks.definition = performance.now();
  if (audit && def.kind !== "target") {
    throw new UsageError(
      `verity run: --audit runs targets; ${def.file} is a fixture`,
    );
  }
  if (!audit && def.kind === "target") {
    throw new UsageError(
      `verity run: ${def.name} is a target (no expectations): add --audit`,
    );
  }
  // One launcher: a target with a [source] runs only from what `verity
  // prepare` verified; the backend is chosen (bubblewrap probed) once.
  const launcher = await openLauncher(def, {
    noSandbox,
    audit,
    commandName: "verity run",
    ...(learned?.prepared ? { prepared: learned.prepared } : {}),
  });
  marks.launcher = performance.now();
  const selectors = ((p.values.tool as string[] | undefined) ?? []).map(String);
  const tools = selectTools(def.tools, selectors);
  // Before the battery: finish what killed runs left in the runs directory
  // (an unrecorded report, temporary files). A ledger that does not read
  // strictly fails here, not after the battery.
  const recovery = await recoverRuns(runsDir);
  for (const r of recovery.recovered) {
    console.error(
      `verity: recovered ${r}: its report was written but not in the ledger; appended now`,
    );
  }
  if (recovery.unrecorded.length > 0) {
    console.error(
      `verity: warning: ${recovery.unrecorded.length} report(s) in ${runsDir} are in no ledger block (first: ${
        recovery.unrecorded[0]
      }); see verity ledger recover`,
    );
  }
  marks.recover = performance.now();
  // The definition and verity itself as they are when the run starts
  // (commit, uncommitted edits): what ran, even if a checkout moves later.
  // Both read now, in parallel; awaited after the battery (off its path).
  const gitStates = Promise.all([
    definitionGitState(def.file),
    harnessGitState(),
  ]);
  gitStates.catch(() => {}); // awaited below; never an unhandled rejection
  marks.git = performance.now();
  const started = zeroStarted ?? new Date();
  const id = zeroId ?? runId(def.name, started);
  const workDir = await Deno.makeTempDir({ prefix: "verity-run-" });
  await markOwner(workDir);
  // Progress: phase lines unless --json or --quiet; the live line (sessions
  // done/total, tool, ETA) only when stderr is a terminal as well.
  const silent = p.values.json === true || p.values.quiet === true;
  const live = new Progress(silent ? null : Progress.stderr());
  const progress = (line: string) => live.line(`verity: ${line}`);
  // VERITY_PHASE_TIMES=FILE: where the run's milliseconds went, written to
  // FILE as JSON at the end (scripts/bench_overhead.ts reads it).
  const phaseFile = Deno.env.get("VERITY_PHASE_TIMES") ?? null;
  const tBattery = performance.now();
  cpuMarks.battery = selfCpuMs();
  // Setup steps as durations, each from the previous mark.
  const phases: Record<string, number> = {
    process_to_command: marks.process_to_command!,
    definition: marks.definition! - marks.process_to_command!,
    definition_load: marks.definition_load! - marks.process_to_command!,
    launcher: marks.launcher! - marks.definition!,
    recover: marks.recover! - marks.launcher!,
    git: marks.git! - marks.recover!,
    before_battery: tBattery,
  };
  // Scratch directories that killed runs left (their owner dead) go while
  // the battery runs, off its path: nothing of this run's is touched (its
  // owner is alive); awaited before the run ends.
  const scratch = cleanScratch().catch(() => 0);
  let battery;
  try {
    // Writes outside the declared state: each launch's overlay, read after
    // its session beside the declared adapters' state.
    const observer = new OverlayObserver(
      new DeclaredStateObserver(def, workDir, {
        postgres: () => launcher.postgres,
      }),
    );
    launcher.watcher = observer;
    battery = await runBattery(def, tools, {
      ...(phaseFile !== null ? { phases } : {}),
      runs,
      jobs,
      concurrentAttempts: attempts,
      observeConcurrent: p.values["observe-concurrent"] === true,
      launcher,
      observer,
      workDir,
      progress: silent ? null : progress,
      onSession: (t) => live.tick(t),
      checkListing: (listed) => checkListed(def, listed),
    });
  } finally {
    live.clear();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
    await scratch;
  }
  const [definitionGit, harnessGit] = await gitStates;
  const tAssemble = performance.now();
  cpuMarks.after = selfCpuMs();
  phases.battery = tAssemble - tBattery;
  const report = buildRunReport(battery, {
    runId: id,
    definition: def,
    exercised: tools,
    audit,
    definitionGit,
    target: targetProvenance(def, launcher.prepared?.entry ?? null),
    harness: { version: VERSION, ...harnessGit },
    deno: Deno.version.deno,
    capturedAt: started.toISOString(),
    options: { runs, jobs, concurrentAttempts: attempts, tools: selectors },
    learned: learned ?? relearned?.record ?? null,
  });
  const verdicts = report.verdicts;
  const dir = join(runsDir, id);
  await Deno.mkdir(runsDir, { recursive: true });
  // Not recursive: an existing run directory is an error, never reused
  // (a learned target made it already, for this run).
  if (learned === null) await Deno.mkdir(dir);
  // The stored form (seed once, snapshots as patches, frames once).
  const tWrite = performance.now();
  phases.assemble = tWrite - tAssemble;
  // A seed every reset rebuilds exactly (reset verified, no clock or
  // random in it, no postgres) is kept by reference to the definition
  // (verity.report/3): `report verify` rebuilds it from the definition.
  const seedRef = report.observations.definition.reset.verified &&
      (await seedNotReproducible(def)) === null
    ? { definition: def.digest, file: def.file }
    : null;
  const packed = packReport(report, { seedRef });
  const reportPath = join(dir, "report.json");
  // Until the ledger holds it, the report is marked as ours: a crash in
  // between is finished by the next run (or verity ledger recover).
  await markOwner(dir, WRITER_MARKER);
  let text: string;
  try {
    text = reportText(packed);
  } catch (e) {
    // Past V8's string limit: no verity reader could open it either.
    if (!(e instanceof RangeError)) throw e;
    throw new EvidenceError(
      `verity run: the report would pass V8's string limit (536870888 characters), so no verity reader could open it: not written`,
    );
  }
  const written = await writeTextFileAtomic(reportPath, text, {
    overwrite: false,
  });
  const ledger = await appendReportToLedger(runsDir, id, written);
  await Deno.remove(join(dir, WRITER_MARKER)).catch(() => {});
  phases.write = performance.now() - tWrite;
  if (phaseFile !== null) {
    // CPU per part of the run: Deno and the modules, setup up to the
    // battery, the battery (with the client side of every session), after.
    const end = selfCpuMs();
    phases.cpu_process_to_command = cpuMarks.start!;
    phases.cpu_setup = cpuMarks.battery! - cpuMarks.start!;
    phases.cpu_battery = cpuMarks.after! - cpuMarks.battery!;
    phases.cpu_after = end - cpuMarks.after!;
    phases.cpu_self = end;
    await Deno.writeTextFile(phaseFile, JSON.stringify(phases) + "\n");
  }
  for (const written of await writeReportOutputs(report, outputs)) {
    console.error(`verity: wrote ${written}`);
  }
  if (observed !== null) {
    await writeObserved(observed, {
      runId: report.runId,
      definition: def.name,
      backend: report.sandbox.backend,
      protocol: report.protocol,
      tools: report.observations.tools,
      sessions: report.sessions,
    });
  }
  if (p.values.json) {
    const out = Deno.stdout.writable.getWriter();
    await out.write(new TextEncoder().encode(text));
    out.releaseLock();
  } else {
    console.log(terminalText(renderText(report)));
    console.log(`\nreport: ${reportPath}`);
    if (ledger) {
      console.log(
        `ledger: ${ledger.path} block ${ledger.index}, head ${ledger.head}`,
      );
    }
  }
  // A server that could not be audited is never a success, whatever the flags.
  if (report.setupFailure !== null) return 1;
  if (audit) {
    const claims = reportClaims(report);
    const named = (
      xs: { tool: string; variant: string | null; test: string }[],
    ) =>
      xs.slice(0, 5).map((x) =>
        `${x.variant === null ? x.tool : `${x.tool}[${x.variant}]`} ${x.test}`
      ).join("; ") +
      (xs.length > 5 ? `; and ${xs.length - 5} more` : "");
    const violations = verdicts.filter((v) => v.kind === "VIOLATION");
    const gate = p.values["fail-on-violation"] && violations.length > 0
      ? gateMessage(
        "run",
        "--fail-on-violation",
        `${violations.length} violation(s) (${named(violations)})`,
      )
      : p.values["fail-on-untested"] && claims.untested.length > 0
      ? gateMessage(
        "run",
        "--fail-on-untested",
        `${claims.untested.length} claim(s) untested (${
          named(claims.untested)
        })`,
      )
      : null;
    if (gate === null) return 0;
    console.error(terminalText(gate));
    return 1;
  }
  return report.expectations.matched === report.expectations.total ? 0 : 1;
}
