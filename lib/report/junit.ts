/**
 * JUnit XML rendering of a report, for CI test reporters. Pure.
 *
 * One `<testsuite>` for the report's definition, one `<testcase
 * classname="<definition>.<tool>" name="<test>">` per verdict (a variant
 * is written `<tool>[<variant>]`). What fails mirrors the exit code of
 * `verity run`:
 *
 * - fixture run: a testcase fails when its expectation did not match (or
 *   an expectation got no verdict at all: a testcase of its own); a verdict
 *   the fixture records no expectation for is `<skipped>` (nothing was
 *   checked); any matched expectation passes, whatever the outcome
 *   (an expected VIOLATION is the fixture working).
 * - audit run: a VIOLATION fails; PASS passes; INCONCLUSIVE and
 *   NOT_APPLICABLE are `<skipped>` with the outcome and its first detail.
 *
 * @module
 */
import { allowanceLine, type Report } from "./report.ts";
import type { Verdict } from "../verdicts/types.ts";
import type { ExpectationResult } from "./expectations.ts";
import { escapeAttribute, escapeMarkup, toolLabel } from "./_markup.ts";
import { claimsLine, NOT_EXERCISED, reportClaims } from "./claims.ts";
import { exclusionText } from "../state/exclude.ts";
import {
  controlEffectText,
  definitionGitText,
  erroredSummary,
  NOT_RECORDED,
  stateEffectsOf,
  targetText,
} from "./_provenance_text.ts";

interface Case {
  classname: string;
  name: string;
  failure: { type: string; message: string; body: string } | null;
  skipped: string | null;
  out: string;
}

function declaredText(v: Verdict): string {
  return `${v.hint}: ${v.declared.toLowerCase()}`;
}

function verdictOut(v: Verdict): string {
  const lines = [
    `declared: ${declaredText(v)}`,
    `verdict: ${v.outcome}${
      v.secondary.length ? ` (also ${v.secondary.join(", ")})` : ""
    }`,
    `observed: ${v.observed}${v.overDeclared ? " (over-declared)" : ""}`,
    ...v.details.map((d) => `detail: ${d}`),
  ];
  return lines.join("\n");
}

function expectationFailure(
  e: ExpectationResult,
): NonNullable<Case["failure"]> {
  return {
    type: "expectation",
    message: `expected ${e.verdict}, got ${e.actual ?? "no verdict"}`,
    body: e.mismatches.join("\n"),
  };
}

function buildCases(report: Report): Case[] {
  const suite = report.provenance.definition.name;
  const key = (t: { tool: string; variant: string | null; test: string }) =>
    `${t.tool}\u0000${t.variant}\u0000${t.test}`;
  const expectations = new Map(
    report.expectations.results.map((e) => [key(e), e]),
  );
  const cases: Case[] = report.verdicts.map((v) => {
    const c: Case = {
      classname: `${suite}.${toolLabel(v)}`,
      name: v.test,
      failure: null,
      skipped: null,
      out: verdictOut(v),
    };
    if (report.audit) {
      if (v.kind === "VIOLATION") {
        c.failure = {
          type: "VIOLATION",
          message: `${v.tool} ${declaredText(v)}, but observed ${v.observed}`,
          body: v.details.join("\n"),
        };
      } else if (v.kind !== "PASS") {
        c.skipped = v.details[0] ? `${v.outcome}: ${v.details[0]}` : v.outcome;
      }
      return c;
    }
    const e = expectations.get(key(v));
    expectations.delete(key(v));
    if (!e) c.skipped = `no expectation recorded (verdict ${v.outcome})`;
    else if (!e.matched) c.failure = expectationFailure(e);
    return c;
  });
  if (report.audit) {
    // Claims of listed tools the definition never exercised: untested.
    for (const u of reportClaims(report).untested) {
      if (u.reason !== NOT_EXERCISED) continue;
      cases.push({
        classname: `${suite}.${toolLabel(u)}`,
        name: u.test,
        failure: null,
        skipped:
          `${NOT_EXERCISED}: ${u.hint} is a claim, but the definition does not exercise ${u.tool}`,
        out:
          `declared: ${u.hint} (a falsifiable claim)\nverdict: untested (${NOT_EXERCISED})`,
      });
    }
  } else {
    // Expectations that got no verdict at all.
    for (const e of expectations.values()) {
      cases.push({
        classname: `${suite}.${toolLabel(e)}`,
        name: e.test,
        failure: expectationFailure(e),
        skipped: null,
        out: `expected: ${e.verdict}`,
      });
    }
  }
  return cases;
}

function coverageWord(c: Report["observations"]["definition"]["coverage"]) {
  return c.locations.length === 0
    ? "none"
    : c.complete
    ? "complete"
    : "partial";
}

function attr(name: string, value: string | number): string {
  return `${name}="${escapeAttribute(String(value))}"`;
}

