/**
 * The published censuses under results/census-*: each one checks out from
 * its own files, with nothing taken on trust.
 *
 * - census.json follows docs/schema/census.schema.json;
 * - its list digest is the SHA-256 of a list committed under census/, and
 *   it holds one server per list entry;
 * - its summary re-derives from its servers (`summarize`), and census.html
 *   re-renders byte for byte from it (`renderCensusHtml`);
 * - ledger.json replays to ledger.head, which is the head census.json
 *   records, and its blocks name every artifact in census order, each
 *   matching the digest recorded (artifacts are stored gzipped: the digest
 *   is over the uncompressed text, as the census wrote it);
 * - every shard that produced it is recorded with its own ledger head.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import {
  censusClaims,
  type CensusDocument,
  summarize,
} from "../lib/census/result.ts";
import { renderCensusHtml } from "../lib/census/html.ts";
import { artifactsOf } from "../lib/census/output.ts";
import { parseCensusList } from "../lib/census/list.ts";
import { canonicalJson, sha256Hex } from "../lib/evidence/canonical.ts";
import { reportClaims } from "../lib/report/claims.ts";
import type { Verdict } from "../lib/verdicts/types.ts";
import { verifyLedgerText } from "../lib/evidence/ledger.ts";
import { readEvidenceText } from "../lib/evidence/files.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const RESULTS = join(ROOT, "results");
const LISTS = join(ROOT, "census");

/** A file's text, from `path` or else `path.gz`. */
async function readPlainOrGz(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    return (await readEvidenceText(`${path}.gz`)).text;
  }
}

const censuses: string[] = [];
for (const e of Deno.readDirSync(RESULTS)) {
  if (e.isDirectory && e.name.startsWith("census-")) {
    censuses.push(join(RESULTS, e.name));
  }
}
censuses.sort();

Deno.test("there is a published census", () => {
  assert.ok(censuses.length >= 1, `found ${censuses.length}`);
});

for (const dir of censuses) {
  const name = dir.slice(RESULTS.length + 1);

  Deno.test(`published census checks out from its own files: ${name}`, async () => {
    const text = await readPlainOrGz(join(dir, "census.json"));
    const doc = JSON.parse(text) as CensusDocument;

    // The schema.
    const schema = JSON.parse(
      await Deno.readTextFile(join(ROOT, "docs/schema/census.schema.json")),
    );
    // deno-lint-ignore no-explicit-any
    const ajv = new (Ajv2020 as any)({ allErrors: true, strict: true });
    // deno-lint-ignore no-explicit-any
    (addFormats as any)(ajv);
    const validate = ajv.compile(schema);
    assert.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 3)));

    // The list it ran is committed, byte for byte, and it covers all of it.
    let listFile: string | null = null;
    for (const e of Deno.readDirSync(LISTS)) {
      if (!e.name.endsWith(".toml")) continue;
      const bytes = Deno.readFileSync(join(LISTS, e.name));
      if (`sha256:${sha256Hex(bytes)}` === doc.list.digest) {
        listFile = join(LISTS, e.name);
      }
    }
    assert.ok(listFile, `no list under census/ has digest ${doc.list.digest}`);
    const list = parseCensusList(Deno.readFileSync(listFile), listFile, LISTS);
    assert.equal(list.name, doc.list.name);
    assert.equal(doc.servers.length, list.servers.length);
    assert.deepEqual(
      doc.servers.map((s) => s.id).sort(),
      list.servers.map((s) => s.id).sort(),
    );

    // Summary and page re-derive from the servers.
    // Documents written before the claims line do not carry it.
    const derived = summarize(doc.servers, doc.settings.behavior === true);
    if (doc.summary.claims === undefined) delete derived.claims;
    assert.deepEqual(doc.summary, derived);
    const html = await readPlainOrGz(join(dir, "census.html"));
    assert.equal(html, renderCensusHtml(doc));

    // The ledger: replays to the kept head, which census.json records.
    const head = (await Deno.readTextFile(join(dir, "ledger.head"))).trim();
    assert.equal(doc.run.ledgerHead, head);
    const ledgerText = await readPlainOrGz(join(dir, "ledger.json"));
    const v = verifyLedgerText(ledgerText, head);
    assert.ok(v.ok, JSON.stringify(v.problems.slice(0, 3)));

    // Its blocks are the artifacts, in census order, each as stored.
    const blocks = (JSON.parse(ledgerText) as {
      blocks: { type: string; record: { file: string; digest: string } }[];
    }).blocks;
    const wanted = artifactsOf(doc);
    assert.equal(blocks.length, wanted.length);
    assert.ok(wanted.length > 0);
    for (let i = 0; i < wanted.length; i++) {
      assert.equal(blocks[i]!.type, wanted[i]!.type);
      assert.equal(blocks[i]!.record.file, wanted[i]!.file);
      const artifact = await readPlainOrGz(join(dir, wanted[i]!.file));
      assert.equal(
        blocks[i]!.record.digest,
        `sha256:${sha256Hex(artifact)}`,
        `${wanted[i]!.file} does not match its ledger block`,
      );
    }

    // A behavioral census: every server's verdicts and claims headline are
    // its report's, re-derived here (verdict by verdict, by the digest of
    // its evidence; the claims by reportClaims), not taken on trust.
    if (doc.settings.behavior === true) {
      for (const s of doc.servers) {
        const b = s.behavior;
        if (b === undefined || b.report === null) continue;
        const report = JSON.parse(await readPlainOrGz(join(dir, b.report)));
        assert.deepEqual(b.claims, censusClaims(reportClaims(report)), s.id);
        const got = s.tools.flatMap((t) =>
          (t.verdicts ?? []).map((v) => ({ tool: t.name, ...v }))
        );
        assert.deepEqual(
          got,
          (report.verdicts as Verdict[]).map((v) => ({
            tool: v.tool,
            variant: v.variant,
            test: v.test,
            outcome: v.outcome,
            evidence: `sha256:${sha256Hex(canonicalJson(v.evidence))}`,
          })).sort((a, b) =>
            s.tools.findIndex((t) => t.name === a.tool) -
            s.tools.findIndex((t) => t.name === b.tool)
          ),
          s.id,
        );
      }
    }

    // Each shard that produced it, with its own head.
    assert.ok(doc.run.shards.length >= 1);
    for (const s of doc.run.shards) {
      assert.match(s.ledgerHead, /^sha256:[0-9a-f]{64}$/);
    }
  });
}
