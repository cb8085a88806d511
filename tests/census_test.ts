/**
 * `verity census` end to end on a list of local fixture servers (no
 * network): the whole census and the same list in three shards run as
 * parallel processes then merged give the same directory apart from timing
 * fields; merge refuses shards of different lists or verity versions; bad
 * lists and shard specs are one line, exit 2.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { shardOf } from "../lib/census/shard.ts";
import {
  assertSameCensus,
  files,
  ledgerBlocks,
  LOCAL_LIST as LIST,
  readDoc,
  schemaValidator,
} from "./_census.ts";
import { runVerity } from "./_verity.ts";

const DATA = new URL("./data/census/", import.meta.url).pathname;

async function verity(args: string[]) {
  return await runVerity(args);
}

const IDS = [
  "malformed-hints-fixture",
  "reality-fixture",
  "honest-readonly-fixture",
  "cannot-start-fixture",
  "never-lists-fixture",
];

Deno.test("census: three shards run in parallel and merged equal the unsharded census apart from timing", async () => {
  // The test is only meaningful if the shards split the list.
  const spread = new Set(IDS.map((id) => shardOf(id, 3)));
  assert.equal(spread.size, 3, "every shard of 3 holds a server");
  const tmp = await Deno.makeTempDir({ prefix: "verity-census-test-" });
  try {
    const whole = join(tmp, "whole");
    const [w, ...shards] = await Promise.all([
      verity(["census", LIST, "--out", whole, "--jobs", "2"]),
      ...[1, 2, 3].map((k) =>
        verity([
          "census",
          LIST,
          "--shard",
          `${k}/3`,
          "--out",
          join(tmp, `s${k}`),
        ])
      ),
    ]);
    assert.equal(w!.code, 0, w!.stderr);
    for (const s of shards) assert.equal(s.code, 0, s.stderr);
    assert.match(w!.stdout, /5 servers: 3 audited, 0 listed only, 2 failed/);

    const doc = await readDoc(whole);
    const by = new Map(doc.servers.map((s) => [s.id, s]));
    // What the fixtures are known to be (ground truth from their sources).
    assert.equal(by.get("cannot-start-fixture")!.outcome, "failed");
    assert.equal(
      by.get("cannot-start-fixture")!.failure!.kind,
      "needs_configuration",
    );
    assert.match(
      by.get("cannot-start-fixture")!.failure!.message,
      /NOTES_DB_URL is not set/,
    );
    assert.equal(by.get("never-lists-fixture")!.failure!.kind, "timed_out");
    const mh = by.get("malformed-hints-fixture")!;
    assert.equal(mh.hints.tools, 6);
    assert.deepEqual(
      mh.malformed.map((m) => `${m.tool}.${m.hint}:${m.kind}`).sort(),
      [
        "duplicate_hint.readOnlyHint:duplicate_key",
        "list_hint.openWorldHint:list",
        "null_hint.destructiveHint:null",
        "number_hint.idempotentHint:number",
        "string_hint.readOnlyHint:string",
      ],
    );
    assert.equal(mh.hints.toolsComplete, 1);
    assert.deepEqual(doc.summary.malformedKinds, {
      duplicate_key: 1,
      list: 1,
      null: 1,
      number: 1,
      string: 1,
    });
    assert.equal(by.get("reality-fixture")!.outcome, "audited");
    assert.ok(
      by.get("reality-fixture")!.reality!.flagged > 0,
      "the reality fixture's liars are flagged",
    );
    assert.deepEqual(doc.servers.map((s) => s.id), [...IDS].sort());

    // The page is self-contained: no script, nothing fetched; it charts hint
    // coverage, malformed kinds, grades and failures.
    const html = await Deno.readTextFile(join(whole, "census.html"));
    assert.doesNotMatch(html, /<script|(src|href)="(https?:)?\/\//i);
    for (
      const caption of [
        "Hint coverage over 22 tools",
        "Malformed hints by kind",
        "Reality grades",
        "Failures by kind",
      ]
    ) assert.ok(html.includes(caption), caption);
    // Both documents follow the published schema; a broken one does not.
    const check = await schemaValidator();
    assert.equal(check(doc), null);
    assert.equal(check(await readDoc(join(tmp, "s2"))), null);
    assert.notEqual(
      check({ ...doc, servers: [{ ...doc.servers[0], outcome: "fine" }] }),
      null,
    );

    const merged = join(tmp, "merged");
    const m = await verity([
      "census",
      "merge",
      join(tmp, "s2"),
      join(tmp, "s1"),
      join(tmp, "s3"),
      "--out",
      merged,
    ]);
    assert.equal(m.code, 0, m.stderr);

    // The same census apart from timing (census.json without `run` and
    // each server's `timing`, the same files, the HTML byte-identical,
    // artifacts equal with timing masked, the same ledger order).
    await assertSameCensus(merged, whole);
    const mdoc = await readDoc(merged);
    assert.equal(check(mdoc), null);
    // The merged run carries each shard's ledger head, in shard order.
    const heads = await Promise.all(
      [1, 2, 3].map(async (k) =>
        (await readDoc(join(tmp, `s${k}`))).run.ledgerHead
      ),
    );
    assert.deepEqual(mdoc.run.shards.map((s) => s.shard), [
      "1/3",
      "2/3",
      "3/3",
    ]);
    assert.deepEqual(mdoc.run.shards.map((s) => s.ledgerHead), heads);
    // The ledger chains every artifact, and verifies.
    assert.equal((await ledgerBlocks(whole)).length, 6);
    const v = await verity([
      "ledger",
      "verify",
      "--ledger",
      join(merged, "ledger.json"),
      "--expected-head",
      mdoc.run.ledgerHead,
    ]);
    assert.equal(v.code, 0, v.stdout + v.stderr);

    // Merge refusals: one line, exit 2.
    const oneLine = (r: { code: number; stderr: string }, re: RegExp) => {
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, re);
    };
    oneLine(
      await verity([
        "census",
        "merge",
        join(tmp, "s1"),
        join(tmp, "s2"),
        "--out",
        join(tmp, "m2"),
      ]),
      /shard 3\/3 is missing/,
    );
    oneLine(
      await verity([
        "census",
        "merge",
        join(tmp, "s1"),
        join(tmp, "s1"),
        join(tmp, "s3"),
        "--out",
        join(tmp, "m3"),
      ]),
      /are both shard 1\/3/,
    );
    // A shard written by another verity version.
    const old = join(tmp, "s1-old");
    await Deno.mkdir(old);
    for (const f of await files(join(tmp, "s1"))) {
      await Deno.mkdir(join(old, f, ".."), { recursive: true });
      await Deno.copyFile(join(tmp, "s1", f), join(old, f));
    }
    const od = await readDoc(old);
    await Deno.writeTextFile(
      join(old, "census.json"),
      JSON.stringify({ ...od, verity: "0.0.9" }, null, 2) + "\n",
    );
    oneLine(
      await verity([
        "census",
        "merge",
        old,
        join(tmp, "s2"),
        join(tmp, "s3"),
        "--out",
        join(tmp, "m4"),
      ]),
      /written by verity 0\.0\.9, this is verity .*one verity version/,
    );
    // A shard of a different list (the same servers, another list file).
    const other = join(tmp, "other.toml");
    await Deno.writeTextFile(
      other,
      (await Deno.readTextFile(LIST)).replace(
        'name = "local-fixtures"',
        'name = "other-list"',
      ).replaceAll('dir = "../', `dir = "${DATA}../`),
    );
    const o3 = await verity([
      "census",
      other,
      "--shard",
      "3/3",
      "--out",
      join(tmp, "o3"),
    ]);
    assert.equal(o3.code, 0, o3.stderr);
    oneLine(
      await verity([
        "census",
        "merge",
        join(tmp, "s1"),
        join(tmp, "s2"),
        join(tmp, "o3"),
        "--out",
        join(tmp, "m5"),
      ]),
      /is a census of list other-list .*merge shards of one list/,
    );
    // A tampered artifact no longer matches its shard's ledger.
    const f = (await files(old)).find((x) => x.endsWith("manifest.json"))!;
    await Deno.writeTextFile(
      join(old, "census.json"),
      JSON.stringify(od, null, 2) + "\n",
    );
    await Deno.writeTextFile(
      join(old, f),
      (await Deno.readTextFile(join(old, f))) + " ",
    );
    oneLine(
      await verity([
        "census",
        "merge",
        old,
        join(tmp, "s2"),
        join(tmp, "s3"),
        "--out",
        join(tmp, "m6"),
      ]),
      /does not match the digest its ledger records/,
    );
    // A non-empty --out is refused, never mixed.
    oneLine(
      await verity(["census", LIST, "--shard", "1/3", "--out", whole]),
      /is not empty/,
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("census: bad lists and shard specs are one line naming file, key and value, exit 2", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "verity-census-bad-" });
  try {
    const cases: [string, string[], RegExp][] = [
      [
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "^1.2.0"\n',
        [],
        /bad\.toml: servers\[0\]\.version: must be an exact version, not a range or tag: "\^1\.2\.0"/,
      ],
      [
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\nbackend = "python"\n',
        [],
        /bad\.toml: servers\[0\]\.backend: expected "deno" or "node", got "python"/,
      ],
      [
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\n',
        [],
        /bad\.toml: servers\[1\]: a@1\.0\.0 is listed twice/,
      ],
      [
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\nallow = { sys = ["everything"] }\n',
        [],
        /servers\[0\]\.allow\.sys\[0\]: unknown name "everything"/,
      ],
      [
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\n',
        ["--shard", "0/4"],
        /--shard "0\/4": expected k\/N with 1 <= k <= N/,
      ],
      [
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\n',
        ["--shard", "5/4"],
        /--shard "5\/4": shard 5 of 4 does not exist/,
      ],
      [
        'name = "x"\nservers = []\n',
        [],
        /bad\.toml: servers: missing or empty/,
      ],
    ];
    for (const [text, extra, re] of cases) {
      const file = join(tmp, "bad.toml");
      await Deno.writeTextFile(file, text);
      const out = join(tmp, "out");
      const r = await verity(["census", file, "--out", out, ...extra]);
      assert.equal(r.code, 2, `${text}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, re);
      await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("census: an empty shard writes an empty census", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "verity-census-empty-" });
  try {
    // No fixture id falls in shard 2 of 8 (see shardOf).
    assert.ok(IDS.every((id) => shardOf(id, 8) !== 2));
    const r = await verity([
      "census",
      LIST,
      "--shard",
      "2/8",
      "--out",
      tmp + "/o",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const d = await readDoc(tmp + "/o");
    assert.equal(d.servers.length, 0);
    assert.equal(d.shard, "2/8");
    assert.equal(d.list.servers, 5);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("census of a real published server (server-everything, from the warmed cache): hints as its source declares them", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "verity-census-everything-" });
  try {
    const r = await verity([
      "census",
      `${DATA}everything.toml`,
      "--out",
      join(tmp, "o"),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = await readDoc(join(tmp, "o"));
    const s = doc.servers[0]!;
    assert.equal(s.outcome, "audited", JSON.stringify(s.failure));
    assert.equal(s.server!.name, "mcp-servers/everything");
    // Every listed tool declares all four hints (dist/tools/*.js); the
    // read-only ones are exactly those whose source says readOnlyHint: true.
    assert.equal(s.hints.tools, 13);
    assert.equal(s.hints.toolsComplete, 13);
    const readOnly = s.tools.filter((t) =>
      t.hints.readOnlyHint.state === "TRUE"
    )
      .map((t) => t.name).sort();
    assert.deepEqual(readOnly, [
      "echo",
      "get-annotated-message",
      "get-env",
      "get-resource-links",
      "get-resource-reference",
      "get-structured-content",
      "get-sum",
      "get-tiny-image",
      "trigger-long-running-operation",
    ]);
    assert.equal(s.malformed.length, 0);
    assert.ok(s.reality!.checked > 0 && s.reality!.total === 13);
    const check = await schemaValidator();
    assert.equal(check(doc), null);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
