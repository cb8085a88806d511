/**
 * The verdict engine: pure functions from observations to verdicts, each
 * with its evidence. The rules are written out in docs/methodology.md.
 *
 * @module
 */
import type { HintState } from "../contracts/contracts.ts";
import type { OutcomeKind, Reason, Verdict } from "./types.ts";
import type {
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import { TEST_NAMES, type TestName } from "../definition/types.ts";
import { processMemoryEvidence, responsePreview } from "./process_memory.ts";
import {
  any,
  base,
  Comparator,
  type Observation,
  type SnapshotStore,
} from "./_observe.ts";
import { CHECKS } from "./battery.ts";

export {
  deltaColumns,
  type SnapshotStore,
  summarizeDelta,
} from "./_observe.ts";

/**
 * The version of the verdict rules. It changes whenever the same evidence
 * would give a different verdict, so `verity report verify` can tell a
 * tampered report from one judged under older rules.
 */
export const ENGINE_VERSION = 5;

/** The observation of a check that threw: unknown, with the error as evidence. */
function checkCrashed(test: TestName, e: unknown, rules: number): Observation {
  const o = base();
  const message = e instanceof Error ? e.message : String(e);
  if (rules >= 4) {
    o.blockers.push("CHECK_FAILED");
    o.details.push(`the ${test} check failed: ${message}`);
    o.evidence.check_error = {
      check: test,
      name: e instanceof Error ? e.name : typeof e,
      message,
    };
  } else {
    o.blockers.push("SETUP_FAILED");
    o.details.push(`evidence incomplete: ${message}`);
  }
  o.facts.observed = `${CHECKS[test].property}=unknown`;
  return o;
}

const UNSEEN: readonly Reason[] = ["UNOBSERVED_STATE", "PARTIAL_COVERAGE"];

/**
 * Coverage: no declared location is coverage "none"; a declared `memory:`
 * location is state no adapter can observe (UNOBSERVED_STATE); any other
 * unobserved location is PARTIAL_COVERAGE.
 */
function applyCoverage(o: Observation, defn: DefinitionObservations): void {
  const c = defn.coverage;
  if (c.locations.length === 0) {
    o.blockers.push("PARTIAL_COVERAGE");
    o.facts.coverage = "none";
    o.details.push(
      "coverage none: the definition declares no state locations (declare where the state lives, or memory:process)",
    );
    return;
  }
  const unseen = c.locations.filter((l) => l.observedBy === null);
  const memory = unseen.filter((l) => l.location.startsWith("memory:"));
  const other = unseen.filter((l) => !l.location.startsWith("memory:"));
  if (memory.length) {
    o.blockers.push("UNOBSERVED_STATE");
    o.details.push(
      `state declared in process memory cannot be observed: ${
        memory.map((l) => l.location).join(", ")
      }`,
    );
  }
  if (other.length) {
    o.blockers.push("PARTIAL_COVERAGE");
    o.details.push(`not observed: ${other.map((l) => l.location).join(", ")}`);
  }
}

/** Whether the single call changed no observed state in any run. */
function onceLeftStateAlone(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): boolean {
  const ref = defn.control[0]?.stateDigest;
  if (!ref || t.once.length === 0) return false;
  return t.once.every((s) =>
    s.stateDigest !== null &&
    (s.stateDigest === ref ||
      !any(cmp.delta(ref, s.stateDigest), [
        "business",
        "append_only",
        "unclassified",
      ]))
  );
}

/**
 * Identical calls that answer differently while the observed state stayed
 * put: the state lives where verity cannot see it, so nothing "holds".
 */
function applyProcessMemory(
  o: Observation,
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): void {
  const ev = processMemoryEvidence(t.once, t.twice);
  if (ev === null || !onceLeftStateAlone(cmp, defn, t)) return;
  const first = ev[0]!;
  o.evidence.process_memory = ev;
  o.facts.process_memory = true;
  o.details.unshift(
    `unknown: state may live in process memory: identical calls answered differently with no observed state change (twice run ${first.run}: ${
      JSON.stringify(responsePreview(first.first))
    } then ${JSON.stringify(responsePreview(first.second))})`,
  );
  if (o.behaviour === "holds") {
    o.behaviour = "unknown";
    o.blockers.unshift("UNOBSERVED_STATE");
  } else o.blockers.push("UNOBSERVED_STATE");
}

function observe(
  test: TestName,
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
  rules: number,
): Observation {
  const o = CHECKS[test].observe({ cmp, defn, tool: t, rules });
  if (test === "sequential_idempotence" && rules < 3) {
    delete o.facts.repeat_errored;
  }
  if (test !== "open_world" && rules >= 3) {
    applyCoverage(o, defn);
    applyProcessMemory(o, cmp, defn, t);
  } else if (test !== "open_world" && !defn.coverage.complete) {
    // Rules version 2: every unobserved location (memory: included) was
    // PARTIAL_COVERAGE, and no location at all was complete coverage.
    o.blockers.push("PARTIAL_COVERAGE");
    o.details.push(
      `not observed: ${
        defn.coverage.locations.filter((l) => l.observedBy === null).map((l) =>
          l.location
        ).join(", ")
      }`,
    );
  }
  // With state unobserved, "holds" is only what was seen: not reported as behaviour.
  const seen = o.behaviour === "holds" &&
      o.blockers.some((b) => UNSEEN.includes(b))
    ? "unknown"
    : o.behaviour;
  o.facts.observed = `${CHECKS[test].property}=${seen}`;
  return o;
}

function declarationReason(
  test: TestName,
  t: ToolObservations,
): Reason | null {
  const { hint, claim } = CHECKS[test];
  if (
    test !== "read_only" && test !== "open_world" &&
    t.hints.readOnlyHint.state === "TRUE"
  ) return "SUPERSEDED_BY_READ_ONLY";
  const state: HintState = t.hints[hint].state;
  if (state === "ABSENT") return "NO_DECLARATION";
  if (state === "MALFORMED") return "MALFORMED_DECLARATION";
  if (state !== claim) return "PERMISSIVE_DECLARATION";
  return null;
}

function uniq(rs: Reason[], primary: Reason | null): Reason[] {
  return [...new Set(rs)].filter((r) => r !== primary);
}

/**
 * Judge one test for one tool.
 *
 * @example
 * ```ts ignore
 * const v = judge("read_only", defn, tool, snapshots);
 * // v.outcome === "PASS", v.observed === "read_only=holds"
 * ```
 */
export function judge(
  test: TestName,
  defn: DefinitionObservations,
  t: ToolObservations,
  snapshots: SnapshotStore,
  options: JudgeOptions = {},
): Verdict {
  const rules = options.rules ?? ENGINE_VERSION;
  const serverFailed = rules >= 3 ? options.serverFailed ?? null : null;
  if (serverFailed !== null) return setupFailed(test, t, serverFailed);
  const cmp = new Comparator(snapshots);
  let o: Observation;
  try {
    o = observe(test, cmp, defn, t, rules);
  } catch (e) {
    // A crashing check yields INCONCLUSIVE with its own reason and the error
    // as evidence, not a crashed run (rules version 4; before, SETUP_FAILED).
    o = checkCrashed(test, e, rules);
  }
  // An unverified reset is named on every verdict, also where the check
  // itself never reached the state gate (a concurrent test not run).
  if (!defn.reset.verified && !o.blockers.includes("RESET_UNVERIFIED")) {
    o.blockers.push("RESET_UNVERIFIED");
  }
  const { hint, property } = CHECKS[test];
  const declared = t.hints[hint].state;
  const na = declarationReason(test, t);
  let kind: OutcomeKind;
  let reason: Reason | null;
  if (na !== null) {
    kind = "NOT_APPLICABLE";
    reason = na;
    if (na === "MALFORMED_DECLARATION") {
      o.details.unshift(`${hint} ${t.hints[hint].detail ?? "malformed"}`);
    }
  } else if (!defn.reset.verified) {
    kind = "INCONCLUSIVE";
    reason = "RESET_UNVERIFIED";
  } else if (o.behaviour === "fails") {
    kind = "VIOLATION";
    // A VIOLATION that is not a state change names its evidence (rules 5).
    reason = o.violationReason ?? null;
  } else if (o.behaviour === "holds") {
    const blocker = o.blockers.find((b) => UNSEEN.includes(b)) ?? null;
    kind = blocker ? "INCONCLUSIVE" : "PASS";
    reason = blocker;
  } else {
    kind = "INCONCLUSIVE";
    reason = o.blockers[0] ?? "SETUP_FAILED";
  }
  // Partial coverage is named first whenever it stopped a PASS-or-nothing outcome.
  if (
    kind === "INCONCLUSIVE" && reason === "NO_OVERLAP_OBSERVED" &&
    o.blockers.some((b) => UNSEEN.includes(b))
  ) reason = o.blockers.find((b) => UNSEEN.includes(b))!;
  const permissive = na === "PERMISSIVE_DECLARATION";
  const outcome = kind === "PASS" || kind === "VIOLATION"
    ? kind
    : `${kind}:${reason}`;
  return {
    tool: t.tool,
    variant: t.variant,
    test,
    hint,
    declared,
    outcome,
    kind,
    reason,
    secondary: uniq(o.blockers, reason),
    observed: String(o.facts.observed),
    // Over-declared only on positive evidence: safe, and (rules version 3)
    // no call errored, the repeated one included.
    overDeclared: permissive &&
      o.facts.observed === `${property}=holds` &&
      (rules < 3 ||
        (o.facts.call_errored !== true && o.facts.repeat_errored !== true)),
    facts: o.facts,
    details: o.details,
    evidence: o.evidence,
  };
}

/** Options for {@linkcode judge} and {@linkcode judgeTool}. */
export interface JudgeOptions {
  /**
   * Why the server could not be audited at all ({@linkcode serverFailure}):
   * every verdict is then SETUP_FAILED with this cause.
   * @default {null}
   */
  serverFailed?: string | null;
  /**
   * The verdict rules version to apply: the current one for a new run, the
   * one a saved report was judged under when `report verify` re-derives it
   * (2 to 5; see docs/methodology.md).
   * @default {ENGINE_VERSION}
   */
  rules?: number;
}

/** Rules versions this engine can apply (a report judged under another is re-derived under the current one). */
export const SUPPORTED_RULES: readonly number[] = [2, 3, 4, 5];

/** Judge every test for one tool, in report order. */
export function judgeTool(
  defn: DefinitionObservations,
  t: ToolObservations,
  snapshots: SnapshotStore,
  tests: readonly TestName[] = TEST_NAMES,
  options: JudgeOptions = {},
): Verdict[] {
  return tests.map((test) => judge(test, defn, t, snapshots, options));
}

function died(s: SessionObservation): boolean {
  return s.setupFailure !== null ||
    s.calls.some((c) => c.status === "unknown" && c.ended === "exited");
}

/**
 * Whether the server could not be audited at all, and why: it never
 * started, initialized or listed its tools in any control session, or it
 * started but died (or could not be set up) in every session that called a
 * tool. Such a run judges nothing: every verdict is SETUP_FAILED with this
 * cause. Null when the server ran.
 *
 * @example
 * ```ts ignore
 * serverFailure(defn, tools); // "the server never started: control run 1: ..."
 * ```
 */
export function serverFailure(
  defn: DefinitionObservations,
  tools: readonly ToolObservations[],
): string | null {
  const ctl = defn.control;
  if (ctl.length > 0 && ctl.every((s) => s.setupFailure !== null)) {
    const first = ctl[0]!;
    return `the server never started: control run ${first.run}: ${first.setupFailure}`;
  }
  const calling = tools.flatMap((t) => [...t.once, ...t.twice]);
  if (calling.length > 0 && calling.every(died)) {
    const s = calling[0]!;
    const why = s.setupFailure ??
      s.calls.find((c) => c.status === "unknown")?.message ?? "it died";
    const n = `${calling.length}/${calling.length}`;
    const what = calling.every((x) => x.setupFailure === null)
      ? `the server died in every session (${n})`
      : `no session that called a tool could be completed (${n})`;
    return `${what}: ${s.kind} run ${s.run}: ${why}`;
  }
  return null;
}

/** The verdict of a test when the server itself could not be audited. */
function setupFailed(
  test: TestName,
  t: ToolObservations,
  cause: string,
): Verdict {
  const { hint, property } = CHECKS[test];
  const na = declarationReason(test, t);
  const observed = `${property}=unknown`;
  return {
    tool: t.tool,
    variant: t.variant,
    test,
    hint,
    declared: t.hints[hint].state,
    outcome: "INCONCLUSIVE:SETUP_FAILED",
    kind: "INCONCLUSIVE",
    reason: "SETUP_FAILED",
    secondary: na === null ? [] : [na],
    observed,
    overDeclared: false,
    facts: { observed, server_failed: true },
    details: [cause],
    evidence: {},
  };
}
