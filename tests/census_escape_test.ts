/**
 * The census page shows a server's strings with control characters
 * escaped (issue 32, "Escapes" 1): an error message with a newline and
 * ESC[2K from a server is one visible line in its cell.
 */
import assert from "node:assert/strict";
import type { CensusDocument } from "../lib/census/result.ts";
import { renderCensusHtml } from "../lib/census/html.ts";
import { readEvidenceText } from "../lib/evidence/files.ts";

const CENSUS =
  new URL("../results/census-2026-12-01/census.json.gz", import.meta.url)
    .pathname;

Deno.test("census page: a failure message with a newline, ESC[2K and C1 is shown escaped", async () => {
  const doc = JSON.parse(
    (await readEvidenceText(CENSUS)).text,
  ) as CensusDocument;
  const failed = doc.servers.find((s) => s.failure !== null);
  assert.ok(failed?.failure, "the published census has a failed server");
  failed.failure.message =
    'boom\n<script>x</script>\u001b[2K\u009b2J [target.allow] read = ["/root"]';
  const html = renderCensusHtml(doc);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(html, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  assert.ok(
    html.includes("boom\\n&lt;script&gt;x&lt;/script&gt;\\u{1b}[2K\\u{9b}2J"),
  );
});
