/**
 * `verity run --audit -- <command>` on bad input: one line, exit 2, no
 * learned directory left in the runs directory.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;

for (
  const [what, args, line] of [
    [
      "a program that does not exist",
      ["--audit", "--", "no-such-server-xyz"],
      /^verity run: cannot start "no-such-server-xyz": no such executable$/,
    ],
    [
      "no --audit",
      ["--", "deno", "run", "x.ts"],
      /^verity run: a server with no definition has no expectations: add --audit$/,
    ],
    [
      "a definition as well",
      ["--audit", "liar-readonly", "--", "deno", "run", "x.ts"],
      /^verity run: a server after -- is audited with no definition: give no definition as well$/,
    ],
    [
      "a server that dies before it answers",
      ["--audit", "--", "deno", "run", "fixtures/cannot-start/server.ts"],
      /^verity run: \{deno\} run \S+cannot-start\/server\.ts: server exited before answering \(exit code 1\); stderr: .*NOTES_DB_URL is not set/,
    ],
    [
      "a server that floods its state directory",
      ["--audit", "--", "deno", "run", "tests/data/zero-flood/server.ts"],
      /^verity run: the server left more than 20000 entries in its state directory: not learned$/,
    ],
  ] as const
) {
  Deno.test(`run --audit -- <command>: ${what} is one line, exit 2`, async () => {
    const runs = await Deno.makeTempDir({ prefix: "verity-zero-bad-" });
    try {
      const r = await runVerity(["run", "--runs-dir", runs, ...args], {
        cwd: ROOT,
      });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      // Progress lines ("verity: listed …") aside, the error is one line.
      const lines = r.stderr.trim().split("\n")
        .filter((l) => !l.startsWith("verity: "));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, line);
      assert.deepEqual([...Deno.readDirSync(runs)], []);
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  });
}

/** The ESC and CSI (C1) the hostile server puts in its ids, raw. */
const hasControls = (s: string) => s.includes("\u001b") || s.includes("\u009b");

