/**
 * Screenshots of the HTML reports in headless Chromium, written to
 * docs/img/report-*.png: a fixture with violations (readonly-side-effects)
 * and a published audit (filesystem 2026.1.14) at 1400 and 800 CSS pixels
 * wide, each from the top down to below the grid (at most 1600 px); a
 * setup failure at 1400; and the two-process attempt timeline of a fresh
 * liar-concurrent run (8 attempts per mode).
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
  for (const page of await reportPages(dir)) {
    if (page.name === "clean") continue;
    for (const w of page.name === "setup-failed" ? [1400] : [1400, 800]) {
      await browser.viewport(w, 900);
      await browser.open(page.path);
      const m = await browser.evaluate<Rect>(
        rectOf(`document.querySelector(".matrix-wrap")`),
      );
      const height = Math.min(1600, Math.ceil(m.y + m.height + 16));
      await write(
        `report-${page.name}${page.name === "setup-failed" ? "" : `-${w}`}.png`,
        await browser.screenshot(w, height),
      );
    }
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
  await browser.viewport(1400, 900);
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
