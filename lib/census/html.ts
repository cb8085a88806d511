/**
 * The census summary page: one self-contained HTML file (inline CSS and
 * SVG, no script, nothing fetched) with tables and charts of hint coverage,
 * malformed kinds, grades and failures, then one row per server. Pure; it
 * renders only the document's timing-free part, so a merged census and the
 * unsharded one render byte-identical pages.
 *
 * @module
 */
import { HINT_NAMES } from "../contracts/contracts.ts";
import { showControls } from "../common/show_controls.ts";
import {
  type CensusDocument,
  type CensusServer,
  FAILURE_KINDS,
  withoutTiming,
} from "./result.ts";

/** HTML-escaped, control characters (a server's, in names and errors) shown as escapes. */
function esc(s: string): string {
  return showControls(s).replace(/&/g, "&amp;").replace(/</g, "&lt;")
    .replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function pct(n: number, of: number): string {
  return of === 0 ? "–" : `${Math.round((1000 * n) / of) / 10}%`;
}

const COLORS: Record<string, string> = {
  TRUE: "#2e7d32",
  FALSE: "#1565c0",
  ABSENT: "#9e9e9e",
  MALFORMED: "#c62828",
  A: "#2e7d32",
  B: "#689f38",
  C: "#f9a825",
  D: "#ef6c00",
  F: "#c62828",
  ungraded: "#9e9e9e",
  none: "#cfcfcf",
};

/** A horizontal bar chart: one labelled bar per row, scaled to the largest. */
function bars(rows: readonly [string, number][], title: string): string {
  const max = Math.max(1, ...rows.map(([, n]) => n));
  const h = 22;
  const width = 520;
  const body = rows.map(([label, n], i) => {
    const w = Math.round((n / max) * 300);
    const y = i * h;
    return `<text x="0" y="${y + 15}" font-size="12">${esc(label)}</text>` +
      `<rect x="170" y="${y + 3}" width="${w}" height="${h - 6}" fill="${
        COLORS[label] ?? "#5c6bc0"
      }"/>` +
      `<text x="${176 + w}" y="${y + 15}" font-size="12">${n}</text>`;
  }).join("");
  return `<figure><figcaption>${
    esc(title)
  }</figcaption><svg role="img" aria-label="${
    esc(title)
  }" width="${width}" height="${
    Math.max(h, rows.length * h)
  }" xmlns="http://www.w3.org/2000/svg">${body}</svg></figure>`;
}

/** One stacked bar per hint: TRUE / FALSE / ABSENT / MALFORMED shares of all tools. */
function stacked(doc: CensusDocument): string {
  const states = ["TRUE", "FALSE", "ABSENT", "MALFORMED"] as const;
  const total = doc.summary.hints.tools;
  const h = 26;
  const rows = HINT_NAMES.map((hint, i) => {
    const counts = doc.summary.hints.perHint[hint];
    let x = 130;
    const y = i * h;
    const parts = states.map((s) => {
      const w = total === 0 ? 0 : Math.round((counts[s] / total) * 360);
      const r = w === 0
        ? ""
        : `<rect x="${x}" y="${y + 4}" width="${w}" height="${h - 8}" fill="${
          COLORS[s]
        }"><title>${s}: ${counts[s]}</title></rect>`;
      x += w;
      return r;
    }).join("");
    return `<text x="0" y="${y + 17}" font-size="12">${hint}</text>${parts}`;
  }).join("");
  const legend = states.map((s, i) =>
    `<rect x="${130 + i * 95}" y="${
      HINT_NAMES.length * h + 4
    }" width="10" height="10" fill="${COLORS[s]}"/><text x="${
      144 + i * 95
    }" y="${HINT_NAMES.length * h + 13}" font-size="11">${s}</text>`
  ).join("");
  return `<figure><figcaption>Hint coverage over ${total} tools</figcaption><svg role="img" aria-label="hint coverage" width="520" height="${
    HINT_NAMES.length * h + 22
  }" xmlns="http://www.w3.org/2000/svg">${rows}${legend}</svg></figure>`;
}

/** What the batteries found, violations first (`--behavior` only). */
function behaviorSection(doc: CensusDocument): string {
  const b = doc.summary.behavior;
  if (b === undefined) return "";
  const c = b.claims;
  const lied = doc.servers.flatMap((s) =>
    s.tools.flatMap((t) =>
      (t.verdicts ?? []).filter((v) => v.outcome === "VIOLATION").map((v) =>
        `<tr><td>${esc(s.id)}</td><td>${esc(t.name)}${
          v.variant === null ? "" : `[${esc(v.variant)}]`
        }</td><td>${v.test}</td><td><code>${
          esc(v.evidence.slice(0, 19))
        }…</code></td><td>${esc(s.behavior?.report ?? "")}</td></tr>`
      )
    )
  );
  const failed = b.failed.timed_out + b.failed.failed + b.failed.internal_error;
  return `<h2>Behavior: what lied</h2>
<p>Every listed server was learned by use (no definition) and given the battery of <code>verity run --audit</code>. ${b.servers} batteries, ${failed} did not finish (${b.failed.timed_out} timed out, ${b.failed.failed} failed, ${b.failed.internal_error} verity errors). ${c.falsifiable} falsifiable claims: ${c.tested} tested, <b>${c.violated} violated</b>, ${c.held} held, ${c.untested} untested; violation rate ${
    c.violationRate === null ? "not measured" : pct(c.violated, c.tested)
  } (violated / tested); ${b.serversViolating} servers with a VIOLATION.</p>
${
    lied.length === 0
      ? "<p>No VIOLATION.</p>"
      : `<table><tr><th>server</th><th>tool</th><th>test</th><th>evidence</th><th>report</th></tr>
${lied.join("\n")}
</table>`
  }
`;
}

function batteryCell(s: CensusServer): string {
  const b = s.behavior;
  if (b === undefined) return "";
  if (b.claims === null) {
    return `<td>${
      b.failure
        ? `${b.failure.kind}<br><small title="${esc(b.failure.message)}">${
          esc(b.failure.message.slice(0, 140))
        }</small>`
        : "–"
    }</td>`;
  }
  const c = b.claims;
  return `<td>${c.falsifiable} claims: ${c.held} held, ${c.violated} violated, ${c.untested} untested</td>`;
}

function serverRow(s: CensusServer): string {
  const r = s.reality;
  const reality = r === null
    ? "–"
    : `${r.score === null ? "none" : `${r.score}%`}${
      r.grade ? ` ${r.grade}` : ""
    } (${r.checked}/${r.total})`;
  return `<tr><td>${esc(s.id)}</td><td>${s.outcome}${
    s.failure
      ? `<br><small title="${esc(s.failure.message)}">${s.failure.kind}: ${
        esc(s.failure.message.slice(0, 140))
      }</small>`
      : ""
  }</td><td>${s.hints.tools}</td><td>${s.hints.toolsDeclaring}</td><td>${s.hints.toolsComplete}</td><td>${
    s.malformed.length === 0 ? "0" : esc(
      s.malformed.map((m) => `${m.tool}.${m.hint}: ${m.kind}`).join(", "),
    )
  }</td><td>${reality}</td>${batteryCell(s)}</tr>`;
}

/**
 * Render the census page.
 *
 * @example
 * ```ts ignore
 * const html = renderCensusHtml(doc);
 * ```
 */
export function renderCensusHtml(document: CensusDocument): string {
  const doc = withoutTiming(document) as CensusDocument;
  const s = doc.summary;
  const listed = s.outcomes.audited + s.outcomes.partial;
  const kinds = Object.entries(s.malformedKinds);
  const failures = FAILURE_KINDS.map((k) =>
    [k, s.failures[k]] as [string, number]
  )
    .filter(([, n]) => n > 0);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>verity census: ${esc(doc.list.name)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}figure{display:inline-block;margin:0 2rem 1rem 0;vertical-align:top}figcaption{font-weight:600;margin-bottom:.3rem}
small{color:#555}code{background:#f3f3f3;padding:0 .2rem}
</style></head><body>
<h1>Census: ${esc(doc.list.name)}</h1>
<p>verity ${esc(doc.verity)} · list <code>${
    esc(doc.list.digest)
  }</code> · ${doc.list.servers} servers · covers shard ${
    esc(doc.shard)
  } · manifests under recipe ${doc.settings.recipe} · reality seed ${doc.settings.seed}${
    doc.settings.includeDestructive
      ? ", write tools included"
      : ", read-only tools only"
  }</p>
${behaviorSection(doc)}<h2>Summary</h2>
<table>
<tr><th>servers</th><td>${s.servers}</td></tr>
<tr><th>listed (tools read)</th><td>${listed} (${
    pct(listed, s.servers)
  })</td></tr>
<tr><th>reality-checked</th><td>${s.outcomes.audited}</td></tr>
<tr><th>could not be run or listed</th><td>${s.outcomes.failed}</td></tr>
<tr><th>servers declaring any hint</th><td>${s.serversDeclaring} of ${listed} listed (${
    pct(s.serversDeclaring, listed)
  })</td></tr>
<tr><th>servers declaring a hint on every tool</th><td>${s.serversDeclaringEveryTool}</td></tr>
<tr><th>servers with a malformed hint</th><td>${s.serversMalformed}</td></tr>${
    s.claims === undefined ? "" : `
<tr><th>falsifiable claims</th><td>${s.claims.falsifiable}: ${s.claims.tested} tested${
      s.behavior === undefined ? " (the census runs no battery)" : ""
    }, violation rate ${
      s.claims.violationRate === null
        ? "not measured"
        : pct(s.claims.violated, s.claims.tested)
    }</td></tr>`
  }
<tr><th>tools</th><td>${s.hints.tools}: ${s.hints.toolsDeclaring} declare a hint (${
    pct(s.hints.toolsDeclaring, s.hints.tools)
  }), ${s.hints.toolsComplete} all four well-formed, ${s.hints.toolsMalformed} a malformed one</td></tr>
</table>
<h2>Charts</h2>
${stacked(doc)}
${
    bars(
      kinds.length === 0 ? [["none", 0]] : kinds,
      "Malformed hints by kind",
    )
  }
${
    bars(
      (["A", "B", "C", "D", "F", "ungraded", "none"] as const).map((g) =>
        [g, s.grades[g]] as [string, number]
      ),
      "Reality grades (audited servers)",
    )
  }
${bars(failures.length === 0 ? [["none", 0]] : failures, "Failures by kind")}
<h2>Hints per state</h2>
<table><tr><th>hint</th><th>TRUE</th><th>FALSE</th><th>ABSENT</th><th>MALFORMED</th></tr>
${
    HINT_NAMES.map((h) => {
      const c = s.hints.perHint[h];
      return `<tr><td>${h}</td><td>${c.TRUE}</td><td>${c.FALSE}</td><td>${c.ABSENT}</td><td>${c.MALFORMED}</td></tr>`;
    }).join("\n")
  }
</table>
<h2>Servers</h2>
<table><tr><th>server</th><th>outcome</th><th>tools</th><th>declaring</th><th>all four</th><th>malformed</th><th>reality (checked/total)</th>${
    s.behavior === undefined ? "" : "<th>battery</th>"
  }</tr>
${doc.servers.map(serverRow).join("\n")}
</table>
<p><small>Per-server manifests and reality reports are beside this page under <code>servers/</code>, chained in <code>ledger.json</code>; <code>census.json</code> holds every number here.</small></p>
</body></html>
`;
}
