/**
 * The headline end to end: an audit of a server with a violated claim, an
 * untested one (the call errored) and a listed tool the target does not
 * exercise leads its text summary with the claims and every untested one;
 * `--fail-on-untested` turns the untested claims into exit 1; the report's
 * `summary.claims` re-derives.
 */
import assert from "node:assert/strict";
import { fixtureAsTarget } from "./_fixture_target.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function verity(args: string[]) {
  const r = await new Deno.Command(`${ROOT}verity`, {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: r.code,
    out: new TextDecoder().decode(r.stdout),
    err: new TextDecoder().decode(r.stderr),
  };
}

Deno.test("claims: the headline counts every untested claim; --fail-on-untested gates on them", async () => {
  const t = await fixtureAsTarget("liar-readonly-error");
  const runsDir = await Deno.makeTempDir({ prefix: "verity-claims-" });
  try {
    // The target exercises peek only: fail_cleanly is listed, not exercised.
    const toml = await Deno.readTextFile(`${t.dir}/target.toml`);
    await Deno.writeTextFile(
      `${t.dir}/target.toml`,
      toml.slice(0, toml.indexOf('[[tools]]\nname = "fail_cleanly"')),
    );
    const base = [
      "run",
      t.dir,
      "--audit",
      "--runs-dir",
      runsDir,
      "--quiet",
    ];
    const plain = await verity(base);
    assert.equal(plain.code, 0, plain.err);
    const headline = plain.out.split("\n")[1]!;
    assert.equal(
      headline,
      "  claims: 4 claims: 0 held, 1 violated, 3 untested (peek open_world: CALL_ERROR; fail_cleanly read_only: NOT_EXERCISED; fail_cleanly open_world: NOT_EXERCISED); violation rate 1/1 tested (100%)",
    );
    const report = plain.out.match(/^report: (.+)$/m)![1]!;
    const saved = JSON.parse(await Deno.readTextFile(report));
    assert.equal(saved.summary.claims.untested.length, 3);
    const verified = await verity(["report", "verify", report]);
    assert.equal(verified.code, 0, verified.out + verified.err);

    const gated = await verity([...base, "--fail-on-untested"]);
    assert.equal(gated.code, 1, "an untested claim fails the gate");
    assert.match(
      gated.err,
      /^verity run: gate --fail-on-untested failed: 3 claim\(s\) untested \(peek open_world; fail_cleanly read_only; fail_cleanly open_world\)$/m,
    );
    const violation = await verity([...base, "--fail-on-violation"]);
    assert.equal(violation.code, 1);
    assert.match(
      violation.err,
      /^verity run: gate --fail-on-violation failed: 1 violation\(s\) \(peek [a-z_]+\)$/m,
    );
    const fixture = await verity([
      "run",
      "liar-readonly-error",
      "--fail-on-untested",
    ]);
    assert.equal(fixture.code, 2, "the gate needs --audit");
    assert.match(fixture.err, /--fail-on-untested needs --audit/);
  } finally {
    await t.cleanup();
    await Deno.remove(runsDir, { recursive: true });
  }
});
