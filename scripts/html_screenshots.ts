/**
 * Screenshots of three HTML reports (a violation, a clean audit, a setup
 * failure) in headless Chromium at 1400 CSS pixels wide, written to
 * docs/img/report-*.png: the top of each page down to below the matrix, a
 * state-delta chart from the clean audit, and the two-process attempt
 * timeline of a fresh liar-concurrent run (8 attempts per mode).
 *
 *   npx -y deno@2.9.6 run -A scripts/html_screenshots.ts
 *
 * @module
 */
import { join } from "node:path";
import { Browser, findChromium } from "./_chromium.ts";
import { reportPages } from "./_report_pages.ts";
import { renderHtml } from "../lib/report/html.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const W = 1400;
const binary = await findChromium();
if (binary === null) {
  console.error(
    "html_screenshots: chromium is not installed (apt-get install -y chromium)",
  );
  Deno.exit(2);
}

async function write(name: string, png: Uint8Array): Promise<void> {
  const out = join(ROOT, "docs/img", name);
  await Deno.writeFile(out, png);
  console.log(`wrote docs/img/${name} (${png.length} bytes)`);
}

type Rect = { x: number; y: number; width: number; height: number };
const rectOf = (selector: string) =>
  `(() => { const el = ${selector}; if (!el) return null; const r = el.getBoundingClientRect();
    return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height }; })()`;

const dir = await Deno.makeTempDir({ prefix: "verity-shots-" });
const browser = await Browser.launch(binary);
try {
  await browser.viewport(W, 900);
  for (const page of await reportPages(dir)) {
    await browser.open(page.path);
    const m = await browser.evaluate<Rect>(
      rectOf(`document.querySelector(".matrix-block")`),
    );
    const height = Math.min(1500, Math.ceil(m.y + m.height + 16));
    await write(`report-${page.name}.png`, await browser.screenshot(W, height));
    if (page.name !== "clean") continue;
    await browser.evaluate(
      `[...document.querySelectorAll("details")].find((d) => d.querySelector("figure.pic svg[aria-label*='rows added']")).open = true`,
    );
    const chart = await browser.evaluate<Rect>(rectOf(
      `document.querySelector("figure.pic svg[aria-label*='rows added']").closest("figure")`,
    ));
    await write(
      "report-delta.png",
      await browser.screenshot(
        Math.ceil(chart.width) + 24,
        Math.ceil(chart.height) + 24,
        chart.x - 12,
        chart.y - 12,
      ),
    );
  }
  // The attempt timelines of a fresh liar-concurrent run (its
  // check-then-insert diverges under concurrency).
  const runs = join(dir, "lc-runs");
  const lc = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      join(ROOT, "main.ts"),
      "run",
      "liar-concurrent",
      "--concurrent-attempts",
      "8",
      "--runs-dir",
      runs,
      "--quiet",
    ],
    cwd: ROOT,
    stdout: "null",
    env: { NO_COLOR: "1" },
  }).output();
  if (lc.code !== 0) {
    throw new Error(`verity run liar-concurrent: exit ${lc.code}`);
  }
  const [id] = [...Deno.readDirSync(runs)].filter((e) => e.isDirectory).map((
    e,
  ) => e.name);
  const page = join(dir, "liar-concurrent.html");
  await Deno.writeTextFile(
    page,
    renderHtml(
      JSON.parse(await Deno.readTextFile(join(runs, id!, "report.json"))),
    ),
  );
  await browser.open(page);
  await browser.evaluate(
    `[...document.querySelectorAll("details")].forEach((d) => { d.open = true; })`,
  );
  const fig = await browser.evaluate<Rect>(rectOf(
    `document.querySelector("figure.pic svg[aria-label^='two_process']").closest("figure")`,
  ));
  await write(
    "report-timeline.png",
    await browser.screenshot(
      Math.ceil(fig.width) + 24,
      Math.ceil(fig.height) + 24,
      fig.x - 12,
      fig.y - 12,
    ),
  );
} finally {
  await browser.close();
  await Deno.remove(dir, { recursive: true });
}
