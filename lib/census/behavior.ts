/**
 * The behavioral part of a census (`verity census --behavior`): a server
 * that listed gets the battery `verity run --audit -- <command>` runs on a
 * server nobody described. Its target is learned by use (`lib/init/learn.ts`:
 * scratch HOME, seeding by use, derived arguments) from the census entry's
 * prepared command, then the battery runs from that seed with the overlay
 * observing every write. The report (`verity.report` form, seed inline) and
 * the learned `target.toml` are the server's artifacts; the census entry
 * keeps the claims headline and, per tool, each verdict with the digest of
 * its evidence.
 *
 * Requires `--allow-all` (spawns sandboxed servers, scratch directories).
 *
 * @module
 */
import { join } from "node:path";
import { VERSION } from "../version.ts";
import { runId } from "../common/run_id.ts";
import type { DefinitionLauncher } from "../launcher/launcher.ts";
import { openLauncher } from "../launcher/launcher.ts";
import type { LaunchableDefinition } from "../launcher/request.ts";
import { learnTarget, type SeedStep, STEP_OUTCOMES } from "../init/learn.ts";
import { runBattery } from "../runner/runner.ts";
import { ServerError } from "../errors.ts";
import { selectTools } from "../runner/plan.ts";
import { checkListed } from "../definition/listed.ts";
import { DeclaredStateObserver } from "../state_io/observer.ts";
import { OverlayObserver } from "../state_io/overlay_observer.ts";
import { buildRunReport } from "../report/build.ts";
import { packReport, reportText } from "../report/pack.ts";
import { targetProvenance } from "../prepare/provenance.ts";
import { canonicalJson, sha256Hex } from "../evidence/canonical.ts";
import type { Report } from "../report/report.ts";
import { reportClaims } from "../report/claims.ts";
import {
  type CensusBehavior,
  censusClaims,
  type CensusVerdict,
} from "./result.ts";

/** Runs per session kind, as `verity run` (the minimum the battery accepts). */
const RUNS = 3;
/** Concurrent attempts per mode, as `verity run`'s default. */
const CONCURRENT_ATTEMPTS = 20;
/** A server's battery (learning included) may take this many times its entry's timeout. */
const BUDGET_TIMEOUTS = 20;

/** What one server's battery produced. */
export interface BehaviorResult {
  behavior: CensusBehavior;
  /** Per tool name: its verdicts. */
  verdicts: Map<string, CensusVerdict[]>;
  artifacts: { file: string; type: "report" | "target"; text: string }[];
}

/**
 * Learn a target from a listed census server and run the battery on it.
 * Throws what learning or the battery throws (the caller records it as
 * the server's behavior failure).
 */
export async function auditBehavior(
  slug: string,
  def: LaunchableDefinition,
  launcher: DefinitionLauncher,
  work: string,
  timeoutS: number,
): Promise<BehaviorResult> {
  const started = new Date();
  // A wall budget for the whole battery: past it no session starts (each
  // ends as a setup failure at once), and the result is `timed_out`.
  const budgetS = BUDGET_TIMEOUTS * timeoutS;
  const deadline = performance.now() + budgetS * 1000;
  const spent = () => performance.now() > deadline;
  // A local server's relative paths are its directory's (the learned
  // target runs in a scratch working directory).
  const command = await Promise.all(
    def.command.map(async (a, i) =>
      i > 0 && !a.startsWith("-") && !a.startsWith("/") && !a.includes("{") &&
        await Deno.stat(join(def.dir, a)).then(() => true, () => false)
        ? join(def.dir, a)
        : a
    ),
  );
  const learned = await learnTarget(command, {
    dir: join(work, "target"),
    workDir: join(work, "learn"),
    env: def.env,
    name: slug,
    commandName: "verity census",
    deadline,
    resolved: {
      command,
      prepared: launcher.prepared,
      read: launcher.prepared === null ? [...def.read, def.dir] : def.read,
      allow: def.allow,
      timeoutS,
      lock: def.command.some((a) => a.startsWith("--lock="))
        ? join(def.dir, "deno.lock")
        : null,
    },
  });
  const ldef = learned.definition;
  const battery = await openLauncher(ldef, {
    audit: true,
    commandName: "verity census",
    ...(launcher.prepared ? { prepared: launcher.prepared } : {}),
  });
  const runDir = join(work, "run");
  await Deno.mkdir(runDir, { recursive: true });
  const observer = new OverlayObserver(
    new DeclaredStateObserver(ldef, runDir, {
      postgres: () => battery.postgres,
    }),
  );
  battery.watcher = observer;
  const tools = selectTools(ldef.tools, []);
  // Past the budget every reset is refused: no session starts.
  const reset = battery.reset.bind(battery);
  battery.reset = (dir) =>
    spent()
      ? Promise.reject(new Error("the battery's budget is spent"))
      : reset(dir);
  const history = await runBattery(ldef, tools, {
    runs: RUNS,
    jobs: 1,
    concurrentAttempts: CONCURRENT_ATTEMPTS,
    observeConcurrent: false,
    launcher: battery,
    observer,
    workDir: runDir,
    progress: null,
    checkListing: (listed) => checkListed(ldef, listed),
  });
  if (spent()) {
    throw new ServerError(
      `the battery timed out: it took over ${budgetS} s (${BUDGET_TIMEOUTS} times the entry's timeout)`,
    );
  }
  const report: Report = buildRunReport(history, {
    runId: runId(ldef.name, started),
    definition: ldef,
    exercised: tools,
    audit: true,
    learned,
    definitionGit: {
      commit: null,
      dirty: null,
      repository: null,
      detail: "learned by the census (no definition)",
    },
    target: targetProvenance(ldef, battery.prepared?.entry ?? null),
    harness: { version: VERSION, commit: null, dirty: null },
    deno: Deno.version.deno,
    capturedAt: started.toISOString(),
    options: {
      runs: RUNS,
      jobs: 1,
      concurrentAttempts: CONCURRENT_ATTEMPTS,
      tools: [],
    },
  });
  const reportJson = reportText(packReport(report, { seedRef: null }));
  const targetText = await Deno.readTextFile(join(learned.dir, "target.toml"));
  const seeding = Object.fromEntries(
    STEP_OUTCOMES.map((o) => [o, 0]),
  ) as Record<SeedStep["outcome"], number>;
  for (const s of learned.steps) seeding[s.outcome]++;
  const c = reportClaims(report);
  const verdicts = new Map<string, CensusVerdict[]>();
  for (const v of report.verdicts) {
    const list = verdicts.get(v.tool) ?? [];
    list.push({
      variant: v.variant,
      test: v.test,
      outcome: v.outcome,
      evidence: `sha256:${sha256Hex(canonicalJson(v.evidence))}`,
    });
    verdicts.set(v.tool, list);
  }
  const dir = `servers/${slug}`;
  return {
    behavior: {
      failure: null,
      report: `${dir}/report.json`,
      target: `${dir}/target.toml`,
      stateFiles: learned.files.length,
      seeding,
      claims: censusClaims(c),
    },
    verdicts,
    artifacts: [
      { file: `${dir}/report.json`, type: "report", text: reportJson },
      { file: `${dir}/target.toml`, type: "target", text: targetText },
    ],
  };
}
