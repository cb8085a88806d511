/**
 * The HTML report in a real browser: headless Chromium renders three
 * reports (a violation, a clean audit, a setup failure) at 1400 and 800 CSS
 * pixels; the claims headline leads, the matrix (and the banner, when the
 * run failed) is visible in the first screen, nothing sticks out horizontally, and the outcome
 * filter works with scripts disabled.
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
    "html in headless Chromium: matrix and banner visible, no horizontal overflow at 1400 and 800 px, filter without JavaScript",
  ignore: binary === null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "verity-browser-" });
    const browser = await Browser.launch(binary!);
    try {
      const pages = await reportPages(dir);
      assert.deepEqual(pages.map((p) => p.name), [
        "violation",
        "clean",
        "setup-failed",
      ]);
      // scripts are off in the page: the page's own CSP forbids them, and
      // the browser has script execution disabled (evaluate still measures)
      for (const page of pages) {
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
          assert.ok(m.matrix?.shown, `${where}: matrix not shown`);
          assert.equal(
            m.matrixScroll,
            0,
            `${where}: the matrix scrolls sideways`,
          );
          assert.ok(m.matrix!.right <= width, where);
          const tools = new Set(page.report.verdicts.map((v) => toolLabel(v)));
          assert.equal(m.rows, tools.size, `${where}: one row per tool`);
          if (page.name === "setup-failed") {
            assert.equal(m.bannerId, "setup-failed", where);
            assert.ok(
              m.banner?.shown && m.banner.top < 300,
              `${where}: banner not at the top`,
            );
            assert.ok(m.banner!.right <= width, where);
            assert.ok(
              m.matrix!.top < 900,
              `${where}: matrix below the first screen`,
            );
          } else {
            assert.equal(
              m.bannerId,
              null,
              `${where}: no banner on a sound run`,
            );
            // The claims headline leads; the matrix follows on the first screen.
            assert.ok(
              m.claims?.shown && m.claims.top < 200,
              `${where}: claims not first (${m.claims?.top})`,
            );
            assert.ok(m.claims!.right <= width, where);
            assert.ok(
              m.matrix!.top > m.claims!.top && m.matrix!.top < 700,
              `${where}: matrix not on the first screen (${m.matrix!.top})`,
            );
          }
        }
      }
      // the filter is CSS only: choosing "violation" (a label click, as a
      // person would) leaves only the tools with a violation
      const violation = pages[0]!;
      await browser.viewport(1400, 900);
      await browser.open(violation.path);
      const withViolation = new Set(
        violation.report.verdicts.filter((v) => v.kind === "VIOLATION").map((
          v,
        ) => toolLabel(v)),
      );
      assert.ok(withViolation.size > 0);
      const label = await browser.evaluate<{ x: number; y: number }>(
        `(() => { const r = document.querySelector('label[for="f-VIOLATION"]').getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`,
      );
      for (const type of ["mousePressed", "mouseReleased"]) {
        await browser.send("Input.dispatchMouseEvent", {
          type,
          x: label.x,
          y: label.y,
          button: "left",
          clickCount: 1,
        });
      }
      const after = await browser.evaluate<Measured>(MEASURE);
      assert.equal(
        after.rows,
        withViolation.size,
        "only the tools with a violation remain",
      );
      assert.ok(
        after.rows <
          new Set(violation.report.verdicts.map((v) => toolLabel(v))).size,
      );
    } finally {
      await browser.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
