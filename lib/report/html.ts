/**
 * HTML rendering of a report: one self-contained page (inline CSS, no
 * scripts, no external assets), readable offline and safe to open. Pure.
 *
 * Every string that came from the report is HTML-escaped: tool names,
 * descriptions, deltas and error messages are written by the server under
 * test and are untrusted. The page also carries a Content-Security-Policy
 * that forbids scripts and every external load, so even a missed escape
 * could not run code or reach the network.
 *
 * @module
 */
import type { Report } from "./report.ts";
import { CSS } from "./_html_parts.ts";
import { SVG_CSS } from "./_html_svg.ts";
import { MATRIX_CSS, runBanners, verdictMatrix } from "./_html_matrix.ts";
import { escapeMarkup as h } from "./_markup.ts";
import { verdictDetails } from "./_html_evidence.ts";
import { type Claims, reportClaims, unobservedWritesText } from "./claims.ts";
import { exclusionText } from "../state/exclude.ts";
import {
  auditSummary,
  expectationsByKey,
  expectationsSection,
  provenanceSection,
  renderTools,
  stateSection,
  summaryCards,
  verdictKey,
  verdictTable,
} from "./_html_sections.ts";

/** The headline: the claims, and every untested one with its reason. */
function claimsSection(report: Report): string {
  const c: Claims = reportClaims(report);
  const excluded = exclusionText(
    report.observations.definition.excluded ?? [],
  );
  const rate = c.violationRate === null
    ? "none tested"
    : `${c.violated}/${c.tested} tested (${
      (100 * c.violationRate).toFixed(0)
    }%)`;
  const untested = c.untested.length === 0
    ? ""
    : `<ul class="untested">${
      c.untested.map((u) =>
        `<li><span class="mono">${
          h(u.variant ? `${u.tool}[${u.variant}]` : u.tool)
        }</span> ${h(u.test)} (${h(u.hint)}): <strong>${
          h(u.reason)
        }</strong></li>`
      ).join("")
    }</ul>`;
  return `<section id="claims" class="claims"><h2>Claims</h2><p><strong>${c.falsifiable}</strong> falsifiable claim${
    c.falsifiable === 1 ? "" : "s"
  }: <strong>${c.held}</strong> held, <strong>${c.violated}</strong> violated, <strong>${c.untested.length}</strong> untested · violation rate ${
    h(rate)
  }</p>${
    c.unobservedWrites === undefined
      ? ""
      : `<p class="unobserved"><strong>${
        h(unobservedWritesText(c.unobservedWrites))
      }</strong></p>`
  }${untested}${
    excluded.length
      ? `<p class="excluded">Excluded from judgment by the definition (observed, not counted): <span class="mono">${
        h(excluded.join("; "))
      }</span></p>`
      : ""
  }</section>
`;
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
<style>${CSS}${MATRIX_CSS}${SVG_CSS}</style>
</head>
<body>
<main>
<h1>verity report: ${h(name)}</h1>
<p class="sub">run <span class="mono">${h(report.runId)}</span> · ${
    report.audit ? "audit" : "fixture"
  } · ${h(String(d.runs))} runs · sandbox ${h(report.sandbox.backend)} · ${
    h(p.capturedAt)
  }</p>
${runBanners(report)}${claimsSection(report)}<h2>Tools × tests</h2>
${verdictMatrix(report, mismatched)}
<div class="cards">${summaryCards(report)}</div>
${auditSummary(report)}
<h2>Verdicts</h2>
${verdictTable(report, expectations)}
<h2>Provenance</h2>
${provenanceSection(report)}
<h2>State: reset, coverage, control</h2>
${stateSection(report)}
<h2>Evidence per verdict</h2>
${details}
${expectationsSection(report)}
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
