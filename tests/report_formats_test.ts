/**
 * Report formats end to end: `verity report --format html|sarif|junit` on a
 * saved report, and `verity run --html/--sarif/--junit` on a real fixture.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SMALL = new URL("./data/report/small_report.json", import.meta.url)
  .pathname;

async function verity(args: string[]) {
  return await runVerity(args, { cwd: ROOT });
}

function toolsLine(toml: string): number {
  return toml.split("\n").indexOf("[[tools]]") + 1;
}

Deno.test("verity report --format sarif prints a SARIF log with the violation", async () => {
  const r = await verity(["report", SMALL, "--format", "sarif"]);
  assert.equal(r.code, 0, r.stderr);
  const log = JSON.parse(r.stdout);
  assert.equal(log.version, "2.1.0");
  assert.equal(log.runs[0].tool.driver.name, "verity");
  const results = log.runs[0].results;
  assert.equal(results.length, 1);
  assert.equal(results[0].ruleId, "read_only");
  assert.equal(results[0].level, "error");
  assert.match(results[0].message.text, /"get_item": read_only VIOLATION/);
  // The report names its definition by absolute path; whether that path
  // exists here or not, the URI ends in the fixture's own path.
  assert.match(
    results[0].locations[0].physicalLocation.artifactLocation.uri,
    /fixtures\/liar-readonly\/fixture\.toml$/,
  );
});

Deno.test("verity report --format html and junit print the other renderings", async () => {
  const html = await verity(["report", SMALL, "--format", "html"]);
  assert.equal(html.code, 0, html.stderr);
  assert.ok(html.stdout.startsWith("<!DOCTYPE html>"));
  assert.match(html.stdout, /verity report: liar-readonly/);
  const junit = await verity(["report", SMALL, "--format", "junit"]);
  assert.equal(junit.code, 0, junit.stderr);
  assert.ok(junit.stdout.startsWith(`<?xml version="1.0" encoding="UTF-8"?>`));
  assert.match(junit.stdout, /<testsuite name="liar-readonly" tests="5"/);
});

Deno.test("verity report: an unknown --format is exit 2 with one line naming the value", async () => {
  const r = await verity(["report", SMALL, "--format", "yaml"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /^verity report: --format must be one of text, json, html, sarif, junit, markdown, got "yaml"$/,
  );
});

Deno.test("verity run: an output in a missing directory is exit 2 before anything runs", async () => {
  const runs = await Deno.makeTempDir({ prefix: "verity-formats-" });
  try {
    const r = await verity([
      "run",
      "liar-readonly",
      "--runs-dir",
      runs,
      "--sarif",
      join(runs, "no", "such", "dir", "out.sarif"),
    ]);
    assert.equal(r.code, 2);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      /--sarif .*out\.sarif: directory .* does not exist/,
    );
    assert.deepEqual([...Deno.readDirSync(runs)], [], "nothing was run");
    const same = await verity([
      "run",
      "liar-readonly",
      "--html",
      join(runs, "x"),
      "--junit",
      join(runs, "x"),
    ]);
    assert.equal(same.code, 2);
    assert.match(same.stderr, /--html and --junit both write/);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("verity run --html --sarif --junit writes all three beside the report", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-formats-" });
  try {
    const out = {
      html: join(dir, "report.html"),
      sarif: join(dir, "report.sarif"),
      junit: join(dir, "junit.xml"),
    };
    const r = await verity([
      "run",
      "liar-readonly",
      "--runs-dir",
      join(dir, "runs"),
      "--html",
      out.html,
      "--sarif",
      out.sarif,
      "--junit",
      out.junit,
    ]);
    assert.equal(r.code, 0, r.stderr);
    for (const p of Object.values(out)) {
      assert.match(r.stderr, new RegExp(`verity: wrote ${p}`));
    }
    // No temp files left behind.
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
      ["junit.xml", "report.html", "report.sarif", "runs"],
    );
    const toml = await Deno.readTextFile(
      join(ROOT, "fixtures/liar-readonly/fixture.toml"),
    );
    const sarif = JSON.parse(await Deno.readTextFile(out.sarif));
    const result = sarif.runs[0].results[0];
    assert.equal(sarif.runs[0].results.length, 1);
    assert.equal(result.ruleId, "read_only");
    // The definition is inside this checkout: a path relative to its root,
    // at the tool's [[tools]] line.
    assert.deepEqual(result.locations[0].physicalLocation, {
      artifactLocation: {
        uri: "fixtures/liar-readonly/fixture.toml",
        uriBaseId: "%SRCROOT%",
      },
      region: { startLine: toolsLine(toml) },
    });
    const junit = await Deno.readTextFile(out.junit);
    assert.match(
      junit,
      /<testsuite name="liar-readonly" tests="5" failures="0" errors="0" time="\d+\.\d{3}" timestamp="/,
    );
    const html = await Deno.readTextFile(out.html);
    assert.match(html, /<span class="badge k-VIOLATION">VIOLATION<\/span>/);
    assert.match(html, /expectations:<\/strong> 5\/5 matched/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
