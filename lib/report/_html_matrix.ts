/**
 * The tool x test grid (one row per tool and variant, one column per test,
 * each cell the outcome coloured and the declared value under it, linking
 * to its evidence) and the banners of a run that failed (setup, reset,
 * coverage). Pure. Private to lib/report/.
 *
 * @module
 */
import type { Report } from "./report.ts";
import type { Verdict } from "../verdicts/types.ts";
import { TEST_NAMES } from "../definition/types.ts";
import { breakable, escapeMarkup as h, toolLabel } from "./_markup.ts";

/** One cell: the outcome, the declared value under it (over-declared, or an INCONCLUSIVE reason). */
function cell(
  v: Verdict | undefined,
  i: number,
  mismatched: boolean,
): string {
  if (v === undefined) return `<td class="cell none">–</td>`;
  const word = v.kind === "NOT_APPLICABLE" ? "n/a" : v.kind;
  const under = v.kind === "INCONCLUSIVE"
    ? (v.reason ?? "").toLowerCase().replaceAll("_", " ")
    : `declared ${v.declared.toLowerCase()}${
      v.overDeclared ? ", over-declared" : ""
    }`;
  return `<td class="cell c-${h(v.kind)}${
    mismatched ? " mismatch" : ""
  }"><a href="#v${i}"><span class="o">${h(word)}</span><span class="ob">${
    h(under)
  }</span></a></td>`;
}

/**
 * The tool x test grid. `mismatched` holds the
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
  const body = [...rows].map(([label, row]) => {
    const cells = TEST_NAMES.map((t) => {
      const i = row.get(t);
      return cell(
        i === undefined ? undefined : report.verdicts[i],
        i ?? -1,
        i !== undefined && mismatched.has(i),
      );
    }).join("");
    return `<tr class="tool"><td class="tname mono">${
      breakable(label)
    }</td>${cells}</tr>`;
  }).join("");
  return `<div class="matrix-wrap" id="matrix"><table class="matrix"><thead><tr><th class="tcol">tool</th>${
    TEST_NAMES.map((t) => `<th>${h(t.replaceAll("_", " "))}</th>`).join("")
  }</tr></thead><tbody>${body}</tbody></table></div>`;
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
