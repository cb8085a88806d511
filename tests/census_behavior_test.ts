/**
 * `verity census --behavior` end to end on two local servers nobody
 * described (tests/data/census/behavior.toml): each is learned by use and
 * given the battery; the census's verdicts are the fixtures' own ground
 * truth (audit.json of fixtures/zero-delete and zero-home), each bound to the server's report by
 * its evidence digest, the report verifies, and the summary re-derives.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { summarize } from "../lib/census/result.ts";
import { canonicalJson, sha256Hex } from "../lib/evidence/canonical.ts";
import { ledgerBlocks, readDoc, schemaValidator } from "./_census.ts";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const LIST = join(ROOT, "tests/data/census/behavior.toml");
const FIXTURE: Record<string, string> = {
  "zero-delete-fixture": "zero-delete",
  "zero-home-fixture": "zero-home",
};

Deno.test("census --behavior: local servers learned by use, their verdicts the fixtures' ground truth, bound to verified reports", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "verity-census-behavior-" });
  try {
    const out = join(tmp, "out");
    const r = await runVerity([
      "census",
      LIST,
      "--behavior",
      "--jobs",
      "2",
      "--out",
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /behavior: 2 batteries \(0 did not finish\)/);
    const doc = await readDoc(out);
    assert.equal(doc.settings.behavior, true);

    const invalid = (await schemaValidator())(doc);
    assert.equal(invalid, null, invalid ?? "");

    const blocks = await ledgerBlocks(out);
    for (const s of doc.servers) {
      const b = s.behavior!;
      assert.equal(b.failure, null, `${s.id}: ${b.failure?.message}`);
      // The ground truth, verdict by verdict.
      const truth = JSON.parse(
        await Deno.readTextFile(
          join(ROOT, "fixtures", FIXTURE[s.id]!, "audit.json"),
        ),
      ).verdicts as Record<string, string>;
      const got: Record<string, string> = {};
      for (const t of s.tools) {
        for (const v of t.verdicts ?? []) {
          got[`${t.name}${v.variant ? `[${v.variant}]` : ""} ${v.test}`] =
            v.outcome;
        }
      }
      assert.deepEqual(got, truth, s.id);
      // Each verdict is its report's, by the digest of its evidence.
      const reportText = await Deno.readTextFile(join(out, b.report!));
      const report = JSON.parse(reportText) as {
        verdicts: {
          tool: string;
          variant: string | null;
          test: string;
          outcome: string;
          evidence: unknown;
        }[];
        summary: { claims: { held: number; violated: number } };
        learned?: unknown;
      };
      for (const t of s.tools) {
        for (const v of t.verdicts ?? []) {
          const rv = report.verdicts.find((x) =>
            x.tool === t.name && x.variant === v.variant && x.test === v.test
          )!;
          assert.equal(rv.outcome, v.outcome);
          assert.equal(
            v.evidence,
            `sha256:${sha256Hex(canonicalJson(rv.evidence))}`,
          );
        }
      }
      assert.equal(b.claims!.held, report.summary.claims.held);
      assert.equal(b.claims!.violated, report.summary.claims.violated);
      assert.ok(report.learned, "the report carries what learning did");
      // The report verifies on its own, and both artifacts are chained.
      const v = await runVerity(["report", "verify", join(out, b.report!)]);
      assert.equal(v.code, 0, v.stdout + v.stderr);
      assert.ok(blocks.includes(`report ${b.report}`));
      assert.ok(blocks.includes(`target ${b.target}`));
      assert.match(
        await Deno.readTextFile(join(out, b.target!)),
        /^# Learned by verity run --audit/,
      );
    }
    // zero-delete: close_task destructive; zero-home: get_note read_only,
    // retitle_note destructive (the fixtures' sources).
    const sb = doc.summary.behavior!;
    assert.equal(sb.servers, 2);
    assert.equal(sb.serversViolating, 2);
    assert.equal(sb.claims.violated, 3);
    assert.equal(sb.verdicts.VIOLATION, 3);
    assert.deepEqual(doc.summary, summarize(doc.servers, true));
    assert.equal(doc.summary.claims!.violated, 3);
    const html = await Deno.readTextFile(join(out, "census.html"));
    assert.match(html, /<h2>Behavior: what lied<\/h2>/);
    assert.match(html, /<td>close_task<\/td><td>destructive<\/td>/);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
