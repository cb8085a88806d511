/**
 * The evidence commands end to end: `verity capture`, `verity diff`,
 * `verity ledger validate|verify|head`, with their exit codes.
 */
import assert from "node:assert/strict";
import { runVerity } from "./_verity.ts";

const DATA = new URL("./data/evidence/", import.meta.url).pathname;

async function verity(args: string[], env: Record<string, string> = {}) {
  return await runVerity(args, { env });
}

const MINI = [
  Deno.execPath(),
  "run",
  `${DATA}mini_server.ts`,
];

Deno.test("verity diff on the two captured server-filesystem releases: drift, exit 1", async () => {
  const r = await verity([
    "diff",
    `${DATA}filesystem-2026.1.14.manifest.json`,
    `${DATA}filesystem-2026.8.31.manifest.json`,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /~ read_media_file/);
  assert.match(r.stdout, /description: text changed/);
  assert.match(r.stdout, /\/openWorldHint: added false/);
  assert.match(r.stdout, /drift under recipe 3: 14 tool\(s\) moved/);
  const j = await verity([
    "diff",
    "--json",
    `${DATA}filesystem-2026.1.14.manifest.json`,
    `${DATA}filesystem-2026.8.31.manifest.json`,
  ]);
  assert.equal(j.code, 1);
  assert.equal(JSON.parse(j.stdout).changed.length, 14);
});

Deno.test("verity diff: identical is exit 0; recipe mismatch and bad input are exit 2", async () => {
  const same = await verity([
    "diff",
    `${DATA}filesystem-2026.8.31.manifest.json`,
    `${DATA}filesystem-2026.8.31.manifest.json`,
  ]);
  assert.equal(same.code, 0);
  assert.match(same.stdout, /identical under recipe 3/);
  const mismatch = await verity([
    "diff",
    `${DATA}notes-declared.json`,
    `${DATA}notes-declared-recipe2.json`,
  ]);
  assert.equal(mismatch.code, 2);
  assert.match(mismatch.stdout, /recipe_mismatch/);
  const rederived = await verity([
    "diff",
    "--recipe",
    "1",
    `${DATA}notes-declared.json`,
    `${DATA}notes-declared-recipe2.json`,
  ]);
  assert.equal(rederived.code, 0, rederived.stdout);
  const missing = await verity([
    "diff",
    `${DATA}nope.json`,
    `${DATA}notes-declared.json`,
  ]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.json: no such file/);
  assert.equal(missing.stderr.trim().split("\n").length, 1);
  const badRecipe = await verity(["diff", "--recipe", "7", "a", "b"]);
  assert.equal(badRecipe.code, 2);
  assert.match(badRecipe.stderr, /unknown contract recipe "7"/);
  assert.equal((await verity(["diff", `${DATA}notes-declared.json`])).code, 2);
});

Deno.test("verity capture records every page of a live server; a second release diffs against it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-capture-test-" });
  const a = await verity(["capture", "--out", `${dir}/a.json`, "--", ...MINI]);
  assert.equal(a.code, 0, a.stderr);
  assert.match(
    a.stderr,
    /captured 3 tools from mini-notes 1\.0\.0 under recipe 3/,
  );
  const m = JSON.parse(await Deno.readTextFile(`${dir}/a.json`));
  assert.equal(m.format, "verity-manifest");
  assert.deepEqual(m.tools.map((t: { name: string }) => t.name), [
    "search",
    "add",
    "purge",
  ]);
  assert.match(m.captured_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // The hash Python computes for the served "search" tool (its schema says 1.0).
  assert.equal(
    m.tools[0].contract_hash,
    "sha256:db8132231cd9fd1ec8802b692c99a9ddbbe8920fbc26333a2cb60188d6a9d844",
  );
  assert.match(await Deno.readTextFile(`${dir}/a.json`), /"maximum": 1\.0/);
  const b = await verity([
    "capture",
    "--recipe",
    "3",
    "--out",
    `${dir}/b.json`,
    "--env",
    "MINI_VARIANT=b",
    "--",
    ...MINI,
  ]);
  assert.equal(b.code, 0, b.stderr);
  const d = await verity(["diff", `${dir}/a.json`, `${dir}/b.json`]);
  assert.equal(d.code, 1);
  assert.match(d.stdout, /- purge {2}removed/);
  assert.match(d.stdout, /\+ export {2}added/);
  assert.match(d.stdout, /\/destructiveHint: false → true/);
  assert.match(d.stdout, /\/properties\/tags: added/);
  // Recipe 1 would not see the hint or the title.
  const r1 = await verity(["capture", "--recipe", "1", "--", ...MINI]);
  assert.equal(r1.code, 0);
  assert.equal(JSON.parse(r1.stdout).contract_recipe, "1");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("verity capture: bad recipe, no command, or a server that cannot start is exit 2, no file written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-capture-test-" });
  const bad = await verity([
    "capture",
    "--recipe",
    "4",
    "--out",
    `${dir}/x.json`,
    "--",
    ...MINI,
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown contract recipe "4"/);
  assert.equal((await verity(["capture"])).code, 2);
  const gone = await verity([
    "capture",
    "--out",
    `${dir}/y.json`,
    "--",
    "/nonexistent/server",
  ]);
  assert.equal(gone.code, 2);
  assert.equal(gone.stderr.trim().split("\n").length, 1, gone.stderr);
  assert.deepEqual([...Deno.readDirSync(dir)], []);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("verity ledger validate writes three blocks and the head; verify accepts only that head", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-ledger-cli-" });
  const out = `${dir}/evidence.json`;
  const v = await verity([
    "ledger",
    "validate",
    "--declared",
    `${DATA}notes-declared.json`,
    "--observed",
    `${DATA}notes-observed.json`,
    "--out",
    out,
    "--head-out",
    `${dir}/evidence.head`,
  ]);
  assert.equal(v.code, 0, v.stderr);
  assert.match(v.stdout, /findings: 6 \(high 4, medium 1, low 1\)/);
  assert.match(v.stderr, /states no contract_recipe/);
  const head = (await Deno.readTextFile(`${dir}/evidence.head`)).trim();
  assert.match(v.stdout, new RegExp(`head: ${head}`));
  const ok = await verity([
    "ledger",
    "verify",
    "--ledger",
    out,
    "--expected-head",
    head,
  ]);
  assert.equal(ok.code, 0, ok.stdout);
  assert.match(ok.stdout, /ledger intact: 3 blocks/);
  assert.match(
    ok.stdout,
    /block types: \{"declaration":1,"observation_batch":1,"report":1\}/,
  );
  assert.match(ok.stdout, /contract recipes: 1, 2/);
  const wrong = await verity([
    "ledger",
    "verify",
    "--ledger",
    out,
    "--expected-head",
    "sha256:" + "a".repeat(64),
  ]);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stdout, /ledger REFUSED/);
  const none = await verity(["ledger", "verify", "--ledger", out]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--expected-head is required/);
  const malformed = await verity([
    "ledger",
    "verify",
    "--ledger",
    out,
    "--expected-head",
    "abc",
  ]);
  assert.equal(malformed.code, 2);
  const h = await verity(["ledger", "head", "--ledger", out]);
  assert.equal(h.stdout.trim(), head);
  // --fail-on-findings makes findings exit 1 (and appends: the old head no longer reaches the end).
  const strict = await verity([
    "ledger",
    "validate",
    "--fail-on-findings",
    "--declared",
    `${DATA}notes-declared.json`,
    "--observed",
    `${DATA}notes-observed.json`,
    "--out",
    out,
  ]);
  assert.equal(strict.code, 1);
  const stale = await verity([
    "ledger",
    "verify",
    "--ledger",
    out,
    "--expected-head",
    head,
  ]);
  assert.equal(stale.code, 1);
  assert.match(
    stale.stdout,
    /block 2's published hash: 3 block\(s\) were added after it/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("verity ledger verify reads a Python-written mcp-evidence-validator 0.3 ledger and refuses its forgery", async () => {
  const head = (await Deno.readTextFile(`${DATA}mev-0.3-ledger.head`)).trim();
  const ok = await verity([
    "ledger",
    "verify",
    "--ledger",
    `${DATA}mev-0.3-ledger.json`,
    "--expected-head-file",
    `${DATA}mev-0.3-ledger.head`,
  ]);
  assert.equal(ok.code, 0, ok.stdout);
  assert.match(ok.stdout, /format: mcp-evidence-validator 0\.3/);
  assert.match(ok.stdout, /contract recipes: 2/);
  const dir = await Deno.makeTempDir({ prefix: "verity-ledger-cli-" });
  const forged = (await Deno.readTextFile(`${DATA}mev-0.3-ledger.json`))
    .replace('"maxLength": 1000', '"maxLength": 100000');
  await Deno.writeTextFile(`${dir}/forged.json`, forged);
  const r = await verity([
    "ledger",
    "verify",
    "--json",
    "--ledger",
    `${dir}/forged.json`,
    "--expected-head",
    head,
  ]);
  assert.equal(r.code, 1);
  const j = JSON.parse(r.stdout);
  assert.deepEqual(
    j.problems.map((
      p: { kind: string; index: number | null },
    ) => [p.kind, p.index]),
    [["hash", 0], ["head", null]],
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("verity ledger validate: bad input names the file and key, exit 2, nothing written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-ledger-cli-" });
  await Deno.writeTextFile(
    `${dir}/obs.json`,
    '{"observations":[{"tool":"x","contract_recipe":"5","contract_hash":"sha256:' +
      "0".repeat(64) + '"}]}',
  );
  const r = await verity([
    "ledger",
    "validate",
    "--declared",
    `${DATA}notes-declared.json`,
    "--observed",
    `${dir}/obs.json`,
    "--out",
    `${dir}/l.json`,
  ]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /obs\.json: observations\[0\]\.contract_recipe: unknown contract recipe "5"/,
  );
  assert.equal(
    (await verity(["ledger", "validate", "--declared", "x"])).code,
    2,
  );
  assert.equal((await verity(["ledger", "frobnicate"])).code, 2);
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["obs.json"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("capture and reality --ledger: the written file is a ledger block, verified and bound by report verify; an edit is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-docledger-test-" });
  try {
    const ledger = `${dir}/ledger.json`;
    const c = await verity([
      "capture",
      "--out",
      `${dir}/m.json`,
      "--ledger",
      ledger,
      "--",
      ...MINI,
    ]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stderr, /ledger: .* block 0 records .*m\.json/);
    const ROOT = new URL("../", import.meta.url).pathname;
    const r = await verity([
      "reality",
      "--out",
      `${dir}/r.json`,
      "--ledger",
      ledger,
      "--",
      "deno",
      "run",
      `${ROOT}fixtures/reality/server.ts`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const head = r.stderr.match(/head (sha256:[0-9a-f]{64})/)![1]!;
    for (
      const [file, kind] of [["m.json", "manifest"], ["r.json", "reality"]]
    ) {
      const ok = await verity([
        "report",
        "verify",
        `${dir}/${file}`,
        "--ledger",
        ledger,
        "--expected-head",
        head,
      ]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(
        ok.stdout,
        new RegExp(`${kind} verified and bound to the ledger head`),
      );
    }
    // An edit that still re-derives (the capture time) is caught only by the binding.
    const m = await Deno.readTextFile(`${dir}/m.json`);
    await Deno.writeTextFile(
      `${dir}/m.json`,
      m.replace(
        /"captured_at": "[^"]*"/,
        '"captured_at": "2000-01-01T00:00:00Z"',
      ),
    );
    const bad = await verity([
      "report",
      "verify",
      `${dir}/m.json`,
      "--ledger",
      ledger,
      "--expected-head",
      head,
    ]);
    assert.equal(bad.code, 1, bad.stdout);
    assert.match(bad.stdout, /LEDGER no block of the ledger records/);
    // --ledger without --out is bad input.
    const noOut = await verity(["capture", "--ledger", ledger, "--", ...MINI]);
    assert.equal(noOut.code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
