/**
 * The reality report: a pure value holding the plan, every observation and
 * every verdict, so the verdicts can be re-derived from the report alone.
 *
 * @module
 */
import type { DefinitionGit, TargetProvenance } from "../prepare/provenance.ts";
import type { HintState } from "../contracts/contracts.ts";
import type { ArgumentSource } from "./generate.ts";
import type { ArgumentsFrom, RealityPlannedTool, SkipReason } from "./plan.ts";
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
export const REALITY_REPORT_SCHEMA = "verity.reality/2";

/** One call of a tool, with its verdict. */
export interface RealityCallEntry {
  /** Where the arguments came from: the definition's variant, or generated. */
  argumentsFrom: ArgumentsFrom;
  /** The arguments sent (a definition's placeholders resolved). */
  arguments: Record<string, unknown>;
  /** Generated arguments only: where each value came from. */
  argumentSources?: ArgumentSource[];
  /** Generated arguments only: "full" when realistic optional properties were included, "minimal" when only required ones validated. */
  argumentShape?: "full" | "minimal";
  /** What came back, verbatim (parsed JSON). */
  observation: RealityCallObservation;
  /** Which server session made the call (a fresh one per write call in target mode). */
  session?: string;
  status: Exclude<ToolStatus, "skipped">;
  failure?: { kind: FailureKind; message: string };
  flags: RealityFinding<FlagRule>[];
  notes: RealityFinding<NoteRule>[];
}

/**
 * One tool in the report. Its status joins its calls': flagged when any
 * call is, else passed when any call is, else failed; its flags and notes
 * are every call's, in call order.
 */
export interface RealityToolEntry {
  name: string;
  readOnlyHint: { state: HintState; detail: string | null };
  status: ToolStatus;
  skip?: { reason: SkipReason; message: string };
  /** The tool's `outputSchema` as listed (absent when none was declared). */
  outputSchema?: unknown;
  /** Every call made, in order (empty when skipped). */
  calls: RealityCallEntry[];
  /** The first call's failure, when every call failed. */
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

/** An observed call, the arguments it sent and the session it ran in. */
export interface ObservedCall {
  observation: RealityCallObservation;
  session: string;
  /**
   * The arguments as sent, when they differ from the plan's (a
   * definition's placeholders resolved).
   * @default {the planned arguments}
   */
  arguments?: Record<string, unknown>;
}

/** Everything {@linkcode buildReport} needs. */
export interface BuildReportInput {
  verity: string;
  server: RealityServer;
  options: RealityReport["options"];
  plan: readonly RealityPlannedTool[];
  /**
   * Observations by tool name, one per planned call in order; a planned
   * call without one failed before it was sent.
   */
  calls: ReadonlyMap<string, readonly ObservedCall[]>;
  listingProblems: readonly string[];
  /** Why the run ended early, if it did. */
  ended?: string | null;
}

/** A tool's status and findings from its calls' (see {@linkcode RealityToolEntry}). */
function joinCalls(
  calls: readonly Pick<
    RealityCallEntry,
    "status" | "failure" | "flags" | "notes"
  >[],
): Pick<RealityToolEntry, "status" | "failure" | "flags" | "notes"> {
  const status: ToolStatus = calls.some((c) => c.status === "flagged")
    ? "flagged"
    : calls.some((c) => c.status === "passed")
    ? "passed"
    : "failed";
  const out: Pick<RealityToolEntry, "status" | "failure" | "flags" | "notes"> =
    {
      status,
      flags: calls.flatMap((c) => c.flags),
      notes: calls.flatMap((c) => c.notes),
    };
  const failure = calls[0]?.failure;
  if (status === "failed" && failure) out.failure = failure;
  return out;
}

function callEntry(
  outputSchema: unknown,
  planned: RealityPlannedTool["calls"][number],
  seen: ObservedCall | undefined,
): RealityCallEntry {
  const observation: RealityCallObservation = seen?.observation ??
    {
      kind: "no_answer",
      message:
        "the call was never answered (the server could not be started again)",
      ms: 0,
    };
  const args = seen?.arguments ?? planned.arguments;
  const v = judgeCall({ outputSchema, arguments: args }, observation);
  const entry: RealityCallEntry = {
    argumentsFrom: planned.from,
    arguments: args,
    ...(planned.sources ? { argumentSources: planned.sources } : {}),
    ...(planned.shape ? { argumentShape: planned.shape } : {}),
    observation,
    ...(seen ? { session: seen.session } : {}),
    status: v.status,
    flags: v.flags,
    notes: v.notes,
  };
  if (v.status === "failed") entry.failure = v.failure;
  return entry;
}

function entryFor(
  p: RealityPlannedTool,
  calls: ReadonlyMap<string, readonly ObservedCall[]>,
): RealityToolEntry {
  const raw = p.contract.raw;
  const entry: RealityToolEntry = {
    name: p.name,
    readOnlyHint: p.contract.hints.readOnlyHint.toJSON(),
    status: "skipped",
    calls: [],
    flags: [],
    notes: [],
  };
  if (raw.outputSchema !== undefined) entry.outputSchema = raw.outputSchema;
  if (p.skip !== null || p.calls.length === 0) {
    if (p.skip) entry.skip = p.skip;
    return entry;
  }
  const seen = calls.get(p.name) ?? [];
  entry.calls = p.calls.map((c, i) => callEntry(raw.outputSchema, c, seen[i]));
  return { ...entry, ...joinCalls(entry.calls) };
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
    if (t.status === "skipped") {
      if ((t.calls ?? []).length > 0) {
        diffs.push(`${t.name}: status skipped with ${t.calls.length} call(s)`);
      }
      continue;
    }
    if (!Array.isArray(t.calls) || t.calls.length === 0) {
      diffs.push(`${t.name}: status ${t.status} without a call`);
      continue;
    }
    const again = t.calls.map((c, i) => {
      const at = `${t.name} call ${i + 1}`;
      if (!c.observation || !c.arguments) {
        diffs.push(
          `${at}: status ${c.status} without an observation and arguments`,
        );
      }
      const v = judgeCall({
        outputSchema: t.outputSchema,
        arguments: c.arguments ?? {},
      }, c.observation);
      if (!c.observation || !c.arguments) return v;
      if (v.status !== c.status) {
        diffs.push(`${at}: status ${c.status}, re-derived ${v.status}`);
      }
      const a = c.flags.map((f) => f.rule).join(",");
      const b = v.flags.map((f) => f.rule).join(",");
      if (a !== b) diffs.push(`${at}: flags [${a}], re-derived [${b}]`);
      const na = c.notes.map((f) => f.rule).join(",");
      const nb = v.notes.map((f) => f.rule).join(",");
      if (na !== nb) diffs.push(`${at}: notes [${na}], re-derived [${nb}]`);
      return v;
    });
    const j = joinCalls(again);
    if (j.status !== t.status) {
      diffs.push(`${t.name}: status ${t.status}, re-derived ${j.status}`);
    }
    const a = t.flags.map((f) => f.rule).join(",");
    const b = j.flags.map((f) => f.rule).join(",");
    if (a !== b) diffs.push(`${t.name}: flags [${a}], re-derived [${b}]`);
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
