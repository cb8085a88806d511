/**
 * The reality report: a pure value holding the plan, every observation and
 * every verdict, so the verdicts can be re-derived from the report alone.
 *
 * @module
 */
import type { DefinitionGit, TargetProvenance } from "../audit/provenance.ts";
import type { HintState } from "../contracts/contracts.ts";
import type { ArgumentSource } from "./generate.ts";
import type { RealityPlannedTool, SkipReason } from "./plan.ts";
import {
  type FailureKind,
  type FlagRule,
  judgeCall,
  type NoteRule,
  type RealityCallObservation,
  type RealityFinding,
} from "./rules.ts";
import { type RealitySummary, summarize, type ToolStatus } from "./score.ts";

/** Report format identifier; bump on incompatible change. */
export const REALITY_REPORT_SCHEMA = "verity.reality/1";

/** One tool in the report. */
export interface RealityToolEntry {
  name: string;
  readOnlyHint: { state: HintState; detail: string | null };
  status: ToolStatus;
  skip?: { reason: SkipReason; message: string };
  arguments?: Record<string, unknown>;
  argumentSources?: ArgumentSource[];
  /** "full" when realistic optional properties were included, "minimal" when only required ones validated. */
  argumentShape?: "full" | "minimal";
  /** The tool's `outputSchema` as listed (absent when none was declared). */
  outputSchema?: unknown;
  /** What came back, verbatim (parsed JSON). */
  observation?: RealityCallObservation;
  /** Which server session made the call (a fresh one per write tool in target mode). */
  session?: string;
  failure?: { kind: FailureKind; message: string };
  flags: RealityFinding<FlagRule>[];
  notes: RealityFinding<NoteRule>[];
}

/** Where the server came from and how it ran. */
export interface RealityServer {
  /** The command line (`-- <command...>` form). */
  command: string[] | null;
  /** The definition path (`<target>` form). */
  target: string | null;
  /**
   * The loaded definition's name, kind and digest (`<target>` form), and
   * the git state of its directory (absent before 2026-12-01).
   */
  definition?: {
    name: string;
    kind: string;
    digest: string;
    git?: DefinitionGit;
  };
  /**
   * `<target>` form: the target's pin and the prepared cache it ran from,
   * or no pin for a local command (absent before 2026-12-01).
   */
  pin?: TargetProvenance;
  serverInfo: unknown;
  /** The sandbox backend ("none" with --no-sandbox). */
  sandbox: string;
  /** True when calls ran against a scratch reset of the target's state. */
  scratchState: boolean;
}

/** A complete reality report. */
export interface RealityReport {
  schema: typeof REALITY_REPORT_SCHEMA;
  verity: string;
  server: RealityServer;
  options: { seed: number; includeDestructive: boolean; timeoutS: number };
  summary: RealitySummary;
  tools: RealityToolEntry[];
  /** Problems reading the listing itself (not per tool). */
  listingProblems: string[];
  /**
   * Why the run ended before every planned call was made, e.g.
   * "deadline: the shared session's deadline of 600.0 s passed" (absent or
   * null when it did not).
   */
  ended?: string | null;
}

/** An observed call and the session it ran in. */
export interface ObservedCall {
  observation: RealityCallObservation;
  session: string;
}

/** Everything {@linkcode buildReport} needs. */
export interface BuildReportInput {
  verity: string;
  server: RealityServer;
  options: RealityReport["options"];
  plan: readonly RealityPlannedTool[];
  /** Observations by tool name; a planned call without one failed before it was sent. */
  calls: ReadonlyMap<string, ObservedCall>;
  listingProblems: readonly string[];
  /** Why the run ended early, if it did. */
  ended?: string | null;
}

function entryFor(
  p: RealityPlannedTool,
  calls: ReadonlyMap<string, ObservedCall>,
): RealityToolEntry {
  const raw = p.contract.raw;
  const entry: RealityToolEntry = {
    name: p.name,
    readOnlyHint: p.contract.hints.readOnlyHint.toJSON(),
    status: "skipped",
    flags: [],
    notes: [],
  };
  if (raw.outputSchema !== undefined) entry.outputSchema = raw.outputSchema;
  if (p.skip !== null || p.call === null) {
    if (p.skip) entry.skip = p.skip;
    return entry;
  }
  entry.arguments = p.call.arguments;
  entry.argumentSources = p.call.sources;
  entry.argumentShape = p.call.shape;
  const seen = calls.get(p.name);
  const observation: RealityCallObservation = seen?.observation ??
    {
      kind: "no_answer",
      message:
        "the call was never answered (the server could not be started again)",
      ms: 0,
    };
  entry.observation = observation;
  if (seen) entry.session = seen.session;
  const v = judgeCall({
    outputSchema: raw.outputSchema,
    arguments: p.call.arguments,
  }, observation);
  entry.status = v.status;
  entry.flags = v.flags;
  entry.notes = v.notes;
  if (v.status === "failed") entry.failure = v.failure;
  return entry;
}

/**
 * Build the report: judge every observed call and score the run.
 *
 * @example
 * ```ts ignore
 * const report = buildReport({ verity: "0.1.0", server, options, plan, calls: new Map(), listingProblems: [] });
 * ```
 */
export function buildReport(input: BuildReportInput): RealityReport {
  const tools = input.plan.map((p) => entryFor(p, input.calls));
  return {
    schema: REALITY_REPORT_SCHEMA,
    verity: input.verity,
    server: input.server,
    options: input.options,
    summary: summarize(tools.map((t) => ({
      status: t.status,
      echoMismatch: t.notes.some((n) => n.rule === "echo_mismatch"),
    }))),
    tools,
    listingProblems: [...input.listingProblems],
    ...(input.ended ? { ended: input.ended } : {}),
  };
}

/**
 * Re-derive every verdict from the evidence in a saved report and list the
 * differences (empty when the report is consistent).
 *
 * @example
 * ```ts ignore
 * rejudgeReport(JSON.parse(text)); // []
 * ```
 */
export function rejudgeReport(report: RealityReport): string[] {
  const diffs: string[] = [];
  for (const t of report.tools) {
    if (t.status === "skipped") continue;
    if (!t.observation || !t.arguments) {
      diffs.push(
        `${t.name}: status ${t.status} without an observation and arguments`,
      );
      continue;
    }
    const v = judgeCall({
      outputSchema: t.outputSchema,
      arguments: t.arguments,
    }, t.observation);
    if (v.status !== t.status) {
      diffs.push(`${t.name}: status ${t.status}, re-derived ${v.status}`);
    }
    const a = t.flags.map((f) => f.rule).join(",");
    const b = v.flags.map((f) => f.rule).join(",");
    if (a !== b) diffs.push(`${t.name}: flags [${a}], re-derived [${b}]`);
    const na = t.notes.map((f) => f.rule).join(",");
    const nb = v.notes.map((f) => f.rule).join(",");
    if (na !== nb) diffs.push(`${t.name}: notes [${na}], re-derived [${nb}]`);
  }
  const s = summarize(report.tools.map((t) => ({
    status: t.status,
    echoMismatch: t.notes.some((n) => n.rule === "echo_mismatch"),
  })));
  if (JSON.stringify(s) !== JSON.stringify(report.summary)) {
    diffs.push("summary does not match the tools");
  }
  return diffs;
}
