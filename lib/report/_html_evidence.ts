/**
 * The evidence block of one verdict in the HTML report: deltas per
 * category and run, counts, attempts, network rows and the expectation
 * cell. Pure. Private to lib/report/.
 *
 * @module
 */
import type { Verdict } from "../verdicts/types.ts";
import type { ExpectationResult } from "./expectations.ts";
import { clip, escapeMarkup as h, toolLabel } from "./_markup.ts";
import {
  arr,
  badge,
  type Json,
  kv,
  list,
  obj,
  show,
  str,
} from "./_html_parts.ts";
import { attemptTimelines } from "./_html_svg.ts";

/** One category delta (`{lossy, added, removed, changed}`) as a list. */
function renderCategoryDelta(name: string, cd: Json): string {
  const items: string[] = [];
  for (const [what, css] of [["added", "add"], ["removed", "rem"]] as const) {
    for (const o of arr(cd[what]).map(obj)) {
      items.push(
        `<li class="${css}"><span class="mono">${h(str(o.region))} ${
          h(str(o.key))
        }</span> ${what}</li>`,
      );
    }
  }
  for (const r of arr(cd.structure)) {
    const o = obj(r);
    items.push(
      `<li class="${
        o.change === "created" ? "add" : "rem"
      }">table <span class="mono">${h(str(o.region))}</span> ${
        h(str(o.change))
      }${o.lossy === true ? ` <span class="badge bad">lossy</span>` : ""}</li>`,
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
export function renderDelta(delta: unknown): string {
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

/** The attempts' timelines, and what the diverging ones changed (grouped). */
function renderAttempts(attempts: unknown[]): string {
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
  return `<h3>attempts</h3>${attemptTimelines(attempts)}${
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

/** Identical calls that answered differently: state in process memory. */
function renderProcessMemory(rows: unknown[]): string {
  const body = rows.map((r) => {
    const o = obj(r);
    return `<tr><td>${h(String(o.run))}</td><td class="wrap mono">${
      h(clip(str(o.first), 300))
    }</td><td class="wrap mono">${h(clip(str(o.second), 300))}</td></tr>`;
  }).join("");
  return `<h3>state may live in process memory: identical calls, different answers (ids and timestamps masked)</h3><table><tr><th>twice run</th><th>first call</th><th>second call</th></tr>${body}</table>`;
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
    else if (k === "process_memory") out.push(renderProcessMemory(arr(v)));
    else if (k === "producedBy") {
      const modes = arr(v).map(str);
      if (modes.length) {
        out.push(`<p>produced by: ${h(modes.join(", "))}</p>`);
      }
    } else if (
      // an empty list, or one empty list per run: nothing to show
      !(Array.isArray(v) && v.every((r) =>
        arr(obj(r).values).length === 0 &&
        Array.isArray(obj(r).values)
      ))
    ) {
      out.push(
        `<details class="raw"><summary>${h(k)} (raw JSON)</summary><pre>${
          h(clip(JSON.stringify(v, null, 1), 4000))
        }</pre></details>`,
      );
    }
  }
  return out.join("");
}

export function expectationCell(e: ExpectationResult | undefined): string {
  if (!e) return `<span class="muted">–</span>`;
  return e.matched
    ? `<span class="badge ok">ok</span>`
    : `<span class="badge bad">MISMATCH</span> <span class="note">expected ${
      h(e.verdict)
    }</span>`;
}

export function verdictDetails(
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
      `<span class="mono">${h(v.hint)}: ${h(v.declared.toLowerCase())}</span>`,
    ],
    ["verdict", badge(v.kind, v.outcome)],
    ...(v.secondary.length
      ? [["also", h(v.secondary.join(", "))] as [string, string]]
      : []),
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
