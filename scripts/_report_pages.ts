/**
 * The three HTML reports the browser test and the screenshots use: a
 * violation (the published filesystem audit, move_file lies about
 * destructiveHint), a clean audit (the published memory audit) and a setup
 * failure (the cannot-start fixture, run now).
 *
 * @module
 */
import { join } from "node:path";
import { renderHtml } from "../lib/report/html.ts";
import type { Report } from "../lib/report/report.ts";

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
  name: "violation" | "clean" | "setup-failed";
  path: string;
  report: Report;
}

/** Render the three reports into `dir`. */
export async function reportPages(dir: string): Promise<Page[]> {
  const runs = join(dir, "runs");
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      join(ROOT, "main.ts"),
      "run",
      "cannot-start",
      "--runs-dir",
      runs,
    ],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  if (run.code !== 1) {
    throw new Error(
      `verity run cannot-start: exit ${run.code}: ${
        new TextDecoder().decode(run.stderr)
      }`,
    );
  }
  const [id] = [...Deno.readDirSync(runs)].filter((e) => e.isDirectory)
    .map((e) => e.name);
  const failed = JSON.parse(
    await Deno.readTextFile(join(runs, id!, "report.json")),
  ) as Report;
  const pages: [Page["name"], Report][] = [
    [
      "violation",
      await readGz(
        join(ROOT, "results/filesystem-2026-1-2026-11-30/report.json.gz"),
      ),
    ],
    [
      "clean",
      await readGz(join(ROOT, "results/memory-2026-11-30/report.json.gz")),
    ],
    ["setup-failed", failed],
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
 * sticks out of the viewport outside a scrolling container, the matrix's
 * and the first banner's boxes.
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
