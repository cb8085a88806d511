/**
 * Markdown rendering of a report, for a CI job summary or a pull request
 * comment: the claims headline and the findings table (the same findings
 * as the HTML cards). Pure. Every string from the report is escaped for
 * Markdown and HTML (GitHub renders both).
 *
 * @module
 */
import type { Report } from "./report.ts";
import { claimsLine, reportClaims } from "./claims.ts";
import { reportFindings } from "./findings.ts";
import { clip, escapeMarkup, toolLabel } from "./_markup.ts";

/** Most findings rows; the rest are counted. */
const ROWS = 50;

/** Text that renders as itself in GitHub Markdown, on one table cell line. */
function md(s: string): string {
  return escapeMarkup(
    s.replace(/\s+/g, " ").replace(/([\\`*_[\]|~])/g, "\\$1"),
  );
}

/**
 * Render a report's headline and findings as Markdown (ending in a newline).
 *
 * @example
 * ```ts
 * import type { Report } from "./report.ts";
 *
 * function summary(reports: Report[]): string {
 *   return reports.map(renderMarkdown).join("\n");
 * }
 * ```
 */
export function renderMarkdown(report: Report): string {
  const findings = reportFindings(report);
  const out = [
    `### verity: ${md(report.provenance.definition.name)}`,
    "",
    ...(report.setupFailure
      ? [`**SETUP FAILED:** ${md(clip(report.setupFailure, 500))}`, ""]
      : []),
    `**claims:** ${
      md(claimsLine(reportClaims(report), report.setupFailure != null))
    }`,
    "",
  ];
  if (findings.length === 0) {
    out.push("No violation and no untested claim.");
  } else {
    out.push(
      "| finding | tool | test | declared | what happened |",
      "| --- | --- | --- | --- | --- |",
      ...findings.slice(0, ROWS).map((f) =>
        `| ${md(f.kind === "mismatch" ? "expectation not met" : f.outcome)} | ${
          md(toolLabel(f))
        } | ${md(f.test)} | ${md(f.declared)} | ${md(clip(f.what, 400))} |`
      ),
    );
    if (findings.length > ROWS) {
      out.push("", `… and ${findings.length - ROWS} more in the HTML report.`);
    }
  }
  return out.join("\n") + "\n";
}
