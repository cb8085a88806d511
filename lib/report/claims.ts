/**
 * The headline of every report: the falsifiable claims a server made
 * (`readOnlyHint: true`, `destructiveHint: false`, `idempotentHint: true`,
 * `openWorldHint: false`), how many were tested (PASS or VIOLATION), held,
 * violated, and every one that could not be tested, with why. A claim of a
 * listed tool the definition never exercised is untested too
 * (`NOT_EXERCISED`). Pure.
 *
 * @module
 */
import {
  type HintName,
  type HintState,
  parseToolPages,
} from "../contracts/contracts.ts";
import type { TestName } from "../definition/types.ts";
import { TEST_NAMES } from "../definition/types.ts";
import { CHECKS } from "../verdicts/battery.ts";
import { declarationReason } from "../verdicts/rules/declaration.ts";
import type { Verdict } from "../verdicts/types.ts";

/** Why an untested claim of a listed tool was never judged: the definition did not exercise the tool. */
export const NOT_EXERCISED = "NOT_EXERCISED";

/** A falsifiable claim that was not tested, and why. */
export interface UntestedClaim {
  tool: string;
  variant: string | null;
  test: TestName;
  hint: HintName;
  /** The verdict's primary reason (`CALL_ERROR`, …), or `NOT_EXERCISED`. */
  reason: string;
}

/** `summary.claims` of a report. */
export interface Claims {
  /** Verdicts (and unexercised tests) whose declaration is a falsifiable claim. */
  falsifiable: number;
  /** Claims judged PASS or VIOLATION. */
  tested: number;
  held: number;
  violated: number;
  /** violated / tested, or null when nothing was tested (mcp-groundtruth's denominator). */
  violationRate: number | null;
  untested: UntestedClaim[];
  /**
   * Why writes outside the declared state were not observed (no overlay
   * here: every verdict rests on the declared adapters alone); absent when
   * they were, and in reports before it.
   */
  unobservedWrites?: string;
}

/** What every headline says when writes outside the declared state were not observed. */
export function unobservedWritesText(why: string): string {
  return `writes outside declared state: not observed (${why})`;
}

/** The declared hints of a tool, as the report's observations keep them. */
export interface DeclaredTool {
  tool: string;
  hints: Readonly<Record<HintName, { state: HintState }>>;
}

/**
 * Whether a test's declaration is a falsifiable claim: its hint has the
 * claiming value and, for the idempotence and destructive tests, the tool
 * is not declared read-only (a read-only claim supersedes them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const hints = {
 *   readOnlyHint: { state: "TRUE" as const },
 *   destructiveHint: { state: "FALSE" as const },
 *   idempotentHint: { state: "ABSENT" as const },
 *   openWorldHint: { state: "FALSE" as const },
 * };
 * assert.equal(isClaim("read_only", hints), true);
 * assert.equal(isClaim("destructive", hints), false);
 * ```
 */
export function isClaim(
  test: TestName,
  hints: DeclaredTool["hints"],
): boolean {
  return declarationReason(test, { hints }) === null;
}

/**
 * Count a report's claims from its verdicts, the declared hints of the
 * exercised tools and those of listed tools nobody exercised.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const c = claimsOf([], [], [{
 *   tool: "read_file",
 *   hints: {
 *     readOnlyHint: { state: "TRUE" },
 *     destructiveHint: { state: "ABSENT" },
 *     idempotentHint: { state: "ABSENT" },
 *     openWorldHint: { state: "ABSENT" },
 *   },
 * }]);
 * assert.deepEqual([c.falsifiable, c.tested, c.untested[0]?.reason], [1, 0, "NOT_EXERCISED"]);
 * ```
 */
