/**
 * What a reader acts on, first in the HTML page and the job summary: one
 * finding per VIOLATION and per untested claim (and, in a fixture run, per
 * expectation that did not match), each with what happened in one
 * sentence, the call's request and the server's answer (bounded) and the
 * state change that decided it. Pure.
 *
 * @module
 */
import type { Report } from "./report.ts";
import { verdictKey } from "./expectations.ts";
import type { Verdict } from "../verdicts/types.ts";
import type { SessionRecord } from "../history/types.ts";
import { CHECKS } from "../verdicts/battery.ts";
import { type Claims, NOT_EXERCISED, reportClaims } from "./claims.ts";
import { clip, declaredHint, toolLabel } from "./_markup.ts";
import { arr, type Json, obj, str } from "./_html_parts.ts";

/** Longest request or answer text a finding carries. */
export const EXCHANGE_MAX = 1500;

/** One thing to act on. */
export interface Finding {
  kind: "violation" | "untested" | "mismatch";
  tool: string;
  variant: string | null;
  test: string;
  /** `destructiveHint: false`, as declared. */
  declared: string;
  /** The verdict's outcome, or `untested: NOT_EXERCISED`. */
  outcome: string;
  /** What happened, in one sentence. */
  what: string;
  /** The `tools/call` params sent (JSON, bounded), or null. */
  request: string | null;
  /** The server's answer (bounded), or null. */
  answer: string | null;
  /** The summarized delta that decided it, or null. */
  delta: unknown;
  /** Index of the verdict in `report.verdicts`, or null (never exercised). */
  verdict: number | null;
}

/** The comparison rows of a test, and the session kind its calls ran in. */
const ROWS: Record<string, [string, string]> = {
  read_only: ["control_vs_once", "once"],
  destructive: ["control_vs_once", "once"],
  open_world: ["network", "once"],
  sequential_idempotence: ["once_vs_twice", "twice"],
  concurrent_idempotence: ["attempts", "attempt"],
};

/** A record's name: the path of a one-string key, else `region key`. */
function recordName(region: string, key: string): string {
  const m = /^\["((?:[^"\\]|\\.)*)"\]$/.exec(key);
  if (m) {
    try {
      return JSON.parse(`"${m[1]}"`) as string;
    } catch { /* shown as stored */ }
  }
  return `${region} ${key}`;
}

/** The changes of a summarized delta, as verbs: `removed a`, `overwrote b (name: "x" → "y")`. */
export function deltaEffects(delta: unknown): string[] {
  const out: string[] = [];
  for (const cat of ["business", "append_only", "unclassified"]) {
    const cd = obj(obj(delta)[cat]);
    const name = (r: unknown) =>
      recordName(str(obj(r).region), str(obj(r).key));
    for (const r of arr(cd.removed)) out.push(`removed ${name(r)}`);
    for (const r of arr(cd.changed)) {
      const fields = arr(obj(r).fields).map((f) =>
        `${str(obj(f).field)}: ${
          clip(JSON.stringify(obj(f).before) ?? "absent", 24)
        } → ${clip(JSON.stringify(obj(f).after) ?? "absent", 24)}`
      );
      out.push(
        `${obj(r).lossy === true ? "overwrote" : "changed"} ${name(r)}${
          fields.length ? ` (${fields.slice(0, 2).join(", ")})` : ""
        }`,
      );
    }
    for (const r of arr(cd.added)) out.push(`added ${name(r)}`);
    for (const r of arr(cd.structure)) {
      out.push(`${str(obj(r).change)} table ${str(obj(r).region)}`);
    }
  }
  return out;
}

