/**
 * The report (`verity.report/1`): a self-contained evidence record. The
 * re-derivation behind `verity report verify` is in `verify.ts`.
 *
 * @module
 */
import type { Snapshot } from "../state/types.ts";
import type { Changeset } from "../state/changeset.ts";
import { judgeTool, serverFailure } from "../verdicts/engine.ts";
import type {
  DefinitionObservations,
  RunHistory,
  SessionRecord,
  ToolObservations,
} from "../history/types.ts";
import type { Verdict } from "../verdicts/types.ts";
import { TEST_NAMES, type TestName } from "../definition/types.ts";
import type { ExpectationCheck, ExpectedVerdict } from "./expectations.ts";
import type { StateEffects } from "./effects.ts";
import type { Claims } from "./claims.ts";
import type { DefinitionGit, TargetProvenance } from "../prepare/provenance.ts";
import type { LearnedRecord } from "../init/learn.ts";

export type { DefinitionGit, TargetProvenance };

/**
 * The schema identifier of reports this version writes: the stored form
 * without repetitions (`pack.ts`: the seed state once, every other snapshot
 * as a patch against it, each raw frame once).
 */
export const REPORT_SCHEMA = "verity.report/2";

/** Reports written before the stored form (snapshots whole, frames inline); still read. */
export const REPORT_SCHEMA_V1 = "verity.report/1";

/** Every report schema this version reads. */
export const REPORT_SCHEMAS: readonly string[] = [
  REPORT_SCHEMA_V1,
  REPORT_SCHEMA,
  // The stored form with the seed kept by reference (pack.ts SEEDREF_SCHEMA).
  "verity.report/3",
];

/** Provenance of a run. */
export interface Provenance {
  definition: {
    name: string;
    kind: string;
    file: string;
    digest: string;
    /** Absent in reports written before 2026-12-01. */
    git?: DefinitionGit;
  };
  /** The audited server's pin. Absent in reports written before 2026-12-01. */
  target?: TargetProvenance;
  harness: { version: string; commit: string | null; dirty: boolean | null };
  /** Version of the verdict rules that judged this report (see ENGINE_VERSION). */
  engine: number;
  /**
   * Version of the history's shape (see HISTORY_VERSION); absent in reports
   * of history version 1, whose attempts store the timer's overlap decision.
   */
  history?: number;
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
 * One line naming every allowance, or "none (default sandbox)" for the default
 * (what every format shows). Pure.
 *
 * @example
 * ```ts
 * allowanceLine({ sys: ["hostname"], run: ["git"], read: [], cwd: null });
 * // "sys hostname; run git"
 * ```
 */
export function allowanceLine(a: SandboxAllowances | undefined): string {
  if (a === undefined) return NO_ALLOWANCES;
  const parts: string[] = [];
  if (a.sys.length) parts.push(`sys ${a.sys.join(", ")}`);
  if (a.run.length) parts.push(`run ${a.run.join(", ")}`);
  if (a.read.length) parts.push(`read ${a.read.join(", ")}`);
  if (a.cwd !== null) parts.push(`cwd ${a.cwd}`);
  return parts.length ? parts.join("; ") : NO_ALLOWANCES;
}

const NO_ALLOWANCES = "none (default sandbox)";

/**
 * A report in memory: what every renderer and the re-derivation read. A
 * `verity.report/2` file is this with repetitions taken out
 * (`pack.ts` `packReport`), read back with `unpackReport`; a
 * `verity.report/1` file is this as it is.
 */
export interface Report {
  schema: typeof REPORT_SCHEMA | typeof REPORT_SCHEMA_V1;
  runId: string;
  provenance: Provenance;
  protocol: RunHistory["protocol"];
  sandbox: { backend: string; allow?: SandboxAllowances };
  observations: {
    definition: DefinitionObservations;
    tools: ToolObservations[];
  };
  /** Normalized snapshots by digest: the state evidence. */
  snapshots: Record<string, Snapshot>;
  /**
   * What sessions changed outside their state directories (the overlay),
   * by digest. Absent in reports before it, and when none was read.
   */
  changesets?: Record<string, Changeset>;
  sessions: SessionRecord[];
  unexercised: string[];
  /** Which tests were judged. */
  tests: TestName[];
  verdicts: Verdict[];
  expected: ExpectedVerdict[];
  expectations: ExpectationCheck;
  /** Audit mode: no expectations; summary of violations and over-declarations. */
  audit: boolean;
  /**
   * Why the server could not be audited at all (it never started, or died
   * in every session), or null. Every verdict is then SETUP_FAILED, and
   * every format shows this first. Absent in reports before rules version 3.
   */
  setupFailure?: string | null;
  /**
   * The control sessions' effect on the seed, and the state after every
   * errored call: derived from observations and snapshots
   * (`lib/report/effects.ts`). Absent in reports written before 2026-12-01.
   */
  stateEffects?: StateEffects;
  /**
   * The headline: every falsifiable claim, how many held, were violated or
   * could not be tested, and why (`lib/report/claims.ts`). Re-derived by
   * `report verify`; every format derives it again rather than reading it.
   * Absent in reports written before 2026-12-02.
   */
  summary?: { claims: Claims };
  /**
   * What learning did, for a target learned with no definition: each
   * seeding call (its outcome, and where every argument value came from),
   * the battery's argument sets with their origins, and the state files.
   * Absent for definitions written by hand and in reports before
   * 2026-12-02.
   */
  learned?: LearnedRecord;
}

/**
 * Derive every verdict from observations and snapshots, under the current
 * verdict rules or the given version. Pure.
 */
export function deriveVerdicts(
  definition: DefinitionObservations,
  tools: readonly ToolObservations[],
  snapshots: Readonly<Record<string, Snapshot>>,
  tests: readonly TestName[] = TEST_NAMES,
  rules?: number,
  changesets: Readonly<Record<string, Changeset>> = {},
): Verdict[] {
  const serverFailed = serverFailure(definition, tools);
  return tools.flatMap((t) =>
    judgeTool(definition, t, snapshots, tests, {
      serverFailed,
      changesets,
      ...(rules === undefined ? {} : { rules }),
    })
  );
}

export { type ReportProblem, verifyReport } from "./verify.ts";
