/**
 * Failure modes become results: a server that never starts, a command that
 * does not exist, a tool the server does not list. Each is a visible,
 * non-zero outcome in every format, never an "all clear".
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function verity(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args);
}

Deno.test("a server that never starts: every format shows the failure first, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-cannot-start-" });
  try {
    const [html, sarif, junit] = ["r.html", "r.sarif", "r.xml"].map((f) =>
      join(dir, f)
    );
    const r = await verity([
      "run",
      "cannot-start",
      "--runs-dir",
      join(dir, "runs"),
      "--html",
      html!,
      "--sarif",
      sarif!,
      "--junit",
      junit!,
    ]);
    // Every expectation (all SETUP_FAILED) matched, and still exit 1.
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /expectations: 5\/5 matched/);
    // Text: the banner is the first line, with the cause.
    const first = r.stdout.split("\n").slice(0, 2);
    assert.match(first[0]!, /^SETUP FAILED: cannot-start could not be audited/);
    assert.match(first[1]!, /cause: the server never started: .*exit code 1/);
    assert.match(first[1]!, /NOTES_DB_URL is not set/);
    assert.doesNotMatch(first[1]!, /Node\.js v|\bat file:/);

    // HTML: the banner comes before the findings and the grid.
    const page = await Deno.readTextFile(html!);
    const banner = page.indexOf('id="setup-failed"');
    assert.ok(banner > 0, "no banner");
    assert.ok(banner < page.indexOf('id="findings"'));
    assert.ok(banner < page.indexOf('<table class="matrix">'));
    assert.match(
      page.slice(banner, banner + 2000),
      /SETUP FAILED[\s\S]*NOTES_DB_URL is not set/,
    );

    // JUnit: one error, first, carrying the cause.
    const doc = new DOMParser().parseFromString(
      await Deno.readTextFile(junit!),
      "text/xml",
    );
    const suite = doc.getElementsByTagName("testsuite")[0]!;
    assert.equal(suite.getAttribute("errors"), "1");
    const firstCase = doc.getElementsByTagName("testcase")[0]!;
    const err = firstCase.getElementsByTagName("error")[0];
    assert.ok(err, "the first testcase carries an <error>");
    assert.equal(err.getAttribute("type"), "SETUP_FAILED");
    assert.match(err.getAttribute("message") ?? "", /NOTES_DB_URL is not set/);

    // SARIF: the first result is an error on the setup rule; the run failed.
    const log = JSON.parse(await Deno.readTextFile(sarif!));
    const run = log.runs[0];
    assert.equal(run.results[0].level, "error");
    assert.equal(run.results[0].ruleId, "setup");
    assert.equal(
      run.tool.driver.rules[run.results[0].ruleIndex].id,
      "setup",
    );
    assert.match(run.results[0].message.text, /NOTES_DB_URL is not set/);
    assert.equal(run.invocations[0].executionSuccessful, false);
    // The five SETUP_FAILED verdicts follow as notes.
    assert.equal(
      run.results.filter((x: { properties: { outcome: string } }) =>
        x.properties.outcome === "INCONCLUSIVE:SETUP_FAILED"
      ).length,
      6,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a command that does not exist: SETUP_FAILED with the cause, exit 1 even with --fail-on-violation", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-missing-" });
  try {
    const r = await verity([
      "run",
      join(ROOT, "tests/data/failure/missing-command"),
      "--audit",
      "--no-sandbox",
      "--fail-on-violation",
      "--runs-dir",
      dir,
      "--json",
    ]);
    assert.equal(r.code, 1, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.match(
      report.setupFailure,
      /never started: .*\/nonexistent\/bin\/mcp-notes-server.*No such file/,
    );
    assert.equal(report.verdicts.length, 5);
    for (const v of report.verdicts) {
      assert.equal(v.outcome, "INCONCLUSIVE:SETUP_FAILED");
      assert.match(v.details[0], /No such file/);
    }
    // No tool session ran: only the control sessions.
    assert.ok(
      report.sessions.every((s: { kind: string }) => s.kind === "control"),
    );
    const again = await verity([
      "report",
      "verify",
      join(dir, report.runId, "report.json"),
    ]);
    assert.equal(again.code, 0, again.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a probe the server does not list: exit 2 before any tool is called, naming file, probe key and closest names", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-unlisted-probe-" });
  try {
    const def = join(ROOT, "tests/data/failure/unlisted-tool/probe.toml");
    const r = await verity(["run", def, "--audit", "--runs-dir", dir]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n").filter((l) =>
      !l.startsWith("verity: ")
    );
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      /unlisted-tool\/probe\.toml: tools\[0\]\.probe\.name: the server does not list a tool named "read_grap"; closest listed: read_graph/,
    );
    assert.doesNotMatch(r.stderr, /CALLED/);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a tool the server does not list: exit 2 before any tool is called, naming file, tool and closest names", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-unlisted-" });
  try {
    const def = join(ROOT, "tests/data/failure/unlisted-tool");
    const r = await verity(["run", def, "--audit", "--runs-dir", dir]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n").filter((l) =>
      !l.startsWith("verity: ")
    );
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /unlisted-tool\/target\.toml: tools\[0\]\.name:/);
    assert.match(lines[0]!, /does not list a tool named "search_node"/);
    assert.match(lines[0]!, /closest listed: search_nodes, /);
    // Nothing was written: no report, no ledger.
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a server that never lists its tools: SETUP_FAILED naming tools/list, exit 1, within the start timeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-never-lists-" });
  try {
    const t0 = performance.now();
    const r = await verity([
      "run",
      join(ROOT, "tests/data/failure/never-lists"),
      "--audit",
      "--runs-dir",
      dir,
      "--json",
    ]);
    const ms = performance.now() - t0;
    assert.equal(r.code, 1, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.match(
      report.setupFailure,
      /never started: .*tools\/list did not finish within 2\.0 s/,
    );
    for (const v of report.verdicts) {
      assert.equal(v.outcome, "INCONCLUSIVE:SETUP_FAILED");
    }
    // Three control sessions of 2 s each (in parallel or not), no tool session.
    assert.ok(ms < 30_000, `took ${ms.toFixed(0)} ms`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an HTTP server that dies before listening: the cause has its exit status and error headline, not the last stack frame", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-http-crash-" });
  try {
    const r = await verity([
      "run",
      join(ROOT, "tests/data/failure/http-crash"),
      "--audit",
      "--runs-dir",
      dir,
      "--json",
    ]);
    assert.equal(r.code, 1, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.match(
      report.setupFailure,
      /exited before listening on port \d+ \(exit code 1\); stderr: .*config store unreachable: ECONNREFUSED/,
    );
    assert.doesNotMatch(report.setupFailure, /stderr: +at /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("non-JSON on stdout mid-session: run and reality apply one rule (kept as a problem, the answer after it counts)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-noise-" });
  try {
    const run = await verity([
      "run",
      "stdout-noise",
      "--json",
      "--runs-dir",
      dir,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    const ro = report.verdicts.find((v: { test: string }) =>
      v.test === "read_only"
    );
    assert.equal(ro.outcome, "PASS");
    const once = report.sessions.filter((s: { kind: string }) =>
      s.kind === "once"
    );
    assert.ok(once.length >= 3);
    for (const s of once) {
      assert.ok(
        s.problems.some((p: string) => /invalid JSON/.test(p)),
        JSON.stringify(s.problems),
      );
    }
    const reality = await verity([
      "reality",
      join(ROOT, "fixtures/stdout-noise"),
    ]);
    assert.equal(reality.code, 0, reality.stdout + reality.stderr);
    assert.match(reality.stdout, /get_note\s+passed/);
    assert.match(reality.stdout, /1 of 1 tools checked/);
    assert.doesNotMatch(reality.stdout, /invalid_output/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
