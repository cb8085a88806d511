/**
 * The verdict engine: pure functions from observations to verdicts, each
 * with its evidence. It composes named parts: a check per test
 * (`checks/`), the rules every observation is subject to (`rules/`:
 * coverage, process memory), the declaration rule, and the server-failure
 * and check-failed rules; `battery.ts` lists them in order. The rules are
 * written out in docs/methodology.md.
 *
 * @module
 */
import type { OutcomeKind, Reason, Verdict } from "./types.ts";
import type {
  DefinitionObservations,
  ToolObservations,
} from "../history/types.ts";
import { TEST_NAMES, type TestName } from "../definition/types.ts";
import {
  Comparator,
  type Observation,
  type SnapshotStore,
} from "./_observe.ts";
import { CHECKS, RULES } from "./battery.ts";
import type { Changeset } from "../state/changeset.ts";
import { checkFailed } from "./rules/check_failed.ts";
import { declarationReason } from "./rules/declaration.ts";
import { declarationChangedVerdict } from "./rules/declaration_changed.ts";
import { serverFailedVerdict } from "./rules/server_failure.ts";
import { taskRequiredVerdict } from "./rules/task_required.ts";

export {
  deltaColumns,
  type SnapshotStore,
  summarizeDelta,
} from "./_observe.ts";
export { serverFailure } from "./rules/server_failure.ts";

/**
 * The version of the verdict rules. It changes whenever the same evidence
 * would give a different verdict, so `verity report verify` can tell a
 * tampered report from one judged under older rules.
 */
export const ENGINE_VERSION = 9;

/** Rules versions this engine can apply (a report judged under another is re-derived under the current one). */
export const SUPPORTED_RULES: readonly number[] = [2, 3, 4, 5, 6, 7, 8, 9];

const UNSEEN: readonly Reason[] = ["UNOBSERVED_STATE", "PARTIAL_COVERAGE"];

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
   * (see docs/methodology.md).
   * @default {ENGINE_VERSION}
   */
  rules?: number;
  /**
   * What sessions changed outside their state directories, by digest
   * (`RunHistory.changesets`).
   * @default {{}}
   */
  changesets?: Readonly<Record<string, Changeset>>;
}

/** The test's check, then every rule that applies; a throwing part is CHECK_FAILED. */
function observe(
  test: TestName,
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
  rules: number,
): Observation {
  let o: Observation;
  try {
    const ctx = { cmp, defn, tool: t, rules };
    o = CHECKS[test].observe(ctx);
    for (const rule of RULES) if (rule.applies(test, rules)) rule.apply(o, ctx);
  } catch (e) {
    return checkFailed(test, e, rules);
  }
  // With state unobserved, "holds" is only what was seen: not reported as behaviour.
  const seen = o.behaviour === "holds" &&
      o.blockers.some((b) => UNSEEN.includes(b))
    ? "unknown"
    : o.behaviour;
  o.facts.observed = `${CHECKS[test].property}=${seen}`;
  return o;
}

/** The outcome: the declaration first, then the reset, then what was observed. */
function outcomeOf(
  o: Observation,
  na: Reason | null,
  resetVerified: boolean,
): { kind: OutcomeKind; reason: Reason | null } {
  if (na !== null) return { kind: "NOT_APPLICABLE", reason: na };
  if (!resetVerified) {
    return { kind: "INCONCLUSIVE", reason: "RESET_UNVERIFIED" };
  }
  // A VIOLATION that is not a state change names its evidence (rules 5).
  if (o.behaviour === "fails") {
    return { kind: "VIOLATION", reason: o.violationReason ?? null };
  }
  const unseen = o.blockers.find((b) => UNSEEN.includes(b)) ?? null;
  if (o.behaviour === "holds") {
    return unseen
      ? { kind: "INCONCLUSIVE", reason: unseen }
      : { kind: "PASS", reason: null };
  }
  const first = o.blockers[0] ?? "SETUP_FAILED";
  // Partial coverage is named first whenever it stopped a PASS-or-nothing outcome.
  return {
    kind: "INCONCLUSIVE",
    reason: first === "NO_OVERLAP_OBSERVED" && unseen ? unseen : first,
  };
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
  const v = judgeListed(test, defn, t, snapshots, options, rules);
  // Rules version 8: a declaration that changed between sessions is judged
  // against neither contract (a server that never started stays SETUP_FAILED).
  return rules >= 8 && (t.declarationChanges?.length ?? 0) > 0 &&
      v.reason !== "SETUP_FAILED"
    ? declarationChangedVerdict(v, t)
    : v;
}

/** Judge one test on the first listing's declaration. */
function judgeListed(
  test: TestName,
  defn: DefinitionObservations,
  t: ToolObservations,
  snapshots: SnapshotStore,
  options: JudgeOptions,
  rules: number,
): Verdict {
  const serverFailed = rules >= 3 ? options.serverFailed ?? null : null;
  if (serverFailed !== null) return serverFailedVerdict(test, t, serverFailed);
  if (t.skipped !== undefined) {
    return taskRequiredVerdict(test, t, t.skipped.message);
  }
  const o = observe(
    test,
    new Comparator(
      snapshots,
      defn.excluded ?? [],
      options.changesets ?? {},
      defn.control,
    ),
    defn,
    t,
    rules,
  );
  // An unverified reset is named on every verdict, also where the check
  // itself never reached the state gate (a concurrent test not run).
  if (!defn.reset.verified && !o.blockers.includes("RESET_UNVERIFIED")) {
    o.blockers.push("RESET_UNVERIFIED");
  }
  const { hint, property } = CHECKS[test];
  const na = declarationReason(test, t);
  if (na === "MALFORMED_DECLARATION") {
    o.details.unshift(`${hint} ${t.hints[hint].detail ?? "malformed"}`);
  }
  const { kind, reason } = outcomeOf(o, na, defn.reset.verified);
  return {
    tool: t.tool,
    variant: t.variant,
    test,
    hint,
    declared: t.hints[hint].state,
    outcome: kind === "PASS" || kind === "VIOLATION"
      ? kind
      : `${kind}:${reason}`,
    kind,
    reason,
    secondary: [...new Set(o.blockers)].filter((r) => r !== reason),
    observed: String(o.facts.observed),
    // Over-declared only on positive evidence: safe, and (rules version 3)
    // no call errored, the repeated one included.
    overDeclared: na === "PERMISSIVE_DECLARATION" &&
      o.facts.observed === `${property}=holds` &&
      (rules < 3 ||
        (o.facts.call_errored !== true && o.facts.repeat_errored !== true)),
    facts: o.facts,
    details: o.details,
    evidence: o.evidence,
  };
}

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
