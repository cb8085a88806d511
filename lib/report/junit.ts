/**
 * JUnit XML rendering of a report, for CI test reporters. Pure.
 *
 * One `<testsuite>` for the report's definition, one `<testcase
 * classname="<definition>.<tool>" name="<test>" time="…">` per verdict (a
 * variant is written `<tool>[<variant>]`). What fails mirrors the exit code
 * of `verity run`:
 *
 * - fixture run: a testcase fails when its expectation did not match (or
 *   an expectation got no verdict at all: a testcase of its own); a verdict
 *   the fixture records no expectation for is `<skipped>` (nothing was
 *   checked); any matched expectation passes, whatever the outcome
 *   (an expected VIOLATION is the fixture working).
 * - audit run: a VIOLATION fails; PASS passes; an untested claim
 *   (INCONCLUSIVE, or a tool never exercised) is `<skipped>` with the
 *   outcome and its first detail; a NOT_APPLICABLE verdict (no claim to
 *   test) is no testcase but a suite property
 *   `verity.notApplicable.<tool>.<test>`.
 *
 * Valid against the Jenkins JUnit schema (junit-4.xsd), and against the
 * strict Apache Ant schema (JUnit.xsd) whenever nothing is skipped: the
 * root `<testsuites>` has no attributes, the suite has `package`, `id`,
 * `hostname`, a zone-less `timestamp`, `time` and empty `system-out` /
 * `system-err`, and a testcase holds at most its failure, error or skip.
 *
 * @module
 */
import { allowanceLine, type Report } from "./report.ts";
import type { Verdict } from "../verdicts/types.ts";
import {
  type ExpectationResult,
  expectationsByKey,
  verdictKey,
} from "./expectations.ts";
import {
  declaredHint,
  escapeAttribute,
  escapeMarkup,
  toolLabel,
} from "./_markup.ts";
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
  /** Seconds. */
  time: number;
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

/** The session kinds a test compared (control sessions are shared by all). */
const KINDS: Record<string, (kind: string) => boolean> = {
  sequential_idempotence: (k) => k === "twice",
  concurrent_idempotence: (k) => k.startsWith("attempt:"),
};

/** Wall time (s) of the sessions a verdict compared, for its tool. */
function caseTime(report: Report, v: Verdict): number {
  const label = toolLabel(v);
  const kind = KINDS[v.test] ?? ((k: string) => k === "once" || k === "probed");
  const ms = report.sessions.filter((s) => s.tool === label && kind(s.kind))
    .reduce((t, s) => t + (Number.isFinite(s.wallMs) ? s.wallMs : 0), 0);
  return ms / 1000;
}

function buildCases(report: Report, notApplicable: Verdict[]): Case[] {
  const suite = report.provenance.definition.name;
  const expectations = expectationsByKey(report);
  const cases: Case[] = [];
  for (const v of report.verdicts) {
    const c: Case = {
      classname: `${suite}.${toolLabel(v)}`,
      name: v.test,
      failure: null,
      skipped: null,
      time: caseTime(report, v),
    };
    if (report.audit) {
      if (v.kind === "NOT_APPLICABLE") {
        notApplicable.push(v);
        continue;
      }
      if (v.kind === "VIOLATION") {
        c.failure = {
          type: "VIOLATION",
          message: `${v.tool} ${declaredHint(v)}, but observed ${v.observed}`,
          body: v.details.join("\n"),
        };
      } else if (v.kind !== "PASS") {
        c.skipped = v.details[0] ? `${v.outcome}: ${v.details[0]}` : v.outcome;
      }
    } else {
      const e = expectations.get(verdictKey(v));
      expectations.delete(verdictKey(v));
      if (!e) c.skipped = `no expectation recorded (verdict ${v.outcome})`;
      else if (!e.matched) c.failure = expectationFailure(e);
    }
    cases.push(c);
  }
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
        time: 0,
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
        time: 0,
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
  const notApplicable: Verdict[] = [];
  const cases = buildCases(report, notApplicable);
  const effects = stateEffectsOf(report);
  const setup = report.setupFailure ?? null;
  const skipped = cases.filter((c) => c.skipped !== null).length;
  const seconds = (t: number) => t.toFixed(3);
  const counts = [
    attr("tests", cases.length + (setup === null ? 0 : 1)),
    attr("failures", cases.filter((c) => c.failure !== null).length),
    attr("errors", setup === null ? 0 : 1),
    // The strict Ant schema has no skipped count (nor skipped cases).
    ...(skipped ? [attr("skipped", skipped)] : []),
    attr(
      "time",
      seconds(report.sessions.reduce((t, s) => t + (s.wallMs || 0), 0) / 1000),
    ),
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
    ["verity.sandbox.allowances", allowanceLine(report.sandbox.allow)],
    ["verity.deno", p.deno],
    ["verity.runs", String(d.runs)],
    ["verity.reset", d.reset.verified ? "verified" : "NOT verified"],
    ["verity.coverage", coverageWord(d.coverage)],
    ["verity.control.effect", controlEffectText(effects)],
    ["verity.erroredCalls", erroredSummary(effects)],
    ...notApplicable.map((v) =>
      [
        `verity.notApplicable.${toolLabel(v)}.${v.test}`,
        `${v.outcome}; observed ${v.observed}${
          v.overDeclared ? " (over-declared)" : ""
        }`,
      ] as [string, string]
    ),
  ];
  if (!report.audit) {
    properties.push([
      "verity.expectations",
      `${report.expectations.matched}/${report.expectations.total} matched`,
    ]);
  }
  const out: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites>`,
    `  <testsuite ${attr("name", p.definition.name)} ${counts} ${
      // UTC, to the second: the Ant schema's timestamp has no zone or fraction
      attr("timestamp", p.capturedAt.slice(0, 19))} ${
      attr("hostname", "localhost")
    } ${attr("package", p.definition.name)} ${attr("id", 0)}>`,
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
      } ${attr("time", "0.000")}>`,
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
      } ${attr("time", seconds(c.time))}>`,
    );
    if (c.failure) {
      out.push(
        `      <failure ${attr("message", c.failure.message)} ${
          attr("type", c.failure.type)
        }>${escapeMarkup(c.failure.body)}</failure>`,
      );
    }
    if (c.skipped !== null) {
      // The reason as text: junit-4.xsd's skipped has no attributes.
      out.push(`      <skipped>${escapeMarkup(c.skipped)}</skipped>`);
    }
    out.push(`    </testcase>`);
  }
  out.push(
    `    <system-out/>`,
    `    <system-err/>`,
    `  </testsuite>`,
    `</testsuites>`,
  );
  return out.join("\n") + "\n";
}
