/**
 * The text summary of a report. Pure.
 *
 * @module
 */
import { allowanceLine, type Report } from "./report.ts";
import type { Verdict } from "../verdicts/types.ts";
import {
  overDeclarationText,
  reportOverDeclarations,
  scopedAdvice,
  toolLevel,
} from "./over_declarations.ts";
import {
  controlEffectText,
  definitionGitText,
  erroredSessions,
  erroredSummary,
  stateEffectsOf,
  targetText,
} from "./_provenance_text.ts";
import { erroredCallLabel, erroredCallStateText } from "./effects.ts";
import { claimsLine, reportClaims } from "./claims.ts";
import { expectationsByKey, verdictKey } from "./expectations.ts";
import { exclusionText } from "../state/exclude.ts";
import { showControls } from "../common/show_controls.ts";
import { renderLearned } from "../init/learn_plan.ts";

/** Most errored sessions that changed state listed one per line in the text summary. */
const ERRORED_LINES = 10;

/** What the observed cell adds: over-declared, or a repeated call that errored. */
export function observedNote(v: Verdict): string {
  if (v.overDeclared) return " (over-declared)";
  if (v.facts.repeat_errored === true) return " (repeated call errored)";
  if (v.facts.call_errored === true && v.kind !== "INCONCLUSIVE") {
    return " (a call errored)";
  }
  return "";
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) =>
    Math.max(...rows.map((r) => (r[i] ?? "").length))
  );
  return rows.map((r) =>
    r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  );
}

function attemptLine(v: Verdict): string | null {
  const counts = v.evidence.counts as
    | Record<string, Record<string, number>>
    | undefined;
  if (!counts) return null;
  const parts = Object.entries(counts).filter(([, c]) => (c.attempts ?? 0) > 0)
    .map(([mode, c]) =>
      `${mode}: ${c.diverged}/${c.attempts} diverged, overlap ${c.overlapped}${
        c.setup_failed ? `, ${c.setup_failed} failed to start` : ""
      }${c.timed_out ? `, ${c.timed_out} timed out` : ""}`
    );
  const produced = (v.evidence.producedBy as string[] | undefined) ?? [];
  if (parts.length === 0) return null;
  return `attempts: ${parts.join("; ")}${
    produced.length ? `; produced by: ${produced.join(", ")}` : ""
  }`;
}

/**
 * Whether the sandbox saw refused attempts (verdict rules version 5 on):
 * null for reports that do not record them.
 */
function attemptsLine(
  control: readonly { attempts?: unknown }[],
): string | null {
  if (control.length === 0 || control.some((c) => c.attempts === undefined)) {
    return null;
  }
  return control.every((c) => Array.isArray(c.attempts))
    ? "seen (the deno permission log: writes, reads, env, net, ffi, sys; not subprocesses)"
    : "UNSEEN (this backend records no attempts: a refused write, read or lookup leaves no trace; read_only is judged on state only)";
}

