/**
 * Over-declaration advice rests on the argument sets it was observed on:
 * auditing fixtures/free-sql, a tool taking free-form SQL called with one
 * SELECT, and one with an `action` enum called with `list` only, get advice
 * scoped to those sets (never counted as tool-level over-declarations),
 * while an upsert that is idempotent in every mode keeps its tool-level
 * over-declaration.
 */
import assert from "node:assert/strict";
import { fixtureAsTarget } from "./_fixture_target.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("advice: free-form SQL and untested enum values scope the advice; a fully exercised tool is over-declared", async () => {
  const t = await fixtureAsTarget("free-sql");
  const runsDir = await Deno.makeTempDir({ prefix: "verity-advice-" });
  try {
    const r = await new Deno.Command(`${ROOT}verity`, {
      args: [
        "run",
        t.dir,
        "--audit",
        "--quiet",
        "--runs-dir",
        runsDir,
        "--sarif",
        `${runsDir}/a.sarif`,
      ],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(r.stdout);
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    assert.match(
      out,
      /^ {2}over-declarations: 1 \(tag_item idempotentHint\)$/m,
    );
    const scoped = out.match(
      /^ {2}advice on exercised argument sets only \(not counted\): (.+)$/m,
    )?.[1];
    assert.ok(scoped, out);
    assert.ok(
      scoped.includes(
        "run_sql readOnlyHint (observed on argument sets: default only; sql is free-form (SQL, a command or code): other values untested)",
      ),
      scoped,
    );
    assert.ok(
      scoped.includes(
        'remote destructiveHint (observed on argument sets: default only; action has untested values ("add", "remove"))',
      ),
      scoped,
    );
    assert.ok(!scoped.includes("tag_item"), scoped);
    const sarif = JSON.parse(await Deno.readTextFile(`${runsDir}/a.sarif`));
    assert.deepEqual(sarif.runs[0].properties.overDeclarations, [
      "tag_item idempotentHint",
    ]);
    assert.equal(sarif.runs[0].properties.scopedAdvice.length, 6);
  } finally {
    await t.cleanup();
    await Deno.remove(runsDir, { recursive: true });
  }
});
