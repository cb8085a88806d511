/**
 * The expectation check: a fixture's recorded ground truth against the
 * verdicts. Pure.
 *
 * @module
 */
import type { Verdict } from "../verdicts/types.ts";

/** The key that pairs a verdict with its expectation. */
export function verdictKey(
  t: { tool: string; variant: string | null; test: string },
): string {
  return `${t.tool}\u0000${t.variant}\u0000${t.test}`;
}

/** A report's expectation results by {@linkcode verdictKey}. */
export function expectationsByKey(
  report: { expectations: { results: readonly ExpectationResult[] } },
): Map<string, ExpectationResult> {
  return new Map(report.expectations.results.map((e) => [verdictKey(e), e]));
}

/** One expectation as recorded in a definition. */
export interface ExpectedVerdict {
  tool: string;
  variant: string | null;
  test: string;
  verdict: string;
  /** Optional observed assertions (e.g. `append_only_changed = true`). */
  assertions: Record<string, string | boolean | number>;
}

/** One expectation's outcome. */
export interface ExpectationResult extends ExpectedVerdict {
  actual: string | null;
  matched: boolean;
  /** Why it did not match, one entry per failed assertion. */
  mismatches: string[];
}

/** The whole check. */
export interface ExpectationCheck {
  matched: number;
  total: number;
  results: ExpectationResult[];
}

/**
 * Compare verdicts with expectations. A verdict with no expectation is not
 * counted; an expectation with no verdict fails.
 */
export function checkExpectations(
  expected: readonly ExpectedVerdict[],
  verdicts: readonly Verdict[],
): ExpectationCheck {
  const results = expected.map((e): ExpectationResult => {
    const v = verdicts.find((x) =>
      x.tool === e.tool && x.variant === e.variant && x.test === e.test
    );
    const mismatches: string[] = [];
    if (!v) {
      mismatches.push("no verdict was produced");
      return { ...e, actual: null, matched: false, mismatches };
    }
    if (v.outcome !== e.verdict) {
      mismatches.push(`verdict ${v.outcome}, expected ${e.verdict}`);
    }
    for (const [k, want] of Object.entries(e.assertions)) {
      const have = k === "secondary" ? v.secondary.join(",") : v.facts[k];
      if (have === undefined) {
        mismatches.push(
          `${k}: not observed (expected ${JSON.stringify(want)})`,
        );
      } else if (have !== want) {
        mismatches.push(
          `${k}: observed ${JSON.stringify(have)}, expected ${
            JSON.stringify(want)
          }`,
        );
      }
    }
    return {
      ...e,
      actual: v.outcome,
      matched: mismatches.length === 0,
      mismatches,
    };
  });
  return {
    matched: results.filter((r) => r.matched).length,
    total: results.length,
    results,
  };
}
