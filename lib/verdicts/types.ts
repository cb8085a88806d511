/**
 * The observation log the runner produces and the verdict engine reads.
 * Pure data: everything a verdict is derived from travels in the report, so
 * `verity report verify` can derive it again.
 *
 * @module
 */
import type { HintName, HintState } from "../contracts/contracts.ts";
import type { Coverage } from "../state/coverage.ts";
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
  | "UNOBSERVED_STATE";

/** Outcome kinds. */
export type OutcomeKind =
  | "PASS"
  | "VIOLATION"
  | "INCONCLUSIVE"
  | "NOT_APPLICABLE";

/** A declared hint as stored in evidence. */
export interface DeclaredHint {
  state: HintState;
  detail: string | null;
}

/** How one tool call ended: ok / failed / unknown, never silently ok. */
export type CallStatus = "ok" | "tool_error" | "protocol_error" | "unknown";

/** One tool call within a session. */
export interface CallObservation {
  status: CallStatus;
  /** Frame index of the response in the session's frames, or null. */
  frameIndex: number | null;
  /** Milliseconds from send to answer, on the session's clock. */
  ms: number;
  /** One line for humans when not ok. */
  message: string | null;
  /**
   * The `result` as JSON text, first 4096 characters, when the call
   * answered (absent in reports written before verdict rules version 3).
   */
  response?: string | null;
  /** For an unknown call: why the session ended ("exited", "timeout", ...). */
  ended?: string;
}

/** One permission check from Deno's audit log. */
export interface PermissionCheck {
  permission: string;
  value: string | null;
}

/** One session's observation: what happened and the state digest after it. */
export interface SessionObservation {
  kind: "control" | "once" | "twice";
  run: number;
  /** Null when the session could not be set up (then `setupFailure` says why). */
  stateDigest: string | null;
  setupFailure: string | null;
  calls: CallObservation[];
  /** Network permission checks seen in this session (deno backend), or null when unseen. */
  network: PermissionCheck[] | null;
  backend: string;
}

/** One concurrent attempt (two calls at once). */
export interface AttemptObservation {
  mode: "single_connection" | "two_process";
  attempt: number;
  stateDigest: string | null;
  setupFailure: string | null;
  calls: CallObservation[];
  /** Whether the overlap timer saw the two calls overlap, and why. */
  overlap: boolean;
  overlapDetail: string;
  /** Timeline from the overlap timer, ms on its own monotonic clock. */
  timeline: { event: string; t: number }[];
}

/** Everything observed for one (tool, variant). */
export interface ToolObservations {
  tool: string;
  variant: string | null;
  arguments: Record<string, unknown>;
  hints: Record<HintName, DeclaredHint>;
  once: SessionObservation[];
  twice: SessionObservation[];
  concurrent: AttemptObservation[] | null;
  /** Why no two-process attempts ran, when none did. */
  twoProcessSkipped: string | null;
}

/** Observations shared by every tool of a definition. */
export interface DefinitionObservations {
  coverage: Coverage;
  reset: {
    verified: boolean;
    digests: (string | null)[];
    problem: string | null;
  };
  /** Digest of the freshly seeded state. */
  seedDigest: string | null;
  control: SessionObservation[];
  /** Whether server start or stop itself changes state (seen in control sessions). */
  startupWrites: boolean;
  /** Whether the backend can see network attempts. */
  seesNetwork: boolean;
  /** Runs requested (at least 3). */
  runs: number;
}

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
