/**
 * The first thing a reviewer reads: the tool x test matrix (one row per
 * tool and variant, one column per test, each cell the outcome coloured
 * and the observed behaviour under it), a filter by outcome that works
 * without JavaScript (radio inputs and CSS `:checked` selectors), and the
 * banners of a run that failed (setup, reset, coverage). Pure. Private to
 * lib/report/.
 *
 * @module
 */
import type { Report } from "./report.ts";
import type { OutcomeKind, Verdict } from "../verdicts/types.ts";
import { TEST_NAMES } from "../definition/types.ts";
import { clip, escapeMarkup as h, toolLabel } from "./_markup.ts";

const KINDS: readonly OutcomeKind[] = [
  "VIOLATION",
  "INCONCLUSIVE",
  "PASS",
  "NOT_APPLICABLE",
];

/** The CSS of the matrix, filter and banners (added to the page's CSS). */
export const MATRIX_CSS = `
.filter-radio { position: absolute; opacity: 0; pointer-events: none; }
.filters { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 8px 0; font-size: 13px; }
.filters label { cursor: pointer; border: 1px solid #d0d7de; border-radius: 14px; padding: 2px 10px; background: #fff; user-select: none; }
.filters label:hover { border-color: #8c959f; }
#f-all:checked ~ .filters label[for=f-all],
#f-VIOLATION:checked ~ .filters label[for=f-VIOLATION],
#f-INCONCLUSIVE:checked ~ .filters label[for=f-INCONCLUSIVE],
#f-PASS:checked ~ .filters label[for=f-PASS],
#f-NOT_APPLICABLE:checked ~ .filters label[for=f-NOT_APPLICABLE] { background: #1f2328; color: #fff; border-color: #1f2328; }
#f-VIOLATION:checked ~ .matrix-wrap tr.tool:not(.has-VIOLATION),
#f-INCONCLUSIVE:checked ~ .matrix-wrap tr.tool:not(.has-INCONCLUSIVE),
#f-PASS:checked ~ .matrix-wrap tr.tool:not(.has-PASS),
#f-NOT_APPLICABLE:checked ~ .matrix-wrap tr.tool:not(.has-NOT_APPLICABLE) { display: none; }
#f-VIOLATION:checked ~ .matrix-wrap td.cell:not(.c-VIOLATION),
#f-INCONCLUSIVE:checked ~ .matrix-wrap td.cell:not(.c-INCONCLUSIVE),
#f-PASS:checked ~ .matrix-wrap td.cell:not(.c-PASS),
#f-NOT_APPLICABLE:checked ~ .matrix-wrap td.cell:not(.c-NOT_APPLICABLE) { opacity: .25; }
.filter-radio:focus-visible ~ .filters { outline: 2px solid #0969da; outline-offset: 2px; }
.matrix-wrap { overflow-x: auto; }
table.matrix { table-layout: fixed; min-width: 640px; }
table.matrix th.tcol { width: 24%; }
table.matrix td { padding: 3px; border-bottom: 1px solid #eef0f2; }
table.matrix td.tname { padding: 5px 8px; overflow-wrap: anywhere; border-bottom: 1px solid #e6e9ed; }
table.matrix td.cell a { display: block; color: inherit; text-decoration: none; border-radius: 6px; padding: 4px 8px; min-height: 36px; }
table.matrix td.cell a:hover { outline: 2px solid #8c959f; }
table.matrix .o { font-weight: 600; font-size: 12.5px; }
table.matrix .ob { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 11.5px; opacity: .85; overflow-wrap: anywhere; }
td.cell.c-PASS a { background: #dafbe1; color: #116329; }
td.cell.c-VIOLATION a { background: #ffd8d3; color: #82071e; box-shadow: inset 0 0 0 1px #cf222e; }
td.cell.c-INCONCLUSIVE a { background: #fff8c5; color: #7d4e00; }
td.cell.c-NOT_APPLICABLE a { background: none; color: #8c959f; font-weight: 400; }
td.cell.c-NOT_APPLICABLE .o { font-weight: 400; }
td.cell.mismatch a { box-shadow: inset 0 0 0 2px #cf222e; }
td.cell.none { color: #8c959f; text-align: center; }
.banner.warn-banner { border-color: #d4a72c; background: #fff8c5; }
.banner.warn-banner strong { color: #7d4e00; }
`;

