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
import type { OutcomeKind, Verdict } from "../verdicts/types.ts";
import type { ExpectationResult } from "./expectations.ts";
import { parseToolPages } from "../contracts/contracts.ts";
import { HINT_NAMES } from "../contracts/contracts.ts";
import { clip, escapeMarkup as h, toolLabel } from "./_markup.ts";

/** Longest rendering of one value (a field before/after, a description). */
const VALUE_MAX = 300;

const CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 16px 0 6px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; padding: 8px 10px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; margin: 6px 0; }
.sub { color: #59636e; margin: 0 0 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 14px; min-width: 130px; }
.card .n { font-size: 22px; font-weight: 600; }
.card .l { color: #59636e; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid #e6e9ed; }
th { background: #f6f8fa; font-weight: 600; font-size: 12.5px; }
table.kv th { width: 220px; background: none; color: #59636e; font-weight: 500; }
td.wrap { word-break: break-all; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 12px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.k-PASS { background: #dafbe1; color: #116329; }
.k-VIOLATION { background: #ffebe9; color: #a40e26; }
.k-INCONCLUSIVE { background: #fff8c5; color: #7d4e00; }
.k-NOT_APPLICABLE { background: #eff2f5; color: #424a53; }
.ok { background: #dafbe1; color: #116329; }
.bad { background: #ffebe9; color: #a40e26; }
.warn { background: #fff8c5; color: #7d4e00; }
.muted { color: #59636e; }
.note { color: #59636e; font-size: 12.5px; padding-left: 8px; }
tr.row-VIOLATION td:first-child { box-shadow: inset 3px 0 #cf222e; }
tr.row-INCONCLUSIVE td:first-child { box-shadow: inset 3px 0 #d4a72c; }
tr.mismatch td:first-child { box-shadow: inset 3px 0 #cf222e; }
details { border: 1px solid #d0d7de; border-radius: 8px; margin: 10px 0; padding: 0 12px; }
details[open] { padding-bottom: 10px; }
summary { cursor: pointer; padding: 8px 0; font-weight: 600; }
ul { margin: 4px 0; padding-left: 20px; }
li.add::marker { content: "+ "; color: #116329; }
li.rem::marker { content: "− "; color: #a40e26; }
li.chg::marker { content: "~ "; color: #7d4e00; }
footer { margin-top: 40px; color: #59636e; font-size: 12px; }
@media print { details { break-inside: avoid; } }
`;

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? v as Json
    : {};
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
}

function show(v: unknown): string {
  if (v === undefined) return "(absent)";
  return clip(JSON.stringify(v) ?? String(v), VALUE_MAX);
}

function badge(kind: OutcomeKind | string, text: string): string {
  return `<span class="badge k-${h(kind)}">${h(text)}</span>`;
}

function flag(good: boolean | null, yes: string, no: string): string {
  if (good === null) return `<span class="badge warn">unknown</span>`;
  return good
    ? `<span class="badge ok">${h(yes)}</span>`
    : `<span class="badge bad">${h(no)}</span>`;
}

function kv(rows: [string, string][]): string {
  return `<table class="kv">${
    rows.map(([k, v]) => `<tr><th>${h(k)}</th><td class="wrap">${v}</td></tr>`)
      .join("")
  }</table>`;
}

function list(items: string[], cls = ""): string {
  if (items.length === 0) return "";
  return `<ul>${
    items.map((i) => `<li${cls ? ` class="${cls}"` : ""}>${i}</li>`).join("")
  }</ul>`;
}

function declaredText(state: string): string {
  return state === "TRUE"
    ? "true"
    : state === "FALSE"
    ? "false"
    : state.toLowerCase();
}

/** One category delta (`{lossy, added, removed, changed}`) as a list. */
function renderCategoryDelta(name: string, cd: Json): string {
  const items: string[] = [];
  for (const r of arr(cd.added)) {
    const o = obj(r);
    items.push(
      `<li class="add"><span class="mono">${h(str(o.region))} ${
        h(str(o.key))
      }</span> added</li>`,
    );
  }
  for (const r of arr(cd.removed)) {
    const o = obj(r);
    items.push(
      `<li class="rem"><span class="mono">${h(str(o.region))} ${
        h(str(o.key))
      }</span> removed</li>`,
    );
  }
  for (const r of arr(cd.changed)) {
    const o = obj(r);
    const fields = arr(o.fields).map((f) => {
      const fo = obj(f);
      return `<span class="mono">${h(str(fo.field))}: ${h(show(fo.before))} → ${
        h(show(fo.after))
      }</span>${
        fo.lossy === true ? ` <span class="badge bad">lossy</span>` : ""
      }`;
    });
    items.push(
      `<li class="chg"><span class="mono">${h(str(o.region))} ${
        h(str(o.key))
      }</span> changed${list(fields)}</li>`,
    );
  }
  const label = `${name.replace("_", "-")}${
    cd.lossy === true ? " (lossy)" : ""
  }${cd.truncated === true ? " (truncated)" : ""}`;
  return `<div><strong>${h(label)}</strong>${
    items.length ? `<ul>${items.join("")}</ul>` : ""
  }</div>`;
}

/** A summarized delta (per category) as HTML; empty is "no change". */
function renderDelta(delta: unknown): string {
  const d = obj(delta);
  const parts = ["business", "append_only", "unclassified"].filter((c) =>
    d[c] !== undefined
  ).map((c) => renderCategoryDelta(c, obj(d[c])));
  return parts.length ? parts.join("") : `<span class="muted">no change</span>`;
}

/** Per-run comparisons, runs with the same comparison grouped together. */
function renderRunDeltas(title: string, rows: unknown[]): string {
  const groups = new Map<string, { runs: string[]; row: Json }>();
  for (const r of rows) {
    const o = obj(r);
    const key = JSON.stringify([o.from, o.to, o.delta]);
    const g = groups.get(key) ?? { runs: [], row: o };
    g.runs.push(str(o.run));
    groups.set(key, g);
  }
  const body = [...groups.values()].map((g) =>
    `<tr><td>${h(g.runs.join(", "))}</td><td class="mono wrap">${
      h(clip(str(g.row.from), 19))
    } → ${h(clip(str(g.row.to), 19))}</td><td>${
      renderDelta(g.row.delta)
    }</td></tr>`
  ).join("");
  return `<h3>${
    h(title)
  }</h3><table><tr><th>runs</th><th>state digests</th><th>delta</th></tr>${body}</table>`;
}

function renderCounts(counts: unknown): string {
  const rows = Object.entries(obj(counts)).map(([mode, c]) => {
    const o = obj(c);
    return `<tr><td>${h(mode)}</td><td>${h(str(o.attempts))}</td><td>${
      h(str(o.diverged))
    }</td><td>${h(str(o.overlapped))}</td><td>${
      h(str(o.setup_failed))
    }</td></tr>`;
  }).join("");
  return `<h3>concurrent attempts</h3><table><tr><th>mode</th><th>attempts</th><th>diverged</th><th>overlapped</th><th>failed to start</th></tr>${rows}</table>`;
}

function renderAttempts(attempts: unknown[]): string {
  const rows = attempts.map((a) => {
    const o = obj(a);
    return `<tr><td>${h(str(o.mode))}</td><td>${h(str(o.attempt))}</td><td>${
      o.diverged === true
        ? `<span class="badge bad">diverged</span>`
        : `<span class="muted">same as one call</span>`
    }</td><td>${
      o.overlap === true
        ? `<span class="badge ok">overlap</span>`
        : `<span class="muted">no overlap</span>`
    } <span class="note">${
      h(str(o.overlapDetail))
    }</span></td><td class="mono">${
      h(arr(o.calls).map(str).join(", "))
    }</td></tr>`;
  }).join("");
  const diverged = new Map<string, { who: string[]; delta: unknown }>();
  for (const a of attempts) {
    const o = obj(a);
    if (o.diverged !== true) continue;
    const key = JSON.stringify(o.delta);
    const g = diverged.get(key) ?? { who: [], delta: o.delta };
    g.who.push(`${str(o.mode)} ${str(o.attempt)}`);
    diverged.set(key, g);
  }
  const deltas = [...diverged.values()].map((g) =>
    `<tr><td>${h(g.who.join(", "))}</td><td>${renderDelta(g.delta)}</td></tr>`
  ).join("");
  return `<h3>attempts</h3><table><tr><th>mode</th><th>#</th><th>state vs one call</th><th>overlap</th><th>calls</th></tr>${rows}</table>${
    deltas
      ? `<h3>what diverged (vs one call)</h3><table><tr><th>attempts</th><th>delta</th></tr>${deltas}</table>`
      : ""
  }`;
}

function renderNetwork(rows: unknown[]): string {
  const body = rows.map((r) => {
    const o = obj(r);
    const attempts = arr(o.attempts).map(str);
    return `<tr><td>${h(str(o.run))}</td><td class="mono wrap">${
      attempts.length
        ? h(attempts.join(", "))
        : `<span class="muted">none</span>`
    }</td></tr>`;
  }).join("");
  return `<h3>network attempts (beyond the control sessions)</h3><table><tr><th>run</th><th>attempted</th></tr>${body}</table>`;
}

function renderEvidence(ev: Record<string, unknown>): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(ev)) {
    if (k === "control_vs_once") {
      out.push(renderRunDeltas("control vs once, per run", arr(v)));
    } else if (k === "once_vs_twice") {
      out.push(renderRunDeltas("once vs twice, per run", arr(v)));
    } else if (k === "counts") out.push(renderCounts(v));
    else if (k === "attempts") out.push(renderAttempts(arr(v)));
    else if (k === "network") out.push(renderNetwork(arr(v)));
    else if (k === "producedBy") {
      const modes = arr(v).map(str);
      if (modes.length) {
        out.push(`<p>produced by: ${h(modes.join(", "))}</p>`);
      }
    } else {
      out.push(
        `<h3>${h(k)}</h3><pre>${
          h(clip(JSON.stringify(v, null, 1), 4000))
        }</pre>`,
      );
    }
  }
  return out.join("");
}

function attemptSummary(v: Verdict): string | null {
  const counts = obj(v.evidence.counts);
  const parts = Object.entries(counts).map(([mode, c]) =>
    [mode, obj(c)] as const
  )
    .filter(([, c]) => Number(c.attempts ?? 0) > 0)
    .map(([mode, c]) =>
      `${mode}: ${str(c.diverged)}/${str(c.attempts)} diverged, overlap ${
        str(c.overlapped)
      }${
        Number(c.setup_failed ?? 0) > 0
          ? `, ${str(c.setup_failed)} failed to start`
          : ""
      }`
    );
  return parts.length ? `attempts: ${parts.join("; ")}` : null;
}

function expectationCell(e: ExpectationResult | undefined): string {
  if (!e) return `<span class="muted">–</span>`;
  return e.matched
    ? `<span class="badge ok">ok</span>`
    : `<span class="badge bad">MISMATCH</span> <span class="note">expected ${
      h(e.verdict)
    }</span>`;
}

function verdictDetails(
  v: Verdict,
  i: number,
  e: ExpectationResult | undefined,
): string {
  const open = v.kind === "VIOLATION" || (e !== undefined && !e.matched);
  const facts = Object.entries(v.facts).map(([k, val]) =>
    [k, `<span class="mono">${h(show(val))}</span>`] as [string, string]
  );
  const head: [string, string][] = [
    [
      "declared",
      `<span class="mono">${h(v.hint)}: ${h(declaredText(v.declared))}</span>`,
    ],
    ["verdict", badge(v.kind, v.outcome)],
    ["reason", v.reason ? h(v.reason) : `<span class="muted">–</span>`],
    [
      "secondary reasons",
      v.secondary.length
        ? h(v.secondary.join(", "))
        : `<span class="muted">–</span>`,
    ],
    [
      "observed",
      `<span class="mono">${h(v.observed)}</span>${
        v.overDeclared ? ` <span class="badge warn">over-declared</span>` : ""
      }`,
    ],
  ];
  if (e) {
    head.push([
      "expectation",
      `${expectationCell(e)}${
        e.matched ? ` <span class="note">expected ${h(e.verdict)}</span>` : ""
      }${list(e.mismatches.map(h))}`,
    ]);
  }
  return `<details id="v${i}"${open ? " open" : ""}><summary>${
    h(toolLabel(v))
  } · ${h(v.test)} · ${badge(v.kind, v.outcome)}</summary>${kv(head)}${
    v.details.length ? `<h3>details</h3>${list(v.details.map(h))}` : ""
  }${facts.length ? `<h3>facts</h3>${kv(facts)}` : ""}${
    renderEvidence(v.evidence)
  }</details>`;
}

function renderTools(report: Report): string {
  let listing;
  try {
    listing = parseToolPages(report.protocol.toolsList);
  } catch (e) {
    return `<p class="bad">the tools/list text could not be read: ${
      h((e as Error).message)
    }</p>`;
  }
  const rows = listing.contracts.map((c) => {
    const description = typeof c.raw.description === "string"
      ? c.raw.description
      : "";
    const hints = HINT_NAMES.map((n) => {
      const hint = c.hints[n];
      return `<td class="mono">${h(declaredText(hint.state))}${
        hint.detail
          ? `<div class="note">${h(clip(hint.detail, 120))}</div>`
          : ""
      }</td>`;
    }).join("");
    return `<tr><td class="mono">${h(c.name)}${
      c.problems.length
        ? `<div class="note">${h(c.problems.join("; "))}</div>`
        : ""
    }</td><td>${h(clip(description, 600))}</td>${hints}<td>${
      c.hasOutputSchema ? "yes" : "no"
    }</td></tr>`;
  }).join("");
  const problems = [...listing.problems, ...report.protocol.listingProblems];
  return `<table><tr><th>tool</th><th>description (as sent by the server)</th>${
    HINT_NAMES.map((n) => `<th>${h(n)}</th>`).join("")
  }<th>outputSchema</th></tr>${rows}</table>${
    problems.length
      ? `<h3>listing problems</h3>${list([...new Set(problems)].map(h))}`
      : ""
  }${
    report.unexercised.length
      ? `<p>listed but not exercised: <span class="mono">${
        h(report.unexercised.join(", "))
      }</span></p>`
      : ""
  }`;
}

function serverText(info: unknown): string {
  const o = obj(info);
  if (typeof o.name === "string") {
    return `${o.name}${typeof o.version === "string" ? ` ${o.version}` : ""}`;
  }
  return info === null || info === undefined ? "unknown" : show(info);
}

/**
 * Render a report as one self-contained HTML page.
 *
 * @example
 * ```ts
 * await Deno.writeTextFile("report.html", renderHtml(report));
 * ```
 */
export function renderHtml(report: Report): string {
  const p = report.provenance;
  const d = report.observations.definition;
  const name = p.definition.name;
  const key = (t: { tool: string; variant: string | null; test: string }) =>
    `${t.tool}\u0000${t.variant}\u0000${t.test}`;
  const expectations = new Map(
    report.expectations.results.map((e) => [key(e), e]),
  );
  const byKind = (k: OutcomeKind) =>
    report.verdicts.filter((v) => v.kind === k).length;
  const over = report.verdicts.filter((v) => v.overDeclared);
  const expOk = report.expectations.matched === report.expectations.total;

  const cards = [
    ["PASS", byKind("PASS")],
    ["VIOLATION", byKind("VIOLATION")],
    ["INCONCLUSIVE", byKind("INCONCLUSIVE")],
    ["NOT_APPLICABLE", byKind("NOT_APPLICABLE")],
  ].map(([k, n]) =>
    `<div class="card"><div class="n">${n}</div><div class="l">${
      badge(String(k), String(k).replace("_", " ").toLowerCase())
    }</div></div>`
  );
  cards.push(
    `<div class="card"><div class="n">${over.length}</div><div class="l">over-declarations</div></div>`,
  );
  if (!report.audit) {
    cards.unshift(
      `<div class="card"><div class="n"><span class="badge ${
        expOk ? "ok" : "bad"
      }">${report.expectations.matched}/${report.expectations.total}</span></div><div class="l">expectations matched</div></div>`,
    );
  }

  const provenance = kv([
    ["run id", `<span class="mono">${h(report.runId)}</span>`],
    [
      "definition",
      `${h(p.definition.name)} <span class="muted">(${
        h(p.definition.kind)
      })</span> <span class="mono">${h(p.definition.file)}</span>`,
    ],
    [
      "definition digest",
      `<span class="mono">${h(p.definition.digest)}</span>`,
    ],
    [
      "harness",
      `verity ${h(p.harness.version)} <span class="mono">${
        h(p.harness.commit ?? "no git commit")
      }</span>${
        p.harness.dirty === true
          ? ` <span class="badge warn">dirty tree</span>`
          : ""
      }`,
    ],
    ["server", h(serverText(report.protocol.serverInfo))],
    ["Deno", h(p.deno)],
    ["SDK", h(p.sdk)],
    ["sandbox", `<span class="mono">${h(report.sandbox.backend)}</span>`],
    ["captured at", h(p.capturedAt)],
    [
      "options",
      `<span class="mono">${h(clip(JSON.stringify(p.options), 600))}</span>`,
    ],
  ]);

  const ctlDigests = new Set(d.control.map((c) => c.stateDigest));
  const failedCtl = d.control.filter((c) => c.setupFailure !== null);
  const state = kv([
    [
      "reset",
      `${flag(d.reset.verified, "verified", "NOT verified")}${
        d.reset.problem ? ` ${h(d.reset.problem)}` : ""
      }<div class="note mono">${
        h(
          new Set(d.reset.digests).size === 1
            ? `both resets: ${String(d.reset.digests[0])}`
            : d.reset.digests.map(String).join("  "),
        )
      }</div>`,
    ],
    [
      "coverage",
      `${flag(d.coverage.complete, "complete", "partial")}${
        list(d.coverage.locations.map((l) =>
          `<span class="mono">${h(l.location)}</span> ${
            l.observedBy === null
              ? `<span class="badge bad">not observed</span>`
              : `observed by <span class="mono">${h(l.observedBy)}</span>`
          }`
        ))
      }`,
    ],
    [
      "control sessions",
      `${
        failedCtl.length
          ? `<span class="badge bad">${failedCtl.length} failed</span> ${
            h(failedCtl[0]!.setupFailure ?? "")
          }`
          : ctlDigests.size === 1
          ? `<span class="badge ok">stable</span>`
          : `<span class="badge bad">UNSTABLE</span>`
      } <span class="muted">(${d.control.length} sessions)</span>${
        d.startupWrites
          ? ` <span class="badge warn">the server writes state on start or stop</span>`
          : ""
      }`,
    ],
    ["runs", h(String(d.runs))],
    [
      "network observation",
      d.seesNetwork
        ? `<span class="badge ok">seen</span> <span class="muted">(permission log)</span>`
        : `<span class="badge warn">not seen</span> <span class="muted">(open_world cannot be judged)</span>`,
    ],
    ["sessions recorded", h(String(report.sessions.length))],
  ]);

  const rows = report.verdicts.map((v, i) => {
    const e = expectations.get(key(v));
    const note = v.test === "concurrent_idempotence" ? attemptSummary(v) : null;
    const cls = `row-${v.kind}${e && !e.matched ? " mismatch" : ""}`;
    return `<tr class="${h(cls)}"><td class="mono"><a href="#v${i}">${
      h(toolLabel(v))
    }</a></td><td>${h(v.test)}</td><td class="mono">${
      h(declaredText(v.declared))
    }</td><td>${badge(v.kind, v.outcome)}</td><td class="mono">${
      h(v.observed)
    }${v.overDeclared ? ` <span class="badge warn">over-declared</span>` : ""}${
      note ? `<div class="note">${h(note)}</div>` : ""
    }</td>${report.audit ? "" : `<td>${expectationCell(e)}</td>`}</tr>`;
  }).join("");
  const table =
    `<table><tr><th>tool</th><th>test</th><th>declared</th><th>verdict</th><th>observed</th>${
      report.audit ? "" : "<th>expected</th>"
    }</tr>${rows}</table>`;

  const details = report.verdicts.map((v, i) =>
    verdictDetails(v, i, expectations.get(key(v)))
  ).join("");

  let expectationSection = "";
  if (!report.audit) {
    const erows = report.expectations.results.map((e) =>
      `<tr class="${e.matched ? "" : "mismatch"}"><td class="mono">${
        h(toolLabel(e))
      }</td><td>${h(e.test)}</td><td class="mono">${h(e.verdict)}${
        Object.keys(e.assertions).length
          ? `<div class="note">${
            h(
              Object.entries(e.assertions).map(([k, v]) =>
                `${k} = ${JSON.stringify(v)}`
              ).join(", "),
            )
          }</div>`
          : ""
      }</td><td class="mono">${h(e.actual ?? "no verdict")}</td><td>${
        expectationCell(e)
      }${list(e.mismatches.map(h))}</td></tr>`
    ).join("");
    expectationSection =
      `<h2>Expectations</h2><p>${report.expectations.matched} of ${report.expectations.total} matched.</p><table><tr><th>tool</th><th>test</th><th>expected</th><th>actual</th><th>result</th></tr>${erows}</table>`;
  }

  const auditSummary = report.audit
    ? `<p><strong>violations:</strong> ${
      h(
        report.verdicts.filter((v) => v.kind === "VIOLATION").map((v) =>
          `${toolLabel(v)} ${v.test}`
        ).join("; ") || "none",
      )
    }<br><strong>over-declarations:</strong> ${
      h(over.map((v) => `${toolLabel(v)} ${v.hint}`).join("; ") || "none")
    }</p>`
    : "";

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
<div class="cards">${cards.join("")}</div>
${auditSummary}
<h2>Verdicts</h2>
${table}
<h2>Provenance</h2>
${provenance}
<h2>State: reset, coverage, control</h2>
${state}
<h2>Evidence per verdict</h2>
${details}
${expectationSection}
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
