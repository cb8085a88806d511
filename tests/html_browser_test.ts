/**
 * The HTML report in a real browser: headless Chromium renders four
 * reports (a fixture with violations, a published audit with violations, a
 * clean audit, a setup failure) at 1400 and 800 CSS pixels. The claims
 * headline leads; the first violation's card is on the first screen (900
 * px); the grid follows the findings; nothing sticks out horizontally; no
 * word that fits a line is broken across two.
 *
 * Skipped, with the install command, only when no Chromium is installed
 * (.ci/run installs Debian's `chromium`).
 */
import assert from "node:assert/strict";
import { Browser, findChromium } from "../scripts/_chromium.ts";
import {
  MEASURE,
  type Measured,
  reportPages,
} from "../scripts/_report_pages.ts";
import { toolLabel } from "../lib/report/_markup.ts";

const binary = await findChromium();
if (binary === null) {
  console.warn(
    "html_browser_test: SKIPPED: chromium is not installed (apt-get install -y chromium)",
  );
}

Deno.test({
  name:
    "html in headless Chromium: findings above the fold, grid after them, no overflow and no mid-word breaks at 1400 and 800 px",
  ignore: binary === null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "verity-browser-" });
    const browser = await Browser.launch(binary!);
    try {
      const pages = await reportPages(dir);
      assert.deepEqual(pages.map((p) => p.name), [
        "fixture",
        "audit",
        "clean",
        "setup-failed",
      ]);
      for (const page of pages) {
        const violations = page.report.verdicts.filter((v) =>
          v.kind === "VIOLATION"
        ).length;
        for (const width of [1400, 800]) {
          const where = `${page.name} at ${width}px`;
          await browser.viewport(width, 900);
          await browser.open(page.path);
          const m = await browser.evaluate<Measured>(MEASURE);
          assert.equal(m.vw, width, where);
          assert.ok(
            m.scrollWidth <= width,
            `${where}: document is ${m.scrollWidth}px wide`,
          );
          assert.deepEqual(m.sticking, [], `${where}: elements stick out`);
          assert.deepEqual(m.broken, [], `${where}: words broken mid-word`);
          assert.ok(m.matrix?.shown, `${where}: grid not shown`);
          assert.equal(
            m.matrixScroll,
            0,
            `${where}: the grid scrolls sideways`,
          );
          const tools = new Set(page.report.verdicts.map((v) => toolLabel(v)));
          assert.equal(m.rows, tools.size, `${where}: one row per tool`);
          assert.ok(
            m.claims?.shown && m.claims.right <= width,
            `${where}: no claims headline`,
          );
          if (page.name === "setup-failed") {
            assert.equal(m.bannerId, "setup-failed", where);
            assert.ok(
              m.banner?.shown && m.banner.top < 300,
              `${where}: banner not at the top`,
            );
            assert.ok(m.banner!.right <= width, where);
            assert.ok(m.banner!.top < m.claims!.top, where);
            continue;
          }
          assert.equal(m.bannerId, null, `${where}: a banner on a sound run`);
          assert.ok(
            m.claims!.top < 150,
            `${where}: claims not first (${m.claims!.top})`,
          );
          if (violations > 0) {
            assert.ok(m.cards >= violations, `${where}: a card per violation`);
            assert.ok(
              m.violation?.shown && m.violation.top > m.claims!.top &&
                m.violation.top < 600,
              `${where}: the first violation is not above the fold (${m.violation?.top})`,
            );
            assert.ok(m.matrix!.top > m.violation!.top, where);
          } else {
            assert.equal(m.violation, null, where);
            assert.ok(m.matrix!.top < 900, `${where}: grid below the fold`);
          }
        }
      }
    } finally {
      await browser.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