/** Escaped, with line-break opportunities after `_ = [ . :` (no mid-word breaks at 800 px). */
function breakable(text: string): string {
  return h(text).replace(/([_=\[.:])/g, "$1<wbr>");
}

/** One cell's verdict text: the outcome, its reason abbreviated for N/A. */
function cell(
  v: Verdict | undefined,
  i: number,
  mismatched: boolean,
): string {
  if (v === undefined) {
    return `<td class="cell none" title="not judged in this run">–</td>`;
  }
  const title = clip(
    `${v.outcome} · observed ${v.observed}${
      v.details.length ? ` · ${v.details[0]}` : ""
    }`,
    300,
  );
  const over = v.overDeclared ? " · over-declared" : "";
  const body = v.kind === "NOT_APPLICABLE"
    ? `<span class="o">n/a</span>`
    : `<span class="o">${
      h(v.kind === "INCONCLUSIVE" ? "INCONCLUSIVE" : v.outcome)
    }${h(over)}</span>${
      v.reason && v.kind === "INCONCLUSIVE"
        ? `<div class="ob">${h(v.reason.toLowerCase())}</div>`
        : ""
    }<div class="ob">${breakable(v.observed)}</div>`;
  return `<td class="cell c-${h(v.kind)}${
    mismatched ? " mismatch" : ""
  }"><a href="#v${i}" title="${h(title)}">${body}</a></td>`;
}

/**
 * The tool x test matrix with its outcome filter. `mismatched` holds the
 * indexes of verdicts whose expectation did not match (fixture runs).
 */
export function verdictMatrix(
  report: Report,
  mismatched: ReadonlySet<number>,
): string {
  const rows = new Map<string, Map<string, number>>();
  report.verdicts.forEach((v, i) => {
    const label = toolLabel(v);
    const row = rows.get(label) ?? new Map<string, number>();
    if (!row.has(v.test)) row.set(v.test, i);
    rows.set(label, row);
  });
  const counts = new Map<OutcomeKind, number>();
  for (const v of report.verdicts) {
    counts.set(v.kind, (counts.get(v.kind) ?? 0) + 1);
  }
  const body = [...rows].map(([label, row]) => {
    const kinds = new Set(
      [...row.values()].map((i) => report.verdicts[i]!.kind),
    );
    const cells = TEST_NAMES.map((t) => {
      const i = row.get(t);
      return cell(
        i === undefined ? undefined : report.verdicts[i],
        i ?? -1,
        i !== undefined && mismatched.has(i),
      );
    }).join("");
    return `<tr class="tool ${
      [...kinds].map((k) => `has-${k}`).join(" ")
    }"><td class="tname mono">${breakable(label)}</td>${cells}</tr>`;
  }).join("");
  const radios = [
    `<input type="radio" class="filter-radio" name="outcome" id="f-all" checked aria-label="show every tool">`,
    ...KINDS.map((k) =>
      `<input type="radio" class="filter-radio" name="outcome" id="f-${k}" aria-label="only tools with ${k}">`
    ),
  ].join("");
  const labels = [
    `<span class="muted">show:</span><label for="f-all">all ${rows.size} tools</label>`,
    ...KINDS.map((k) =>
      `<label for="f-${k}">${h(k.replace("_", " ").toLowerCase())} (${
        counts.get(k) ?? 0
      })</label>`
    ),
  ].join("");
  return `<div class="matrix-block" id="matrix">${radios}<div class="filters">${labels}</div><div class="matrix-wrap"><table class="matrix"><thead><tr><th class="tcol">tool</th>${
    TEST_NAMES.map((t) => `<th>${h(t.replace("_", " "))}</th>`).join("")
  }</tr></thead><tbody>${body}</tbody></table></div><p class="note">Each cell links to its evidence below; n/a cells (not applicable) give their reason on hover. The filter needs no JavaScript.</p></div>`;
}

/**
 * The banners of a run that failed, first on the page: setup (nothing was
 * judged), reset not verified, coverage incomplete. Empty for a sound run.
 */
export function runBanners(report: Report): string {
  const out: string[] = [];
  const cause = report.setupFailure ?? null;
  if (cause !== null) {
    out.push(
      `<div class="banner" id="setup-failed" role="alert"><strong>SETUP FAILED: the server could not be audited.</strong> Every verdict below is INCONCLUSIVE:SETUP_FAILED; nothing was judged.<pre>${
        h(cause)
      }</pre></div>`,
    );
  }
  const d = report.observations.definition;
  if (cause === null && !d.reset.verified) {
    out.push(
      `<div class="banner" id="reset-failed" role="alert"><strong>RESET NOT VERIFIED:</strong> two resets did not give the same state, so no state comparison can be trusted; state verdicts are INCONCLUSIVE.${
        d.reset.problem ? `<pre>${h(d.reset.problem)}</pre>` : ""
      }</div>`,
    );
  }
  if (cause === null && !d.coverage.complete) {
    const missing = d.coverage.locations.filter((l) => l.observedBy === null)
      .map((l) => l.location);
    out.push(
      `<div class="banner warn-banner" id="coverage-partial" role="alert"><strong>COVERAGE ${
        d.coverage.locations.length === 0 ? "NONE" : "PARTIAL"
      }:</strong> ${
        d.coverage.locations.length === 0
          ? "no state location is declared, so no write can be seen; state verdicts cannot pass."
          : `declared state not observed: <span class="mono">${
            h(missing.join(", "))
          }</span>; a write there would go unseen.`
      }</div>`,
    );
  }
  return out.join("\n") + (out.length ? "\n" : "");
}