function joinEffects(e: string[]): string {
  const shown = e.slice(0, 3);
  const more = e.length > 3 ? ` and ${e.length - 3} more` : "";
  return shown.length < 2
    ? `${shown.join("")}${more}`
    : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}${more}`;
}

/** The row that decided a verdict (the first with an effect), and how many rows agree with it. */
function decidingRow(v: Verdict): { row: Json; same: number; of: number } {
  const rows = arr(v.evidence[ROWS[v.test]?.[0] ?? ""]).map(obj);
  const effect = (r: Json) =>
    v.test === "open_world"
      ? arr(r.attempts).length > 0
      : v.test === "concurrent_idempotence"
      ? r.diverged === true
      : deltaEffects(r.delta).length > 0;
  const row = rows.find(effect) ?? rows[0] ?? {};
  const key = (r: Json) => JSON.stringify([r.delta, r.attempts]);
  return {
    row,
    same: rows.filter((r) => effect(r) && key(r) === key(row)).length,
    of: rows.length,
  };
}

/** The session a finding's request and answer come from. */
function sessionOf(
  report: Report,
  v: Verdict,
  row: Json,
): SessionRecord | undefined {
  const label = toolLabel(v);
  const kind = ROWS[v.test]?.[1] ?? "once";
  const mine = report.sessions.filter((s) =>
    s.tool === label &&
    (kind === "attempt"
      ? s.kind === `attempt:${str(row.mode)}`
      : s.kind === kind)
  );
  // An untested claim: the first run whose call errored, when one did.
  const obs = report.observations.tools.find((t) =>
    t.tool === v.tool && t.variant === v.variant
  );
  const errored = v.kind === "VIOLATION"
    ? undefined
    : (kind === "twice" ? obs?.twice : obs?.once)?.find((o) =>
      o.calls.some((c) => c.status !== "ok")
    );
  const run = errored?.run ??
    Number(kind === "attempt" ? row.attempt : row.run);
  return mine.find((s) => s.run === run) ?? mine[0];
}

function exchange(
  report: Report,
  v: Verdict,
  s: SessionRecord | undefined,
): { request: string | null; answer: string | null; call: string } {
  const written = report.observations.tools.find((t) =>
    t.tool === v.tool && t.variant === v.variant
  )?.arguments;
  const args = s?.arguments ?? written;
  const answers = (s?.callResponses ?? []).filter((a) => a !== null);
  return {
    request: args === undefined ? null : clip(
      JSON.stringify({ name: v.tool, arguments: args }),
      EXCHANGE_MAX,
    ),
    answer: answers.length ? clip(answers.join("\n"), EXCHANGE_MAX) : null,
    // As the definition wrote them: `{state}/notes.md`, not a scratch path.
    call: (written ?? args) === undefined
      ? v.tool
      : `${v.tool} ${clip(JSON.stringify(written ?? args), 160)}`,
  };
}

/** What happened, in one sentence. */
function sentence(
  v: Verdict,
  call: string,
  { row, same, of }: { row: Json; same: number; of: number },
): string {
  const effects = joinEffects(deltaEffects(row.delta));
  const runs = `in ${same}/${of} ${
    v.test === "concurrent_idempotence" ? "attempts" : "runs"
  }`;
  if (v.kind !== "VIOLATION") {
    return `not tested (${v.reason ?? v.kind})${
      v.details[0] ? `: ${clip(v.details[0], 300)}` : "."
    }`;
  }
  switch (v.test) {
    case "open_world":
      return `calling ${call} attempted network access (${
        clip(arr(row.attempts).map(str).join(", "), 200)
      }), ${runs}.`;
    case "sequential_idempotence":
      return `calling ${call} twice ${effects} beyond one call, ${runs}.`;
    case "concurrent_idempotence":
      return `two concurrent calls of ${call} (${str(row.mode)}) ${
        effects || "left a different state"
      } beyond one call, ${runs}.`;
  }
  return effects
    ? `calling ${call} ${effects}, ${runs}.`
    : `${clip(v.details[0] ?? v.observed, 300)}.`;
}

/**
 * Every finding of a report: violations first, then untested claims, then
 * (fixture runs) expectations not met by a verdict not already listed.
 *
 * @example
 * ```ts ignore
 * reportFindings(report)[0]?.what; // "the call removed notes/ideas.md ..., in 3/3 runs."
 * ```
 */
export function reportFindings(
  report: Report,
  claims: Claims = reportClaims(report),
): Finding[] {
  const of = (v: Verdict, i: number, kind: Finding["kind"]): Finding => {
    const d = decidingRow(v);
    const { call, ...io } = exchange(report, v, sessionOf(report, v, d.row));
    return {
      kind,
      tool: v.tool,
      variant: v.variant,
      test: v.test,
      declared: declaredHint(v),
      outcome: v.outcome,
      what: sentence(v, call, d),
      ...io,
      delta: deltaEffects(d.row.delta).length ? d.row.delta : null,
      verdict: i,
    };
  };
  const index = new Map(report.verdicts.map((v, i) => [v, i]));
  const out = report.verdicts.flatMap((v, i) =>
    v.kind === "VIOLATION" ? [of(v, i, "violation")] : []
  );
  for (const u of claims.untested) {
    const v = report.verdicts.find((x) => verdictKey(x) === verdictKey(u));
    out.push(
      v !== undefined ? of(v, index.get(v)!, "untested") : {
        kind: "untested",
        tool: u.tool,
        variant: u.variant,
        test: u.test,
        declared: declaredHint({
          hint: u.hint,
          declared: CHECKS[u.test].claim,
        }),
        outcome: `untested: ${NOT_EXERCISED}`,
        what:
          `the definition never calls ${u.tool}, so its ${u.hint} claim was not tested (add a [[tools]] entry for it).`,
        request: null,
        answer: null,
        delta: null,
        verdict: null,
      },
    );
  }
  if (!report.audit) {
    const listed = new Set(out.map(verdictKey));
    for (const e of report.expectations.results) {
      if (e.matched || listed.has(verdictKey(e))) continue;
      const v = report.verdicts.find((x) => verdictKey(x) === verdictKey(e));
      const f: Finding = v !== undefined ? of(v, index.get(v)!, "mismatch") : {
        kind: "mismatch",
        tool: e.tool,
        variant: e.variant,
        test: e.test,
        declared: "",
        outcome: "no verdict",
        what: "",
        request: null,
        answer: null,
        delta: null,
        verdict: null,
      };
      f.what = `expected ${e.verdict}, got ${e.actual ?? "no verdict"}${
        e.mismatches.length ? `: ${clip(e.mismatches.join("; "), 300)}` : ""
      }.`;
      out.push(f);
    }
  }
  return out;
}