/**
 * Render a report as JUnit XML (ending in a newline). Every string is
 * XML-escaped; characters XML cannot carry are written as `\u{…}`.
 *
 * @example
 * ```ts
 * import type { Report } from "./report.ts";
 *
 * async function save(report: Report) {
 *   await Deno.writeTextFile("verity-junit.xml", renderJunit(report));
 * }
 * ```
 */
export function renderJunit(report: Report): string {
  const p = report.provenance;
  const d = report.observations.definition;
  const cases = buildCases(report);
  const effects = stateEffectsOf(report);
  const setup = report.setupFailure ?? null;
  const failures = cases.filter((c) => c.failure !== null).length;
  const skipped = cases.filter((c) => c.skipped !== null).length;
  const counts = [
    attr("tests", cases.length + (setup === null ? 0 : 1)),
    attr("failures", failures),
    attr("errors", setup === null ? 0 : 1),
    attr("skipped", skipped),
  ].join(" ");
  const claims = reportClaims(report);
  const properties: [string, string][] = [
    ["verity.claims", claimsLine(claims, setup !== null)],
    ["verity.claims.falsifiable", String(claims.falsifiable)],
    ["verity.claims.held", String(claims.held)],
    ["verity.claims.violated", String(claims.violated)],
    ["verity.claims.untested", String(claims.untested.length)],
    [
      "verity.excluded",
      exclusionText(d.excluded ?? []).join("; ") || "none",
    ],
    ["verity.runId", report.runId],
    ["verity.mode", report.audit ? "audit" : "fixture"],
    ["verity.definition.kind", p.definition.kind],
    ["verity.definition.file", p.definition.file],
    ["verity.definition.digest", p.definition.digest],
    ["verity.definition.git", definitionGitText(p.definition.git)],
    [
      "verity.definition.git.commit",
      p.definition.git ? p.definition.git.commit ?? "unknown" : NOT_RECORDED,
    ],
    [
      "verity.definition.git.dirty",
      p.definition.git
        ? p.definition.git.dirty === null
          ? "unknown"
          : String(p.definition.git.dirty)
        : NOT_RECORDED,
    ],
    ["verity.target", targetText(p.target)],
    ...(p.target?.pinned === true
      ? [
        ["verity.target.package", p.target.package],
        ["verity.target.version", p.target.version],
        ["verity.target.integrity", p.target.integrity],
        ["verity.target.preparedCache", "true"],
      ] as [string, string][]
      : []),
    ["verity.version", p.harness.version],
    ["verity.commit", p.harness.commit ?? "unknown"],
    ["verity.sandbox", report.sandbox.backend],
    [
      "verity.sandbox.allowances",
      allowanceLine(report.sandbox.allow) ?? "none (default sandbox)",
    ],
    ["verity.deno", p.deno],
    ["verity.runs", String(d.runs)],
    ["verity.reset", d.reset.verified ? "verified" : "NOT verified"],
    ["verity.coverage", coverageWord(d.coverage)],
    ["verity.control.effect", controlEffectText(effects)],
    ["verity.erroredCalls", erroredSummary(effects)],
  ];
  if (!report.audit) {
    properties.push([
      "verity.expectations",
      `${report.expectations.matched}/${report.expectations.total} matched`,
    ]);
  }
  const out: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites ${attr("name", "verity")} ${counts}>`,
    `  <testsuite ${attr("name", p.definition.name)} ${counts} ${
      attr("timestamp", p.capturedAt)
    }>`,
    `    <properties>`,
    ...properties.map(([k, v]) =>
      `      <property ${attr("name", k)} ${attr("value", v)}/>`
    ),
    `    </properties>`,
  ];
  if (setup !== null) {
    // First: the run could not audit the server at all.
    out.push(
      `    <testcase ${attr("classname", `${p.definition.name}.server`)} ${
        attr("name", "setup")
      }>`,
      `      <error ${attr("message", setup)} ${attr("type", "SETUP_FAILED")}>${
        escapeMarkup(setup)
      }</error>`,
      `    </testcase>`,
    );
  }
  for (const c of cases) {
    out.push(
      `    <testcase ${attr("classname", c.classname)} ${
        attr("name", c.name)
      }>`,
    );
    if (c.failure) {
      out.push(
        `      <failure ${attr("message", c.failure.message)} ${
          attr("type", c.failure.type)
        }>${escapeMarkup(c.failure.body)}</failure>`,
      );
    }
    if (c.skipped !== null) {
      out.push(`      <skipped ${attr("message", c.skipped)}/>`);
    }
    out.push(`      <system-out>${escapeMarkup(c.out)}</system-out>`);
    out.push(`    </testcase>`);
  }
  out.push(`  </testsuite>`, `</testsuites>`);
  return out.join("\n") + "\n";
}
