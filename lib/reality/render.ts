/**
 * Text rendering of a reality report. Pure.
 *
 * @module
 */
import { scoreLine } from "./score.ts";
import { definitionGitText, targetText } from "../audit/provenance.ts";
import type { RealityReport } from "./report.ts";

function clip(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function serverLabel(r: RealityReport): string {
  const info = r.server.serverInfo;
  if (typeof info === "object" && info !== null) {
    const i = info as Record<string, unknown>;
    if (typeof i.name === "string") {
      return `${i.name}${typeof i.version === "string" ? " " + i.version : ""}`;
    }
  }
  return r.server.target ?? r.server.command?.join(" ") ?? "server";
}

/**
 * Render the report as the text summary printed on stdout.
 *
 * @example
 * ```ts ignore
 * console.log(renderRealityText(report));
 * ```
 */
export function renderRealityText(r: RealityReport): string {
  const lines: string[] = [];
  const scope = r.options.includeDestructive ? "all tools" : "read-only tools";
  const where = r.server.scratchState
    ? `, sandbox ${r.server.sandbox}, scratch state`
    : r.options.includeDestructive
    ? ", unsandboxed"
    : "";
  lines.push(
    `verity reality: ${
      serverLabel(r)
    } (${r.tools.length} tools, ${scope}, seed ${r.options.seed}${where})`,
  );
  const def = r.server.definition;
  if (def !== undefined && r.server.target !== null) {
    lines.push(
      `definition: ${r.server.target} ${def.digest} (git: ${
        definitionGitText(def.git)
      })`,
      `target: ${targetText(r.server.pin)}`,
    );
  }
  lines.push("");
  const width = Math.min(40, Math.max(4, ...r.tools.map((t) => t.name.length)));
  for (const t of r.tools) {
    const status = t.status === "flagged" ? "FLAGGED" : t.status;
    let detail = "";
    if (t.status === "skipped") detail = t.skip?.message ?? "";
    else if (t.status === "failed") {
      detail = `${t.failure?.message ?? ""} (reported apart, not scored)`;
    } else detail = clip(JSON.stringify(t.arguments ?? {}), 100);
    lines.push(
      `${t.name.padEnd(width)}  ${status.padEnd(7)}  ${clip(detail, 160)}`,
    );
    for (const f of t.flags) {
      lines.push(
        `${"".padEnd(width)}    flag ${f.rule}: ${clip(f.message, 150)}`,
      );
    }
    for (const n of t.notes) {
      lines.push(
        `${"".padEnd(width)}    note ${n.rule} (not scored): ${
          clip(n.message, 140)
        }`,
      );
    }
  }
  for (const p of r.listingProblems) lines.push(`listing problem: ${p}`);
  if (r.ended) lines.push(`ENDED EARLY: ${r.ended}`);
  const s = r.summary;
  lines.push("");
  lines.push(`Score: ${scoreLine(s)}`);
  if (s.score !== null) {
    lines.push(
      `  ${s.passed} of ${s.checkable} checkable tools not flagged; ${s.checkable} of ${s.tools} tools checked${
        s.lowCoverage
          ? " (under half: no grade; --fail-under fails unless --allow-low-coverage)"
          : ""
      }`,
    );
  }
  lines.push(
    `Checkable ${s.checkable}: passed ${s.passed}, flagged ${s.flagged}. Failed ${s.failed} (not scored). ` +
      `Skipped ${s.skipped}. Echo mismatches ${s.echoMismatches} (not scored).`,
  );
  return lines.join("\n");
}
