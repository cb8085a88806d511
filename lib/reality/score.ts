/**
 * Reality score: the share of checkable tools not flagged, and its letter
 * grade. Pure.
 *
 * @module
 */

/** Letter grades: A ≥ 97, B ≥ 90, C ≥ 75, D ≥ 50, else F. */
export type Grade = "A" | "B" | "C" | "D" | "F";

/** Per-tool outcome as the score sees it. */
export type ToolStatus = "passed" | "flagged" | "failed" | "skipped";

/** Totals and the score. */
export interface RealitySummary {
  tools: number;
  /** Tools called that answered with a success (passed + flagged). */
  checkable: number;
  passed: number;
  flagged: number;
  /** Honest isError, JSON-RPC errors, no answer, malformed results: not scored. */
  failed: number;
  skipped: number;
  /** Percentage of checkable tools not flagged (one decimal, rounded down), null when nothing was checkable. */
  score: number | null;
  /** Null when nothing was checkable, or when fewer than half the tools were checked. */
  grade: Grade | null;
  /** Fewer than half the tools were checked: the score is shown, never graded. */
  lowCoverage: boolean;
  /** Echo mismatches noted (never scored). */
  echoMismatches: number;
}

/**
 * `checked/total` with the score: `100% of 2/14 checked (ungraded: under half)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const s = summarize([{ status: "passed", echoMismatch: false }, { status: "skipped", echoMismatch: false }, { status: "skipped", echoMismatch: false }]);
 * assert.equal(scoreLine(s), "100% (2/3 tools skipped; 1/3 checked): ungraded, under half the tools checked");
 * ```
 */
export function scoreLine(s: RealitySummary): string {
  const checked = `${s.checkable}/${s.tools} checked`;
  const skipped = s.skipped ? `${s.skipped}/${s.tools} tools skipped; ` : "";
  if (s.score === null) return `none (${skipped}${checked}): nothing checkable`;
  const pct = `${s.score}%`;
  if (s.grade === null) {
    return `${pct} (${skipped}${checked}): ungraded, under half the tools checked`;
  }
  return `${pct} ${s.grade} (${skipped}${checked})`;
}

/**
 * The grade for a percentage.
 *
 * @example
 * ```ts
 * gradeFor(96.9); // "B"
 * ```
 */
export function gradeFor(score: number): Grade {
  if (score >= 97) return "A";
  if (score >= 90) return "B";
  if (score >= 75) return "C";
  if (score >= 50) return "D";
  return "F";
}

/** Exact percentage of checkable tools not flagged, or null when none was checkable. */
export function exactScore(passed: number, checkable: number): number | null {
  return checkable === 0 ? null : (100 * passed) / checkable;
}

/**
 * Summarise per-tool outcomes.
 *
 * @example
 * ```ts
 * summarize([{ status: "passed", echoMismatch: false }, { status: "flagged", echoMismatch: false }]).score; // 50
 * ```
 */
export function summarize(
  tools: readonly { status: ToolStatus; echoMismatch: boolean }[],
): RealitySummary {
  const count = (s: ToolStatus): number =>
    tools.filter((t) => t.status === s).length;
  const passed = count("passed");
  const flagged = count("flagged");
  const checkable = passed + flagged;
  const exact = exactScore(passed, checkable);
  const low = checkable * 2 < tools.length;
  return {
    tools: tools.length,
    checkable,
    passed,
    flagged,
    failed: count("failed"),
    skipped: count("skipped"),
    // Rounded down, so a shown 97.0 never hides a 96.96 graded B.
    score: exact === null ? null : Math.floor(exact * 10 + 1e-9) / 10,
    grade: exact === null || low ? null : gradeFor(exact),
    lowCoverage: low,
    echoMismatches: tools.filter((t) => t.echoMismatch).length,
  };
}

/**
 * Whether a run misses `--fail-under N`. With nothing checkable there is no
 * evidence, so a threshold is missed; an ungraded score (under half the
 * tools checked) misses it too, unless `allowLowCoverage`.
 */
export function missesThreshold(
  summary: RealitySummary,
  failUnder: number,
  allowLowCoverage = false,
): boolean {
  const exact = exactScore(summary.passed, summary.checkable);
  if (summary.lowCoverage && !allowLowCoverage) return true;
  return exact === null || exact < failUnder;
}
