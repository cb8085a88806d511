/**
 * The history of a run: what the runner recorded, and all that the verdict
 * engine and the report read. The runner writes it, pure checkers decide
 * from it, and it travels in the report so `verity report verify` can decide
 * again. Pure data.
 *
 * @module
 */
import type { LearnedAim } from "../definition/types.ts";
import type { DeclarationChange } from "../contracts/listing_changes.ts";
import type { Exclusion } from "../state/exclude.ts";
import type { HintName, HintState } from "../contracts/contracts.ts";
import type { Coverage } from "../state/coverage.ts";
import type { Snapshot } from "../state/types.ts";
import type { Changeset } from "../state/changeset.ts";
import type { SandboxEvidence } from "../sandbox/audit_log.ts";
import type { PrivilegeUse } from "../sandbox/privilege.ts";
import type { SandboxBackend } from "../sandbox/types.ts";
import type { HttpExchange } from "../wire/http_client.ts";

/**
 * The version of the history's shape, written to a report's
 * `provenance.history` (absent: version 1). Version 2: attempts store only
 * the timer's raw stamps, no overlap decision. Version 3: a tool the
 * listing says needs the task protocol is not called, and says so
 * (`ToolObservations.skipped`).
 */
export const HISTORY_VERSION = 3;

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
  /**
   * `probed` (a tool with a probe): the calls are the probe, the probe
   * again, the tool, and the probe once more.
   */
  kind: "control" | "once" | "twice" | "probed";
  run: number;
  /** Null when the session could not be set up (then `setupFailure` says why). */
  stateDigest: string | null;
  setupFailure: string | null;
  calls: CallObservation[];
  /** Network permission checks seen in this session (deno backend), or null when unseen. */
  network: PermissionCheck[] | null;
  /**
   * Every permission check the sandbox refused in this session (deno backend:
   * writes outside the state directory, reads outside the server's files,
   * undeclared variables, ffi, sys, import), or null when the backend cannot
   * see attempts (bubblewrap, none). Absent in reports judged before verdict
   * rules version 5.
   */
  attempts?: PermissionCheck[] | null;
  backend: string;
  /**
   * The digest of what the session changed outside its state directory
   * (`RunHistory.changesets`), or null when that was not observed (no
   * overlay: `DefinitionObservations.writes`). Absent in reports before it.
   */
  changeset?: string | null;
}

/** One concurrent attempt (two calls at once). */
export interface AttemptObservation {
  mode: "single_connection" | "two_process";
  attempt: number;
  stateDigest: string | null;
  setupFailure: string | null;
  calls: CallObservation[];
  /**
   * Raw stamps from the overlap timer, ms on its own monotonic clock:
   * `send call N` / `receive call N`, and for two processes every
   * `ping I send` / `ping I receive`. Whether the calls overlapped is not
   * stored: the concurrent check decides it from these stamps
   * (`lib/verdicts/overlap.ts`), so `verity report verify` re-derives it.
   */
  timeline: { event: string; t: number }[];
  /**
   * History version 1 only (reports without `provenance.history`): the
   * timer's own overlap decision. The check reads it only when the
   * timeline lacks the stamps to decide (two-process attempts recorded
   * before ping stamps were stored).
   */
  overlap?: boolean;
  /** History version 1 only: the words behind {@linkcode overlap}. */
  overlapDetail?: string;
  /** As {@linkcode SessionObservation.changeset}: both processes' changes, for two. */
  changeset?: string | null;
}

/** Everything observed for one (tool, variant). */
export interface ToolObservations {
  tool: string;
  variant: string | null;
  arguments: Record<string, unknown>;
  hints: Record<HintName, DeclaredHint>;
  once: SessionObservation[];
  twice: SessionObservation[];
  /**
   * The read called around the tool in its probed sessions (arguments as
   * written); absent when the definition names no probe.
   */
  probe?: { name: string; arguments: Record<string, unknown> };
  /** Probed sessions, one per run; absent when the definition names no probe. */
  probed?: SessionObservation[];
  concurrent: AttemptObservation[] | null;
  /** Why no two-process attempts ran, when none did. */
  twoProcessSkipped: string | null;
  /**
   * History version 3 on: why the tool was not called at all (its listing
   * declares `execution.taskSupport: "required"`); absent when it was.
   */
  skipped?: { reason: "task_required"; message: string };
  /**
   * Sessions whose listing declared this tool differently from the first
   * listing (`protocol.toolsList`), with both contracts; absent when every
   * session declared it the same (always, before verdict rules version 8).
   */
  declarationChanges?: DeclarationChange[];
  /** A learned target's `learned` (`ToolDef`); absent otherwise. */
  learned?: LearnedAim;
}

