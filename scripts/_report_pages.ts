/**
 * The HTML reports the browser test and the screenshots use: a fixture
 * with violations (readonly-side-effects, run now), a published audit with
 * violations (filesystem 2026.1.14: move_file lies about destructiveHint),
 * a clean audit (the published memory audit) and a setup failure (the
 * cannot-start fixture, run now).
 *
 * @module
 */
import { join } from "node:path";
import { renderHtml } from "../lib/report/html.ts";
import type { Report } from "../lib/report/report.ts";
import { openReport } from "../lib/report/pack.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function readGz(path: string): Promise<Report> {
  const f = await Deno.open(path);
  const text = await new Response(
    f.readable.pipeThrough(new DecompressionStream("gzip")),
  ).text();
  return JSON.parse(text) as Report;
}

/** One rendered page on disk. */
export interface Page {
  name: "fixture" | "audit" | "clean" | "setup-failed";
  path: string;
  report: Report;
}

/** Run a fixture into `runs`; its report. */
async function runFixture(
  name: string,
  runs: string,
  code: number,
): Promise<Report> {
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      join(ROOT, "main.ts"),
      "run",
      name,
      "--runs-dir",
      runs,
      "--quiet",
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const out = new TextDecoder().decode(run.stdout);
  if (run.code !== code) {
    throw new Error(
      `verity run ${name}: exit ${run.code}: ${
        new TextDecoder().decode(run.stderr)
      }`,
    );
  }
  const path = /^report: (.+)$/m.exec(out)?.[1];
  const opened = openReport(JSON.parse(await Deno.readTextFile(path!)));
  if ("problem" in opened) throw new Error(`${path}: ${opened.problem}`);
  return opened.report as unknown as Report;
}

/** Render the reports into `dir`. */
export async function reportPages(dir: string): Promise<Page[]> {
  const runs = join(dir, "runs");
  const pages: [Page["name"], Report][] = [
    ["fixture", await runFixture("readonly-side-effects", runs, 0)],
    [
      "audit",
      await readGz(
        join(ROOT, "results/filesystem-2026-1-2026-11-30/report.json.gz"),
      ),
    ],
    [
      "clean",
      await readGz(join(ROOT, "results/memory-2026-11-30/report.json.gz")),
    ],
    ["setup-failed", await runFixture("cannot-start", runs, 1)],
  ];
  const out: Page[] = [];
  for (const [name, report] of pages) {
    const path = join(dir, `${name}.html`);
    await Deno.writeTextFile(path, renderHtml(report));
    out.push({ name, path, report });
  }
  return out;
}

/**
 * What the browser test measures on a page, as one expression for
 * `Runtime.evaluate`: the viewport and document widths, every element that
 * sticks out of the viewport outside a scrolling container, every word
 * broken across lines, the boxes of the claims, the first violation's card,
 * the grid and the first banner.
 */
export const MEASURE = `(() => {
  const vw = document.documentElement.clientWidth;
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return { top: r.top, left: r.left, right: r.right, width: r.width, height: r.height,
      shown: s.display !== "none" && s.visibility !== "hidden" && r.width > 0 && r.height > 0 };
  };
  const sticking = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right <= vw + 0.5 && r.left >= -0.5) continue;
    let p = el.parentElement, scrolls = false;
    while (p && p !== document.body) {
      if (getComputedStyle(p).overflowX !== "visible") { scrolls = true; break; }
      p = p.parentElement;
    }
    if (!scrolls) sticking.push(el.tagName.toLowerCase() + "." + el.className + " right=" + Math.round(r.right));
  }
  // words a line could hold (up to 30 characters; a hyphen ends one) broken across lines
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const t = walker.currentNode;
    if (t.parentElement.closest("pre, .wrap, svg")) continue;
    for (const m of t.data.matchAll(/[^\\s-]{2,30}/g)) {
      const r = document.createRange();
      r.setStart(t, m.index);
      r.setEnd(t, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  const wrap = document.querySelector(".matrix-wrap");
  return {
    vw,
    scrollWidth: document.documentElement.scrollWidth,
    sticking: sticking.slice(0, 10),
    matrix: box(document.querySelector("table.matrix")),
    matrixScroll: wrap ? wrap.scrollWidth - wrap.clientWidth : null,
    banner: box(document.querySelector(".banner")),
    bannerId: document.querySelector(".banner")?.id ?? null,
    claims: box(document.querySelector("#claims")),
    violation: box(document.querySelector(".finding.f-violation")),
    cards: document.querySelectorAll(".finding").length,
    broken: broken.slice(0, 10),
    rows: [...document.querySelectorAll("table.matrix tr.tool")].filter((r) => r.getClientRects().length > 0).length,
  };
})()`;

/** The measurements {@linkcode MEASURE} returns. */
export interface Measured {
  vw: number;
  scrollWidth: number;
  sticking: string[];
  matrix: Box | null;
  matrixScroll: number | null;
  banner: Box | null;
  bannerId: string | null;
  /** The claims headline (`#claims`). */
  claims: Box | null;
  /** The first violation's card. */
  violation: Box | null;
  /** Finding cards on the page. */
  cards: number;
  /** Words broken across lines (at most 10). */
  broken: string[];
  rows: number;
}

/** An element's box in CSS pixels, and whether it is shown. */
export interface Box {
  top: number;
  left: number;
  right: number;
  width: number;
  height: number;
  shown: boolean;
}
