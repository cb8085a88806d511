/**
 * Text rendering of a reality report. Pure.
 *
 * @module
 */
import { scoreLine } from "./score.ts";
import { definitionGitText, targetText } from "../prepare/provenance.ts";
import type { ArgumentsFrom } from "./plan.ts";
import type { RealityCallEntry, RealityReport } from "./report.ts";

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

function statusText(status: string): string {
  return (status === "flagged" ? "FLAGGED" : status).padEnd(7);
}

/** Where a call's arguments came from, in words. */
export function argumentsFromText(from: ArgumentsFrom): string {
  if (from.kind === "generated") return "generated arguments";
  return from.variant === null
    ? "the definition's arguments"
    : `the definition's arguments, variant ${JSON.stringify(from.variant)}`;
}

function callDetail(c: RealityCallEntry): string {
  const from = argumentsFromText(c.argumentsFrom);
  if (c.status === "failed") {
    return `${c.failure?.message ?? ""} (${from}; reported apart, not scored)`;
  }
  return `${clip(JSON.stringify(c.arguments), 100)} (${from})`;
}

function findingLines(
  lines: string[],
  indent: string,
  c: RealityCallEntry,
): void {
  for (const f of c.flags) {
    lines.push(`${indent}flag ${f.rule}: ${clip(f.message, 150)}`);
  }
  for (const n of c.notes) {
    lines.push(`${indent}note ${n.rule} (not scored): ${clip(n.message, 140)}`);
  }
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
  const pad = "".padEnd(width);
  for (const t of r.tools) {
    if (t.status === "skipped" || t.calls.length === 0) {
      lines.push(
        `${t.name.padEnd(width)}  ${t.status.padEnd(7)}  ${
          clip(t.skip?.message ?? "", 160)
        }`,
      );
      continue;
    }
    if (t.calls.length === 1) {
      const c = t.calls[0]!;
      lines.push(
        `${t.name.padEnd(width)}  ${statusText(c.status)}  ${
          clip(callDetail(c), 160)
        }`,
      );
      findingLines(lines, `${pad}    `, c);
      continue;
    }
    lines.push(
      `${t.name.padEnd(width)}  ${
        statusText(t.status)
      }  ${t.calls.length} calls`,
    );
    const labels = t.calls.map((c, i) =>
      c.argumentsFrom.kind === "definition" && c.argumentsFrom.variant !== null
        ? `[${c.argumentsFrom.variant}]`
        : `call ${i + 1}`
    );
    const w = Math.max(...labels.map((l) => l.length));
    t.calls.forEach((c, i) => {
      lines.push(
        `${pad}    ${labels[i]!.padEnd(w)}  ${statusText(c.status)}  ${
          clip(callDetail(c), 150)
        }`,
      );
      findingLines(lines, `${pad}      `, c);
    });
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
