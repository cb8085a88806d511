/**
 * The published audit reports under results/ re-derive with this verity:
 * a change to the verdict rules that would alter a published verdict fails
 * here, so the audits are re-run (or ENGINE_VERSION bumped) with the change.
 * Reports are stored gzip-compressed (`report.json.gz`) and read as such.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyReport } from "../lib/report/report.ts";
import { readTextMaybeGzip } from "../lib/common/read_text.ts";

const RESULTS = new URL("../results/", import.meta.url).pathname;

const reports: string[] = [];
for (const dir of Deno.readDirSync(RESULTS)) {
  if (!dir.isDirectory) continue;
  for (const rel of ["report.json.gz", "offline/report.json.gz"]) {
    const p = join(RESULTS, dir.name, rel);
    try {
      Deno.statSync(p);
      reports.push(p);
    } catch {
      // not every result has an offline run
    }
  }
}

Deno.test("there are published audit reports", () => {
  assert.ok(reports.length >= 2, `found ${reports.length}`);
});

for (const path of reports.sort()) {
  Deno.test(`published report re-derives: ${path.slice(RESULTS.length)}`, async () => {
    const report = JSON.parse(await readTextMaybeGzip(path));
    assert.equal(report.audit, true);
    assert.deepEqual(verifyReport(report), []);
  });
}