Deno.test("run --audit -- <command>: every argument's origin is in report.json, the text, HTML and SARIF, escaped; an edited origin fails verify", async () => {
  const { HOSTILE_ID } = await import("./data/zero-hostile/server.ts");
  const runs = await Deno.makeTempDir({ prefix: "verity-zero-origins-" });
  try {
    const html = join(runs, "r.html");
    const sarif = join(runs, "r.sarif");
    const r = await runVerity([
      "run",
      "--runs-dir",
      runs,
      "--html",
      html,
      "--sarif",
      sarif,
      "--audit",
      "--",
      "deno",
      "run",
      "tests/data/zero-hostile/server.ts",
    ], { cwd: ROOT });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // The bound report holds it: drop_note's id, derived from the seed.
    const path = /^report: (.+)$/m.exec(r.stdout)![1]!;
    const stored = JSON.parse(await Deno.readTextFile(path));
    const i = stored.learned.calls.findIndex((c: { tool: string }) =>
      c.tool === "drop_note"
    );
    const origin = stored.learned.calls[i].origins[0];
    assert.equal(origin.path, "id");
    assert.equal(origin.value, HOSTILE_ID);
    assert.match(origin.from, /^derived from the seed \(notes\.json:/);
    assert.deepEqual(stored.learned.files, [{
      path: "notes.json",
      kind: "json",
    }]);
    // deno-lint-ignore no-explicit-any
    const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
    // deno-lint-ignore no-explicit-any
    (addFormats as any)(ajv);
    const validate = ajv.compile(JSON.parse(
      await Deno.readTextFile(join(ROOT, "docs/schema/report.schema.json")),
    ));
    assert.ok(validate(stored), JSON.stringify(validate.errors?.slice(0, 3)));
    assert.ok(
      stored.learned.steps.some((s: { tool: string; outcome: string }) =>
        s.tool === "add_note" && s.outcome === "kept"
      ),
    );
    // The text (rendered from the report): the origin, no raw control.
    assert.ok(!hasControls(r.stdout));
    assert.ok(
      r.stdout.includes(
        '    drop_note\n      id = "<script>alert(1)</script>\\u001b[2J\\u{9b}"  derived from the seed (notes.json:',
      ),
      r.stdout,
    );
    // HTML: the same lines, escaped.
    const page = await Deno.readTextFile(html);
    assert.ok(!page.includes("<script") && !hasControls(page));
    assert.match(page, /<h2 id="learned">What learning did<\/h2>/);
    assert.ok(
      page.includes(
        "id = &quot;&lt;script&gt;alert(1)&lt;/script&gt;\\u001b[2J\\u{9b}&quot;  derived from the seed (notes.json:",
      ),
    );
    // SARIF: drop_note's destructive result carries its origins; the
    // controls are JSON escapes.
    const sarifText = await Deno.readTextFile(sarif);
    assert.ok(!hasControls(sarifText));
    const result = JSON.parse(sarifText).runs[0].results.find((
      x: { ruleId: string; properties: { tool: string } },
    ) => x.ruleId === "destructive" && x.properties.tool === "drop_note");
    assert.deepEqual(result.properties.argumentOrigins, [origin]);
    assert.equal(result.properties.learned, "names_seed_record");
    // verify re-derives it; one origin edited is refused: its value (not
    // the argument sent), or where it came from (then the set names
    // nothing the seed holds, unlike its observations say).
    const ok = await runVerity(["report", "verify", path]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const edited = join(runs, "edited.json");
    for (
      const [edit, problem] of [
        [
          (o: Record<string, unknown>) => o.value = "another id",
          `learned.calls[${i}].origins[0].value: report says "another id"`,
        ],
        [
          (o: Record<string, unknown>) => o.from = "generated",
          `learned.calls[${i}].learned: report says "names_seed_record", evidence gives "names_nothing"`,
        ],
      ] as const
    ) {
      const copy = structuredClone(stored);
      edit(copy.learned.calls[i].origins[0]);
      await Deno.writeTextFile(edited, JSON.stringify(copy));
      const bad = await runVerity(["report", "verify", edited]);
      assert.equal(bad.code, 1, bad.stdout + bad.stderr);
      assert.ok(bad.stdout.includes(problem), bad.stdout);
    }
    // Any other edit of it (a value seen elsewhere) breaks the binding to
    // the ledger head.
    const head = /^ledger: (\S+) block \d+, head (\S+)$/m.exec(r.stdout)!;
    stored.learned.calls[i].origins[0].from =
      "derived from the answer of add_note";
    await Deno.writeTextFile(path, JSON.stringify(stored));
    const unbound = await runVerity([
      "report",
      "verify",
      path,
      "--ledger",
      head[1]!,
      "--expected-head",
      head[2]!,
    ]);
    assert.equal(unbound.code, 1, unbound.stdout + unbound.stderr);
    assert.match(unbound.stdout, /^LEDGER no block of the ledger records/m);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("init --learn: a state path with an extension on the command line is a file the server makes, not a directory made for it", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-learn-paths-" });
  try {
    const server = join(ROOT, "fixtures/zero-home/server.ts");
    const r = await runVerity(
      [
        "init",
        "t",
        "--learn",
        "--",
        "deno",
        "run",
        server,
        "{state}/data/notes.db",
        "{state}/served",
      ],
      { cwd },
    );
    assert.equal(r.code, 0, r.stderr);
    const tree = join(cwd, "t/seed/tree");
    // A SQLite server given {state}/notes.db must be able to create it:
    // a directory there is SQLITE_CANTOPEN (found by the behavioral census).
    assert.ok((await Deno.stat(join(tree, "data"))).isDirectory);
    await assert.rejects(() => Deno.stat(join(tree, "data/notes.db")));
    // A name with no extension is a directory to serve, made.
    assert.ok((await Deno.stat(join(tree, "served"))).isDirectory);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("a learned target run again as a definition: its report carries the learning run's origins and verifies; edited, they are not carried; a broken learned.json is one line, exit 2", async () => {
  const runs = await Deno.makeTempDir({ prefix: "verity-zero-again-" });
  try {
    const first = await runVerity([
      "run",
      "--runs-dir",
      runs,
      "--audit",
      "--",
      "deno",
      "run",
      "tests/data/zero-hostile/server.ts",
    ], { cwd: ROOT });
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const firstPath = /^report: (.+)$/m.exec(first.stdout)![1]!;
    const learned = JSON.parse(await Deno.readTextFile(firstPath)).learned;
    const target = join(firstPath, "../target");
    const again = await runVerity(
      ["run", target, "--audit", "--runs-dir", join(runs, "again")],
      { cwd: ROOT },
    );
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const path = /^report: (.+)$/m.exec(again.stdout)![1]!;
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(path)).learned,
      learned,
    );
    assert.match(
      again.stdout,
      /^ {4}drop_note\n {6}id = .* derived from the seed/m,
    );
    const ok = await runVerity(["report", "verify", path]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    // An argument set edited since learning: its origins no longer say
    // where the values came from, so none are carried, and it says so.
    const toml = join(target, "target.toml");
    assert.match(await Deno.readTextFile(toml), /^title = /m);
    await Deno.writeTextFile(
      toml,
      (await Deno.readTextFile(toml)).replace(
        /^title = .*$/m,
        'title = "Edited by hand"',
      ),
    );
    const edited = await runVerity(
      ["run", target, "--audit", "--runs-dir", join(runs, "edited")],
      { cwd: ROOT },
    );
    assert.equal(edited.code, 0, edited.stdout + edited.stderr);
    assert.match(
      edited.stderr,
      /^verity: \S+learned\.json does not match the target's learned argument sets \(edited since\?\): argument origins not carried$/m,
    );
    const editedPath = /^report: (.+)$/m.exec(edited.stdout)![1]!;
    assert.ok(
      !Object.hasOwn(
        JSON.parse(await Deno.readTextFile(editedPath)),
        "learned",
      ),
    );
    // Not a learning record: one line naming the file and key, exit 2.
    const file = join(target, "learned.json");
    await Deno.writeTextFile(file, JSON.stringify({ ...learned, files: [1] }));
    const broken = await runVerity(
      ["run", target, "--audit", "--runs-dir", join(runs, "broken")],
      { cwd: ROOT },
    );
    assert.equal(broken.code, 2, broken.stdout + broken.stderr);
    assert.equal(
      broken.stderr.trim(),
      `${file}: files[0]: expected { path, kind: "sqlite", "json" or "fs" }`,
    );
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});
