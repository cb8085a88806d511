/**
 * The report (`verity.report/1`): a self-contained evidence record, and the
 * pure re-derivation behind `verity report verify`.
 *
 * @module
 */
import type { Snapshot } from "../state/types.ts";
import { snapshotDigest } from "../state/delta.ts";
import { canonicalStateJson } from "../state/keys.ts";
import { ENGINE_VERSION, judgeTool } from "../verdicts/engine.ts";
import type {
  DefinitionObservations,
  TestName,
  ToolObservations,
  Verdict,
} from "../verdicts/types.ts";
import { TEST_NAMES } from "../verdicts/types.ts";
import {
  checkExpectations,
  type ExpectationCheck,
  type ExpectedVerdict,
} from "./expectations.ts";
import type { SessionRecord } from "../runner/runner.ts";

/** The schema identifier of reports this version writes. */
export const REPORT_SCHEMA = "verity.report/1";

/** Provenance of a run. */
export interface Provenance {
  definition: { name: string; kind: string; file: string; digest: string };
  harness: { version: string; commit: string | null; dirty: boolean | null };
  /** Version of the verdict rules that judged this report (see ENGINE_VERSION). */
  engine: number;
  deno: string;
  sdk: string;
  capturedAt: string;
  options: Record<string, unknown>;
}

/**
 * What the definition allowed its server beyond the default sandbox, as
 * declared (placeholders kept; each session's resolved command line is in
 * its sandbox evidence).
 */
export interface SandboxAllowances {
  /** Deno `--allow-sys` names. */
  sys: string[];
  /** Programs the server may start. */
  run: string[];
  /** Extra read-only paths. */
  read: string[];
  /** The server's working directory; null = the definition's directory. */
  cwd: string | null;
}

/**
 * One line naming every allowance, or null when the sandbox is the default
 * (what every format shows). Pure.
 *
 * @example
 * ```ts
 * allowanceLine({ sys: ["hostname"], run: ["git"], read: [], cwd: null });
 * // "sys hostname; run git"
 * ```
 */
export function allowanceLine(
  a: SandboxAllowances | undefined,
): string | null {
  if (a === undefined) return null;
  const parts: string[] = [];
  if (a.sys.length) parts.push(`sys ${a.sys.join(", ")}`);
  if (a.run.length) parts.push(`run ${a.run.join(", ")}`);
  if (a.read.length) parts.push(`read ${a.read.join(", ")}`);
  if (a.cwd !== null) parts.push(`cwd ${a.cwd}`);
  return parts.length ? parts.join("; ") : null;
}

/** A report, as written to `runs/<run-id>/report.json`. */
export interface Report {
  schema: typeof REPORT_SCHEMA;
  runId: string;
  provenance: Provenance;
  protocol: {
    initialize: string | null;
    toolsList: string[];
    serverInfo: unknown;
    listingProblems: string[];
  };
  sandbox: { backend: string; allow?: SandboxAllowances };
  observations: {
    definition: DefinitionObservations;
    tools: ToolObservations[];
  };
  /** Normalized snapshots by digest: the state evidence. */
  snapshots: Record<string, Snapshot>;
  sessions: SessionRecord[];
  unexercised: string[];
  /** Which tests were judged. */
  tests: TestName[];
  verdicts: Verdict[];
  expected: ExpectedVerdict[];
  expectations: ExpectationCheck;
  /** Audit mode: no expectations; summary of violations and over-declarations. */
  audit: boolean;
}

/** Derive every verdict from observations and snapshots. Pure. */
export function deriveVerdicts(
  definition: DefinitionObservations,
  tools: readonly ToolObservations[],
  snapshots: Readonly<Record<string, Snapshot>>,
  tests: readonly TestName[] = TEST_NAMES,
): Verdict[] {
  return tools.flatMap((t) => judgeTool(definition, t, snapshots, tests));
}

/** One difference found by {@linkcode verifyReport}. */
export interface ReportProblem {
  where: string;
  message: string;
}

/**
 * Re-derive everything a report claims from the evidence inside it: each
 * snapshot's digest, each verdict, the expectation check. Pure.
 */
export function verifyReport(report: unknown): ReportProblem[] {
  const problems: ReportProblem[] = [];
  const r = report as Partial<Report> | null;
  if (!r || typeof r !== "object" || r.schema !== REPORT_SCHEMA) {
    return [{ where: "schema", message: `not a ${REPORT_SCHEMA} report` }];
  }
  if (
    !r.observations || !r.snapshots || !Array.isArray(r.verdicts) ||
    !r.expectations
  ) {
    return [{
      where: "report",
      message: "observations, snapshots, verdicts or expectations missing",
    }];
  }
  for (const [digest, snap] of Object.entries(r.snapshots)) {
    const again = snapshotDigest(snap);
    if (again !== digest) {
      problems.push({
        where: `snapshots.${digest}`,
        message: `content hashes to ${again}`,
      });
    }
  }
  const engine = r.provenance?.engine;
  if (engine !== ENGINE_VERSION) {
    problems.push({
      where: "provenance.engine",
      message: `judged by verdict rules version ${
        engine ?? "unknown"
      }; this verity applies version ${ENGINE_VERSION}, so differences below may be rule changes, not tampering (verify with the verity that wrote it)`,
    });
  }
  let derived: Verdict[];
  try {
    derived = deriveVerdicts(
      r.observations.definition,
      r.observations.tools,
      r.snapshots,
      r.tests ?? TEST_NAMES,
    );
  } catch (e) {
    return [...problems, {
      where: "verdicts",
      message: `cannot re-derive: ${(e as Error).message}`,
    }];
  }
  const key = (v: Verdict) =>
    `${v.tool}${v.variant ? `[${v.variant}]` : ""} ${v.test}`;
  const saved = new Map(r.verdicts.map((v) => [key(v), v]));
  for (const d of derived) {
    const s = saved.get(key(d));
    saved.delete(key(d));
    if (!s) {
      problems.push({
        where: key(d),
        message: `verdict missing from the report (derived ${d.outcome})`,
      });
      continue;
    }
    for (
      const field of [
        "outcome",
        "reason",
        "secondary",
        "observed",
        "overDeclared",
        "facts",
        "declared",
      ] as const
    ) {
      if (canonicalStateJson(s[field]) !== canonicalStateJson(d[field])) {
        problems.push({
          where: `${key(d)} ${field}`,
          message: `report says ${
            canonicalStateJson(s[field])
          }, evidence gives ${canonicalStateJson(d[field])}`,
        });
      }
    }
  }
  for (const k of saved.keys()) {
    problems.push({
      where: k,
      message: "verdict in the report that the evidence does not produce",
    });
  }
  const exp = checkExpectations(r.expected ?? [], derived);
  if (
    exp.matched !== r.expectations.matched || exp.total !== r.expectations.total
  ) {
    problems.push({
      where: "expectations",
      message:
        `report says ${r.expectations.matched}/${r.expectations.total}, evidence gives ${exp.matched}/${exp.total}`,
    });
  }
  return problems;
}