/**
 * How a session's state was observed (`seed`, `patched`, `snapshot`);
 * `delta` and `rebuilt` are the names reports before 2026-12-02 used.
 */
export type StateMethod = "seed" | "patched" | "snapshot" | "delta" | "rebuilt";

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
  /**
   * Regions the definition excludes from judgment (adapters' `exclude`):
   * observed, kept as evidence, counted by no verdict, listed in every
   * headline. Absent: none.
   */
  excluded?: Exclusion[];
  /**
   * Whether writes outside the declared state were observed (every
   * session ran on an overlay whose changeset was read), and why not.
   * Absent in reports before it.
   */
  writes?: { observed: boolean; why: string | null };
}

/** Everything one session left behind, for the report. */
export interface SessionRecord {
  id: string;
  kind: string;
  tool: string | null;
  run: number;
  backend: string;
  command: string[];
  /** Frames of the session: responses to tools/call only (the opening is kept once). */
  callResponses: (string | null)[];
  /**
   * The session's raw `tools/list` pages, kept only when they declare
   * anything differently from the first listing (`protocol.toolsList`).
   */
  toolsList?: string[];
  stderrTail: string;
  exit: string;
  problems: string[];
  wallMs: number;
  /** Milliseconds the server process(es) lived. */
  serverMs: number;
  /** What the sandbox recorded: backend, exact command, environment, refused attempts. */
  sandbox: SandboxEvidence | null;
  /**
   * Each call's privilege use, in call order: the permission checks made
   * while it was in flight (the audit log cut by byte offset before the call
   * was sent and after its answer). `seen: false` when the backend keeps no
   * log. Absent in control sessions and in reports written before it.
   */
  privilege?: PrivilegeUse[];
  /**
   * The tool's arguments as sent in this session, when the definition's
   * arguments hold placeholders (`{state}` differs per session); the raw
   * arguments are in the tool's observations.
   */
  arguments?: Record<string, unknown>;
  /**
   * `transport = "http"`: the session's HTTP exchanges verbatim (status,
   * headers, frame indices, SSE events, stamps), at most
   * {@linkcode MAX_HTTP_EXCHANGES} kept.
   */
  http?: { url: string; exchanges: HttpExchange[]; dropped: number };
  /**
   * How the state the session left was observed: `seed`, compared page by
   * page with the seed it started from and found equal to it (no snapshot
   * taken: its digest is the seed's); `patched`, compared with the seed and
   * kept as a patch against it (the rows that differ, applied to the seed;
   * a report stores the patch), why: the state differs; `snapshot`, snapshotted whole, and
   * why. Reports written before 2026-12-02 say `delta` for `seed` and may
   * say `rebuilt` (a patch applied to a seed held whole): both are read.
   * Absent in reports written before it, and when no state was observed (a
   * session that failed to start).
   */
  stateMethod?: {
    method: StateMethod;
    why: string | null;
  };
}

/** Most HTTP exchanges kept per session record. */
export const MAX_HTTP_EXCHANGES = 200;

/** The complete history of one run: observations, snapshots, sessions and protocol evidence. */
export interface RunHistory {
  definition: DefinitionObservations;
  tools: ToolObservations[];
  snapshots: Record<string, Snapshot>;
  /** What sessions changed outside their state directories, by digest (absent: none recorded). */
  changesets?: Record<string, Changeset>;
  sessions: SessionRecord[];
  protocol: {
    initialize: string | null;
    toolsList: string[];
    serverInfo: unknown;
    listingProblems: string[];
  };
  /** The tools the server listed that the definition does not exercise. */
  unexercised: string[];
  backend: SandboxBackend;
}
