/**
 * The tamper suite (scripts/tamper.ts) in `deno task test`: every edit of
 * a real published report and of its ledger is refused, each by the layer
 * it is tagged with; the genuine report passes; and the edits tagged
 * `digest` really are invisible to re-derivation (what docs/evidence.md
 * says only the ledger head or a signature can prove).
 */
import assert from "node:assert/strict";
import { runTamperSuite, TAMPERS } from "../scripts/tamper.ts";

Deno.test("tamper suite: every edit of a real report and its ledger is refused", async () => {
  const { genuine, results } = await runTamperSuite();
  assert.equal(genuine.refused, false, JSON.stringify(genuine));
  const reportEdits = TAMPERS.filter((t) => !t.ledger).length;
  assert.ok(reportEdits >= 25, `${reportEdits} kinds of report edit`);
  for (
    const must of [
      "ledger: an extra top-level key",
      "ledger: a duplicated blocks key (a forged chain first)",
      "ledger: a duplicated record key (a forged digest first)",
    ]
  ) assert.ok(results.some((r) => r.name === must), must);
  for (const r of results) {
    const why = r.reader ?? r.rederive[0] ?? r.binding[0] ?? "";
    console.log(
      `${r.refused ? "refused" : "ACCEPTED"} [${r.layer}] ${r.name}: ${
        why.slice(0, 100)
      }`,
    );
  }
  const refused = results.filter((r) => r.refused).length;
  console.log(`tamper suite: ${refused}/${results.length} refused`);
  assert.equal(refused, results.length);
  for (const r of results) {
    assert.ok(r.layerHeld, `${r.name}: the ${r.layer} layer did not refuse it`);
    if (
      r.layer === "digest" && !TAMPERS.find((t) => t.name === r.name)!.ledger
    ) {
      assert.deepEqual(
        [r.reader, r.rederive],
        [null, []],
        `${r.name}: tagged digest-only, but re-derivation sees it (retag it)`,
      );
    }
  }
});