/** Render the seed-style text summary (a learned target's: what learning did first). */
export function renderText(r: Report): string {
  const d = r.observations.definition;
  const lines: string[] = r.learned
    ? [renderLearned({ ...r.learned, target: r.provenance.definition.file })]
    : [];
  const setup = r.setupFailure ?? null;
  if (setup !== null) {
    lines.push(
      `SETUP FAILED: ${r.provenance.definition.name} could not be audited; every verdict is INCONCLUSIVE:SETUP_FAILED`,
      `  cause: ${setup}`,
      "",
    );
  }
  lines.push(
    `${r.provenance.definition.name}  run ${r.runId}  (${d.runs} runs, sandbox: ${r.sandbox.backend})`,
    `  claims: ${showControls(claimsLine(reportClaims(r), setup !== null))}`,
  );
  const excluded = exclusionText(d.excluded ?? []);
  if (excluded.length) {
    lines.push(
      `  excluded from judgment by the definition (observed, not counted): ${
        showControls(excluded.join("; "))
      }`,
    );
  }
  const p = r.provenance;
  lines.push(
    `  definition: ${p.definition.file} ${p.definition.digest} (git: ${
      definitionGitText(p.definition.git)
    })`,
    `  target: ${targetText(p.target)}`,
    `  sandbox allowances: ${allowanceLine(r.sandbox.allow)}`,
  );
  const seen = attemptsLine(d.control);
  if (seen !== null) lines.push(`  attempts: ${seen}`);
  lines.push(
    `  reset: ${
      d.reset.verified ? "verified" : `NOT verified (${d.reset.problem})`
    }`,
  );
  const missing = d.coverage.locations.filter((l) => l.observedBy === null).map(
    (l) =>
      l.location.startsWith("memory:")
        ? `${l.location}, state in process memory: UNOBSERVED_STATE`
        : l.location,
  );
  lines.push(
    `  coverage: ${
      d.coverage.locations.length === 0
        ? "none (no state locations declared: no behaviour can be seen to hold)"
        : d.coverage.complete
        ? "complete"
        : `partial (not observed: ${missing.join(", ")})`
    }`,
  );
  const ctl = new Set(d.control.map((c) => c.stateDigest));
  const failedCtl = d.control.filter((c) => c.setupFailure !== null);
  lines.push(
    `  control sessions: ${
      failedCtl.length
        ? `${failedCtl.length} failed (${failedCtl[0]!.setupFailure})`
        : ctl.size === 1
        ? "stable"
        : "UNSTABLE"
    }${d.startupWrites ? "; the server writes state on start or stop" : ""}`,
  );
  const effects = stateEffectsOf(r);
  lines.push(
    `  control effect: ${controlEffectText(effects)}`,
    `  errored calls: ${erroredSummary(effects)}`,
  );
  // A tool that errors yet changes state is worth a line each.
  const changed = erroredSessions(effects).filter((s) =>
    s.first.stateChanged === true
  );
  for (const s of changed.slice(0, ERRORED_LINES)) {
    lines.push(
      `    ${erroredCallLabel(s.first)} ${s.first.status}${
        s.calls > 1 ? ` (and ${s.calls - 1} more call(s) in the session)` : ""
      }: ${erroredCallStateText(s.first)}`,
    );
  }
  if (changed.length > ERRORED_LINES) {
    lines.push(
      `    … and ${
        changed.length - ERRORED_LINES
      } more session(s) (stateEffects.erroredCalls in the report)`,
    );
  }
  lines.push("");
  const exp = expectationsByKey(r);
  const rows: string[][] = [[
    "tool",
    "test",
    "declared",
    "verdict",
    "observed",
    ...(r.audit ? [] : ["expected"]),
  ]];
  const notes = new Map<number, string[]>();
  for (const v of r.verdicts) {
    const name = showControls(v.variant ? `${v.tool}[${v.variant}]` : v.tool);
    const e = exp.get(verdictKey(v));
    const expCell = e
      ? (e.matched ? "ok" : `MISMATCH: expected ${e.verdict}`)
      : "-";
    rows.push([
      name,
      v.test,
      v.declared.toLowerCase(),
      v.outcome,
      v.observed + observedNote(v),
      ...(r.audit ? [] : [expCell]),
    ]);
    const extra: string[] = [];
    const al = attemptLine(v);
    if (al && v.test === "concurrent_idempotence") extra.push(al);
    if (v.facts.server_failed === true) {
      // the cause is the banner above the table
    } else if (v.kind === "VIOLATION" || v.kind === "INCONCLUSIVE") {
      extra.push(...v.details.slice(0, 3));
    } else if (v.facts.process_memory === true) extra.push(v.details[0]!);
    if (e && !e.matched) extra.push(...e.mismatches);
    if (extra.length) notes.set(rows.length - 1, extra);
  }
  const rendered = table(rows);
  rendered.forEach((line, i) => {
    lines.push(`  ${line}`);
    for (const n of notes.get(i) ?? []) lines.push(`      ${n}`);
  });
  lines.push("");
  if (r.audit) {
    const violations = r.verdicts.filter((v) => v.kind === "VIOLATION");
    const all = reportOverDeclarations(r);
    const over = toolLevel(all);
    const scoped = scopedAdvice(all);
    lines.push(
      `  violations: ${violations.length}${
        violations.length
          ? ` (${
            violations.map((v) => `${showControls(v.tool)} ${v.test}`).join(
              "; ",
            )
          })`
          : ""
      }`,
    );
    lines.push(
      `  over-declarations: ${over.length}${
        over.length
          ? ` (${showControls(over.map(overDeclarationText).join("; "))})`
          : ""
      }`,
    );
    if (scoped.length) {
      lines.push(
        `  advice on exercised argument sets only (not counted): ${
          showControls(scoped.map(overDeclarationText).join("; "))
        }`,
      );
    }
  } else {
    lines.push(
      `  expectations: ${r.expectations.matched}/${r.expectations.total} matched`,
    );
  }
  if (r.unexercised.length) {
    lines.push(
      `  listed but not exercised: ${
        r.unexercised.map(showControls).join(", ")
      }`,
    );
  }
  return lines.join("\n");
}