export function claimsOf(
  verdicts: readonly Verdict[],
  exercised: readonly (DeclaredTool & { variant: string | null })[],
  unexercised: readonly DeclaredTool[],
): Claims {
  let tested = 0;
  let held = 0;
  let violated = 0;
  const untested: UntestedClaim[] = [];
  for (const v of verdicts) {
    const t = exercised.find((x) =>
      x.tool === v.tool && x.variant === v.variant
    );
    if (t === undefined || !isClaim(v.test, t.hints)) continue;
    if (v.kind === "PASS") held++;
    else if (v.kind === "VIOLATION") violated++;
    else {
      untested.push({
        tool: v.tool,
        variant: v.variant,
        test: v.test,
        hint: v.hint,
        reason: v.reason ?? v.kind,
      });
      continue;
    }
    tested++;
  }
  for (const t of unexercised) {
    for (const test of TEST_NAMES) {
      if (!isClaim(test, t.hints)) continue;
      untested.push({
        tool: t.tool,
        variant: null,
        test,
        hint: CHECKS[test].hint,
        reason: NOT_EXERCISED,
      });
    }
  }
  return {
    falsifiable: tested + untested.length,
    tested,
    held,
    violated,
    violationRate: tested === 0 ? null : violated / tested,
    untested,
  };
}

/** Most untested claims named in a headline line; the rest are counted. */
const NAMED = 8;

/**
 * The headline line every format leads with:
 * `12 claims: 9 held, 1 violated, 2 untested (move_file destructive: CALL_ERROR; …)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   claimsLine({ falsifiable: 0, tested: 0, held: 0, violated: 0, violationRate: null, untested: [] }),
 *   "0 claims: the server declared nothing a test can contradict",
 * );
 * ```
 */
export function claimsLine(c: Claims, setupFailed = false): string {
  const unseen = c.unobservedWrites === undefined
    ? ""
    : `; ${unobservedWritesText(c.unobservedWrites)}`;
  if (c.falsifiable === 0) {
    // A server that never listed its tools declared nothing we know of.
    return setupFailed
      ? "claims unknown: the server could not be audited (setup failed), nothing was tested"
      : `0 claims: the server declared nothing a test can contradict${unseen}`;
  }
  const head = `${c.falsifiable} claim${
    c.falsifiable === 1 ? "" : "s"
  }: ${c.held} held, ${c.violated} violated, ${c.untested.length} untested`;
  const rate = c.violationRate === null
    ? "violation rate: none tested"
    : `violation rate ${c.violated}/${c.tested} tested (${
      (100 * c.violationRate).toFixed(0)
    }%)`;
  if (c.untested.length === 0) return `${head}; ${rate}${unseen}`;
  const named = c.untested.slice(0, NAMED).map((u) =>
    `${u.variant ? `${u.tool}[${u.variant}]` : u.tool} ${u.test}: ${u.reason}`
  );
  const more = c.untested.length > NAMED
    ? `; and ${c.untested.length - NAMED} more`
    : "";
  return `${head} (${named.join("; ")}${more}); ${rate}${unseen}`;
}

/** What {@linkcode reportClaims} reads of a report. */
export interface ClaimsInput {
  verdicts: readonly Verdict[];
  observations: {
    definition?: { writes?: { observed: boolean; why: string | null } };
    tools: readonly (DeclaredTool & { variant: string | null })[];
  };
  unexercised: readonly string[];
  protocol: { toolsList: readonly string[] };
}

/**
 * The claims of a report, derived from its verdicts, the hints its
 * observations keep for every exercised tool, and the raw listing for the
 * tools it lists as unexercised. Every format reads this, not a stored
 * summary; `report verify` checks the stored `summary.claims` against it.
 *
 * @example
 * ```ts ignore
 * claimsLine(reportClaims(report)); // "5 claims: 4 held, 1 violated, 0 untested; ..."
 * ```
 */
export function reportClaims(r: ClaimsInput): Claims {
  const listed = parseToolPages(r.protocol.toolsList).contracts;
  const unexercised = r.unexercised.flatMap((name) => {
    const c = listed.find((x) => x.name === name);
    return c === undefined ? [] : [{ tool: name, hints: c.hints }];
  });
  const claims = claimsOf(r.verdicts, r.observations.tools, unexercised);
  const writes = r.observations.definition?.writes;
  if (writes !== undefined && !writes.observed) {
    claims.unobservedWrites = writes.why ?? "no overlay";
  }
  return claims;
}
