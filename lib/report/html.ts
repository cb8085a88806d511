/**
 * HTML rendering of a report: one self-contained page (inline CSS, no
 * scripts, no external assets), readable offline and safe to open. Pure.
 *
 * Findings first: the claims headline, then one card per violation and
 * per untested claim (what happened in one sentence, the request, the
 * server's answer and the state change), then the tool x test grid, then
 * the details. Every string that came from the report is HTML-escaped:
 * tool names, descriptions, answers, deltas and error messages are written
 * by the server under test and are untrusted. The page also carries a
 * Content-Security-Policy that forbids scripts and every external load, so
 * even a missed escape could not run code or reach the network.
 *
 * @module
 */
import type { Report } from "./report.ts";
import { CSS } from "./_html_parts.ts";
import { runBanners, verdictMatrix } from "./_html_matrix.ts";
import { escapeMarkup as h, toolLabel } from "./_markup.ts";
import { renderDelta, verdictDetails } from "./_html_evidence.ts";
import { claimsLine, reportClaims } from "./claims.ts";
import { type Finding, reportFindings } from "./findings.ts";
import {
  overDeclarationText,
  reportOverDeclarations,
  scopedAdvice,
  toolLevel,
} from "./over_declarations.ts";
import { exclusionText } from "../state/exclude.ts";
import {
  provenanceSection,
  renderTools,
  stateSection,
} from "./_html_sections.ts";
import { expectationsByKey, verdictKey } from "./expectations.ts";
import { renderLearned } from "../init/learn_plan.ts";

/** Most finding cards on a page; the grid and the details hold the rest. */
const CARDS = 50;

/** The headline: the claims, over-declarations and exclusions. */
function claimsSection(report: Report): string {
  const c = reportClaims(report);
  const excluded = exclusionText(
    report.observations.definition.excluded ?? [],
  );
  const all = reportOverDeclarations(report);
  const over = toolLevel(all);
  const scoped = scopedAdvice(all);
  // A note line; none for an empty list.
  const line = (label: string, items: readonly string[]) =>
    items.length === 0
      ? ""
      : `<p class="note"><strong>${label}:</strong> ${h(items.join("; "))}</p>`;
  const e = report.expectations;
  return `<section id="claims"><p class="headline"><strong>claims:</strong> ${
    h(claimsLine(c, report.setupFailure != null))
  }</p>${
    report.audit
      ? ""
      : line("expectations", [`${e.matched}/${e.total} matched`])
  }${
    line(
      "over-declared (behaved more safely than declared)",
      over.map(overDeclarationText),
    )
  }${
    line(
      "advice on exercised argument sets only (not counted)",
      scoped.map(overDeclarationText),
    )
  }${
    line(
      "excluded from judgment by the definition (observed, not counted)",
      excluded,
    )
  }</section>\n`;
}

function card(f: Finding): string {
  const pre = (title: string, text: string | null) =>
    text === null
      ? ""
      : `<div><div class="label">${title}</div><pre>${h(text)}</pre></div>`;
  return `<article class="finding f-${f.kind}"><h3><span class="mono">${
    h(toolLabel(f))
  }</span> ${h(f.test.replaceAll("_", " "))} <span class="badge k-${
    f.kind === "violation" ? "VIOLATION" : "INCONCLUSIVE"
  }">${h(f.kind === "mismatch" ? "expectation not met" : f.outcome)}</span>${
    f.declared ? ` <code>${h(f.declared)}</code>` : ""
  }</h3><p>${h(f.what.charAt(0).toUpperCase() + f.what.slice(1))}</p>${
    f.request || f.answer
      ? `<div class="io">${pre("request", f.request)}${
        pre("answer", f.answer)
      }</div>`
      : ""
  }${
    f.delta === null
      ? ""
      : `<div class="label">state change</div>${renderDelta(f.delta)}`
  }${
    f.verdict === null ? "" : `<a href="#v${f.verdict}">all evidence</a>`
  }</article>`;
}

/** One card per finding, violations first. */
function findingsSection(report: Report): string {
  const all = reportFindings(report);
  if (all.length === 0) {
    return `<section id="findings"><p class="muted">No violation and no untested claim.</p></section>\n`;
  }
  return `<section id="findings">${all.slice(0, CARDS).map(card).join("")}${
    all.length > CARDS
      ? `<p class="note">… and ${
        all.length - CARDS
      } more findings in the grid below.</p>`
      : ""
  }</section>\n`;
}

/**
 * Render a report as one self-contained HTML page.
 *
 * @example
 * ```ts
 * import type { Report } from "./report.ts";
 *
 * async function save(report: Report) {
 *   await Deno.writeTextFile("report.html", renderHtml(report));
 * }
 * ```
 */
export function renderHtml(report: Report): string {
  const p = report.provenance;
  const d = report.observations.definition;
  const name = p.definition.name;
  const expectations = expectationsByKey(report);
  const mismatched = new Set(
    report.verdicts.flatMap((v, i) => {
      const e = expectations.get(verdictKey(v));
      return e !== undefined && !e.matched ? [i] : [];
    }),
  );
  const details = report.verdicts.map((v, i) =>
    verdictDetails(v, i, expectations.get(verdictKey(v)))
  ).join("");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="verity ${h(p.harness.version)}">
<title>verity: ${h(name)} (${h(report.runId)})</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>verity report: ${h(name)}</h1>
<p class="sub">run <span class="mono">${h(report.runId)}</span> · ${
    report.audit ? "audit" : "fixture"
  } · ${h(String(d.runs))} runs · sandbox ${h(report.sandbox.backend)} · ${
    h(p.capturedAt)
  }</p>
${runBanners(report)}${claimsSection(report)}${
    findingsSection(report)
  }<h2>Tools × tests</h2>
${verdictMatrix(report, mismatched)}
${
    report.learned
      ? `<h2 id="learned">What learning did</h2>\n<pre>${
        h(renderLearned({ ...report.learned, target: p.definition.file }))
      }</pre>\n`
      : ""
  }<h2>Provenance</h2>
${provenanceSection(report)}
<h2>State: reset, coverage, control</h2>
${stateSection(report)}
<h2>Evidence per verdict</h2>
${details}
<h2>Declared tools</h2>
${renderTools(report)}
<footer>Rendered by verity ${h(p.harness.version)} from a ${
    h(report.schema)
  } report. Every verdict can be re-derived from the report's evidence with <code>verity report verify report.json</code>.</footer>
</main>
</body>
</html>
`;
}
