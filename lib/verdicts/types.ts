/**
 * What the verdict engine decides: verdicts, their reasons and outcome
 * kinds. What it decides from (the history the runner records) is
 * `lib/history/types.ts`. Pure data.
 *
 * @module
 */
import type { HintName, HintState } from "../contracts/contracts.ts";
import type { TestName } from "../definition/types.ts";

/** Why a verdict is not a plain PASS or VIOLATION. */
export type Reason =
  | "NO_DECLARATION"
  | "MALFORMED_DECLARATION"
  | "PERMISSIVE_DECLARATION"
  | "SUPERSEDED_BY_READ_ONLY"
  | "PARTIAL_COVERAGE"
  | "UNCLASSIFIED_STATE"
  | "RESET_UNVERIFIED"
  | "NONDETERMINISTIC"
  | "CALL_ERROR"
  | "SETUP_FAILED"
  | "NO_OVERLAP_OBSERVED"
  | "TWO_PROCESS_SKIPPED_STARTUP_WRITES"
  | "NO_NETWORK_OBSERVATION"
  | "UNOBSERVED_STATE"
  | "CHECK_FAILED"
  | "TASK_REQUIRED"
  | "ATTEMPTED_WRITE"
  | "TIMED_OUT"
  | "DECLARATION_CHANGED"
  | "NOTHING_TO_CHANGE";

/** Outcome kinds. */
export type OutcomeKind =
  | "PASS"
  | "VIOLATION"
  | "INCONCLUSIVE"
  | "NOT_APPLICABLE";

/** A verdict with its evidence beside it. */
export interface Verdict {
  tool: string;
  variant: string | null;
  test: TestName;
  /** The hint this test judges, and its declared state. */
  hint: HintName;
  declared: HintState;
  /** "PASS", "VIOLATION", "INCONCLUSIVE:<reason>", "NOT_APPLICABLE:<reason>". */
  outcome: string;
  kind: OutcomeKind;
  reason: Reason | null;
  secondary: Reason[];
  /** e.g. "idempotent=holds". */
  observed: string;
  /** Permissive declaration whose behaviour was safe in every run. */
  overDeclared: boolean;
  /** Observed facts the expectations may assert on. */
  facts: Record<string, string | boolean | number>;
  /** Human-readable details per reason and for the deciding comparison. */
  details: string[];
  /** Deltas that decided it, per run (summaries; the full deltas are recomputable). */
  evidence: Record<string, unknown>;
}
