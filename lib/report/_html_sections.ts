/**
 * The detail sections of the HTML report page: provenance, state (reset,
 * coverage, control), expectations and the declared tools. Pure. Private
 * to lib/report/.
 *
 * @module
 */
import { allowanceLine, type Report } from "./report.ts";
import { HINT_NAMES, parseToolPages } from "../contracts/contracts.ts";
import { breakable, clip, escapeMarkup as h } from "./_markup.ts";
import { flag, kv, list, obj, show } from "./_html_parts.ts";
import { renderDelta } from "./_html_evidence.ts";
import {
  definitionGitText,
  erroredSessions,
  erroredSummary,
  stateEffectsOf,
  targetText,
} from "./_provenance_text.ts";
import { erroredCallLabel, erroredCallStateText } from "./effects.ts";

/** Most errored sessions listed in the state section. */
const ERRORED_ROWS = 50;

/** Run id, definition, harness, server and options. */
export function provenanceSection(report: Report): string {
  const p = report.provenance;
  return kv([
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
      "definition git",
      `<span class="mono">${h(definitionGitText(p.definition.git))}</span>${
        p.definition.git?.dirty === true
          ? ` <span class="badge warn">dirty</span>`
          : ""
      }`,
    ],
    [
      "target",
      `${
        p.target?.pinned === true
          ? `<span class="badge ok">pinned</span> `
          : p.target?.pinned === false
          ? `<span class="badge warn">no pin</span> `
          : ""
      }<span class="mono">${h(targetText(p.target))}</span>`,
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
    [
      "sandbox allowances",
      `<span class="mono">${h(allowanceLine(report.sandbox.allow))}</span>`,
    ],
    ["captured at", h(p.capturedAt)],
    [
      "options",
      `<span class="mono">${h(clip(JSON.stringify(p.options), 600))}</span>`,
    ],
  ]);
}

/** Reset, coverage, control sessions, runs and network observation. */
export function stateSection(report: Report): string {
  const d = report.observations.definition;
  const ctlDigests = new Set(d.control.map((c) => c.stateDigest));
  const failedCtl = d.control.filter((c) => c.setupFailure !== null);
  return kv([
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
      `${
        d.coverage.locations.length === 0
          ? `<span class="badge bad">none</span> no state locations declared`
          : flag(d.coverage.complete, "complete", "partial")
      }${
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
    ["control effect", controlEffectHtml(report)],
    ["errored calls", erroredCallsHtml(report)],
    ["runs", h(String(d.runs))],
    [
      "network observation",
      d.seesNetwork
        ? `<span class="badge ok">seen</span> <span class="muted">(permission log)</span>`
        : `<span class="badge warn">not seen</span> <span class="muted">(open_world cannot be judged)</span>`,
    ],
    ["sessions recorded", h(String(report.sessions.length))],
  ]);
}

/** The control sessions' delta against the seed (runs with the same delta together). */
function controlEffectHtml(report: Report): string {
  const e = stateEffectsOf(report);
  if (e === null || e.control.length === 0) {
    return `<span class="muted">unknown (no control session)</span>`;
  }
  const groups = new Map<string, { runs: number[]; c: typeof e.control[0] }>();
  for (const c of e.control) {
    const key = `${c.changed}|${c.deltaDigest}`;
    const g = groups.get(key) ?? { runs: [], c };
    g.runs.push(c.run);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ runs, c }) =>
    `<div>${groups.size > 1 ? `run ${h(runs.join(", "))}: ` : ""}${
      c.changed === null
        ? `<span class="badge warn">unknown</span> no seed or no state observed`
        : c.changed
        ? `<span class="badge warn">changed the seed</span> <span class="mono">${
          h(String(c.deltaDigest))
        }</span>${renderDelta(c.delta)}`
        : `<span class="badge ok">no change to the seed</span>`
    }</div>`
  ).join("");
}

/** Every session with an errored call: whether it changed the state. */
function erroredCallsHtml(report: Report): string {
  const e = stateEffectsOf(report);
  const sessions = erroredSessions(e);
  const rows = sessions.slice(0, ERRORED_ROWS).map(({ first, calls }) =>
    `<tr><td class="mono">${h(erroredCallLabel(first))}${
      calls > 1 ? ` <span class="muted">(+${calls - 1})</span>` : ""
    }</td><td>${h(first.status)}${
      first.ended ? ` <span class="muted">(${h(first.ended)})</span>` : ""
    }</td><td>${
      first.stateChanged === true
        ? `<span class="badge bad">state changed</span> `
        : ""
    }<span class="mono wrap">${h(erroredCallStateText(first))}</span></td></tr>`
  ).join("");
  return `${h(erroredSummary(e))}${
    rows
      ? `<details${
        sessions.some((s) => s.first.stateChanged === true)
          ? " open"
          : ""
      }><summary>sessions</summary><table><tr><th>call</th><th>status</th><th>state</th></tr>${rows}</table>${
        sessions.length > ERRORED_ROWS
          ? `<div class="note">… ${
            sessions.length - ERRORED_ROWS
          } more in stateEffects.erroredCalls</div>`
          : ""
      }</details>`
      : ""
  }`;
}

/** The declared tools as listed (`parseToolPages` never throws: a bad page is a listing problem). */
export function renderTools(report: Report): string {
  const listing = parseToolPages(report.protocol.toolsList);
  const rows = listing.contracts.map((c) => {
    const description = typeof c.raw.description === "string"
      ? c.raw.description
      : "";
    const hints = HINT_NAMES.map((n) => {
      const hint = c.hints[n];
      return `<td class="mono">${h(hint.state.toLowerCase())}${
        hint.detail
          ? `<div class="note">${h(clip(hint.detail, 120))}</div>`
          : ""
      }</td>`;
    }).join("");
    return `<tr><td class="mono">${breakable(c.name)}${
      c.problems.length
        ? `<div class="note">${h(c.problems.join("; "))}</div>`
        : ""
    }</td><td>${h(clip(description, 600))}</td>${hints}<td>${
      c.hasOutputSchema ? "yes" : "no"
    }</td></tr>`;
  }).join("");
  const problems = [...listing.problems, ...report.protocol.listingProblems];
  return `<table><tr><th>tool</th><th>description (as sent by the server)</th>${
    HINT_NAMES.map((n) => `<th>${h(n).replace("Hint", "<wbr>Hint")}</th>`)
      .join("")
  }<th>output<wbr>Schema</th></tr>${rows}</table>${
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

export function serverText(info: unknown): string {
  const o = obj(info);
  if (typeof o.name === "string") {
    return `${o.name}${typeof o.version === "string" ? ` ${o.version}` : ""}`;
  }
  return info === null || info === undefined ? "unknown" : show(info);
}
