/**
 * Build the report of a run from its history: derive every verdict, check
 * the fixture's expectations, and record provenance. Pure: the caller
 * passes the clock reading and the harness's git state.
 *
 * @module
 */
import type { Definition } from "../definition/types.ts";
import { HISTORY_VERSION, type RunHistory } from "../history/types.ts";
import { ENGINE_VERSION, serverFailure } from "../verdicts/engine.ts";
import { TEST_NAMES } from "../definition/types.ts";
import { checkExpectations, type ExpectedVerdict } from "./expectations.ts";
import {
  type DefinitionGit,
  deriveVerdicts,
  type Report,
  REPORT_SCHEMA,
  type TargetProvenance,
} from "./report.ts";
import { deriveStateEffects } from "./effects.ts";
import { reportClaims } from "./claims.ts";
import type { LearnedRecord } from "../init/learn.ts";

/** Expectations of a definition as a flat list (fixtures only; targets have none). */
export function expectationsOf(
  def: Pick<Definition, "tools">,
): ExpectedVerdict[] {
  const out: ExpectedVerdict[] = [];
  for (const t of def.tools) {
    for (const [test, e] of Object.entries(t.expected)) {
      if (!e) continue;
      const { verdict, ...assertions } = e;
      out.push({ tool: t.name, variant: t.variant, test, verdict, assertions });
    }
  }
  return out;
}

/** Everything {@linkcode buildRunReport} needs besides the history. */
export interface RunReportInput {
  runId: string;
  definition: Pick<
    Definition,
    "name" | "kind" | "file" | "digest" | "tools" | "allow" | "read" | "cwd"
  >;
  /** The tools (and variants) this run exercised. */
  exercised: readonly { name: string; variant: string | null }[];
  /** Audit mode: no expectations are checked. */
  audit: boolean;
  /** The git state of the definition's directory (found at the edge). */
  definitionGit: DefinitionGit;
  /** The audited server's pin and whether it ran from the prepared cache. */
  target: TargetProvenance;
  /** The harness: verity's version and git state. */
  harness: { version: string; commit: string | null; dirty: boolean | null };
  /** The Deno version that ran it. */
  deno: string;
  /** When the run started (ISO 8601). */
  capturedAt: string;
  /** The options the run used, recorded as given. */
  options: {
    runs: number;
    jobs: number;
    concurrentAttempts: number;
    tools: string[];
  };
  /** What learning did (an audit with no definition); null or absent: a definition. */
  learned?: LearnedRecord | null;
}

/**
 * The report of one run: provenance, the raw protocol evidence, the history
 * (observations, snapshots, sessions), every verdict derived from it, and
 * the expectation check. Pure.
 *
 * @example
 * ```ts ignore
 * const report = buildRunReport(history, { runId, definition: def, exercised: tools, audit: false, ... });
 * ```
 */
export function buildRunReport(
  history: RunHistory,
  input: RunReportInput,
): Report {
  const tests = [...TEST_NAMES];
  const verdicts = deriveVerdicts(
    history.definition,
    history.tools,
    history.snapshots,
    tests,
    undefined,
    history.changesets,
  );
  const def = input.definition;
  const expected = input.audit
    ? []
    : expectationsOf(def).filter((e) =>
      input.exercised.some((t) => t.name === e.tool && t.variant === e.variant)
    );
  const report: Report = {
    schema: REPORT_SCHEMA,
    runId: input.runId,
    provenance: {
      definition: {
        name: def.name,
        kind: def.kind,
        file: def.file,
        digest: def.digest,
        git: input.definitionGit,
      },
      target: input.target,
      harness: input.harness,
      deno: input.deno,
      sdk: "@modelcontextprotocol/sdk 1.32.2 (fixtures and SDK pin test only)",
      engine: ENGINE_VERSION,
      history: HISTORY_VERSION,
      capturedAt: input.capturedAt,
      options: {
        runs: input.options.runs,
        jobs: input.options.jobs,
        concurrentAttempts: input.options.concurrentAttempts,
        audit: input.audit,
        backend: history.backend,
        tools: input.options.tools,
      },
    },
    protocol: history.protocol,
    sandbox: {
      backend: history.backend,
      allow: {
        sys: def.allow.sys,
        run: def.allow.run,
        read: def.read,
        cwd: def.cwd,
      },
    },
    observations: { definition: history.definition, tools: history.tools },
    snapshots: history.snapshots,
    ...(history.changesets ? { changesets: history.changesets } : {}),
    sessions: history.sessions,
    unexercised: history.unexercised,
    tests,
    verdicts,
    expected,
    expectations: checkExpectations(expected, verdicts),
    audit: input.audit,
    setupFailure: serverFailure(history.definition, history.tools),
    stateEffects: deriveStateEffects(history, history.snapshots),
  };
  if (input.learned) {
    const { steps, calls, files } = input.learned;
    report.learned = { steps, calls, files };
  }
  report.summary = { claims: reportClaims(report) };
  return report;
}
