import assert from "node:assert/strict";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import sarifSchema from "@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json" with {
  type: "json",
};
import {
  definitionToolLines,
  renderSarif,
  SARIF_FINGERPRINT,
} from "./sarif.ts";
import {
  EVIL_TOOL,
  EVIL_VALUE,
  syntheticLearned,
  syntheticReport,
  syntheticReportWithProvenance,
} from "../../tests/_synthetic_report.ts";
import type { Report } from "./report.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/**
 * The official SARIF 2.1.0 schema (as shipped by Microsoft's
 * @microsoft/jest-sarif). It is draft-04: its `id` and `$schema` are dropped
 * so Ajv's default dialect reads it (the schema uses no draft-04-only
 * keyword); one `pattern` in it is not valid with the `u` flag.
 */
function sarifValidator() {
  const schema = { ...(sarifSchema as Record<string, unknown>) };
  delete schema.$schema;
  delete schema.id;
  const ajv = new (Ajv as Any)({
    allErrors: true,
    strict: false,
    unicodeRegExp: false,
  });
  (addFormats as Any)(ajv);
  return ajv.compile(schema);
}

const validate = sarifValidator();

function assertValidSarif(text: string): Any {
  const log = JSON.parse(text);
  const ok = validate(log);
  assert.ok(ok, JSON.stringify(validate.errors, null, 1));
  return log;
}

const SMALL = new URL(
  "../../tests/data/report/small_report.json",
  import.meta.url,
);

Deno.test("sarif: a fixture report is valid SARIF 2.1.0 with verity as the driver", () => {
  const log = assertValidSarif(
    renderSarif(syntheticReport(), { root: "/repo" }),
  );
  assert.equal(log.version, "2.1.0");
  assert.equal(log.$schema, "https://json.schemastore.org/sarif-2.1.0.json");
  assert.equal(log.runs.length, 1);
  const driver = log.runs[0].tool.driver;
  assert.equal(driver.name, "verity");
  assert.equal(driver.version, "0.1.0");
  assert.deepEqual(driver.rules.map((r: Any) => r.id), [
    "read_only",
    "destructive",
    "sequential_idempotence",
    "concurrent_idempotence",
    "open_world",
    "untested",
    "expectation",
    "setup",
  ]);
  for (const r of driver.rules) {
    assert.ok(r.help.text.length > 50, `rule ${r.id} has help text`);
    assert.ok(r.shortDescription.text);
    assert.equal(r.helpUri, undefined, "no docs URL given: no helpUri");
  }
  for (const res of log.runs[0].results) {
    assert.equal(typeof res.message.text, "string");
    assert.ok(["error", "note"].includes(res.level));
    assert.equal(driver.rules[res.ruleIndex].id, res.ruleId);
  }
});

Deno.test("sarif: one result per VIOLATION (error), INCONCLUSIVE (note) and mismatched expectation", () => {
  const log = JSON.parse(renderSarif(syntheticReport(), { root: "/repo" }));
  const results = log.runs[0].results;
  const summary = results.map((r: Any) =>
    `${r.properties.tool}|${r.ruleId}|${r.level}`
  );
  assert.deepEqual(summary, [
    `${EVIL_TOOL}|read_only|error`,
    "writer|untested|note",
    "writer|concurrent_idempotence|error",
    // the fixture expected PASS for writer[again] sequential_idempotence
    "writer|expectation|error",
    // an expectation for a tool that produced no verdict
    "ghost|expectation|error",
  ]);
  // PASS and NOT_APPLICABLE produce no result.
  assert.ok(!results.some((r: Any) => r.properties.outcome === "PASS"));
  const violation = results[0];
  assert.match(violation.message.text, /evil<&\\"'>/);
  assert.match(violation.message.text, /read_only VIOLATION/);
  assert.match(violation.message.text, /declares readOnlyHint: true/);
  assert.match(violation.message.text, /observed read_only=fails/);
  assert.deepEqual(
    {
      outcome: violation.properties.outcome,
      reason: violation.properties.reason,
      secondary: violation.properties.secondary,
      observed: violation.properties.observed,
      expectation: violation.properties.expectation,
    },
    {
      outcome: "VIOLATION",
      reason: null,
      secondary: [],
      observed: "read_only=fails",
      expectation: "matched",
    },
  );
  const note = results[1];
  assert.equal(note.properties.outcome, "INCONCLUSIVE:PARTIAL_COVERAGE");
  assert.equal(note.properties.reason, "PARTIAL_COVERAGE");
  assert.deepEqual(note.properties.secondary, ["CALL_ERROR"]);
  assert.match(note.message.text, /writer\[again\]/);
  const mismatch = results[3];
  assert.match(
    mismatch.message.text,
    /sequential_idempotence expected PASS, got INCONCLUSIVE:PARTIAL_COVERAGE/,
  );
  assert.deepEqual(mismatch.properties.mismatches, [
    "verdict INCONCLUSIVE:PARTIAL_COVERAGE, expected PASS",
  ]);
  assert.match(results[4].message.text, /got no verdict/);
  // Fingerprints are stable across runs: no run id, no digest.
  assert.equal(
    violation.partialFingerprints[SARIF_FINGERPRINT],
    `demo/${EVIL_TOOL}/read_only`,
  );
});

Deno.test("sarif: an audit report has no expectation rule or results", () => {
  const log = assertValidSarif(renderSarif(syntheticReport({ audit: true })));
  const run = log.runs[0];
  assert.ok(!run.tool.driver.rules.some((r: Any) => r.id === "expectation"));
  assert.deepEqual(run.results.map((r: Any) => r.ruleId), [
    "read_only",
    "untested",
    "concurrent_idempotence",
  ]);
  assert.equal(run.properties.mode, "audit");
  assert.equal(run.properties.violations, 2);
  assert.deepEqual(run.properties.overDeclarations, [
    "writer destructiveHint (argument sets: again)",
  ]);
});

Deno.test("sarif: the location is the definition file, relative to the repository root", () => {
  const report = syntheticReport();
  const lines = { [EVIL_TOOL]: 12, "writer[again]": 30, writer: 20 };
  const rel = JSON.parse(
    renderSarif(report, { root: "/repo/", toolLines: lines }),
  ).runs[0];
  const loc = rel.results[0].locations[0];
  assert.deepEqual(loc.physicalLocation.artifactLocation, {
    uri: "fixtures/demo/fixture.toml",
    uriBaseId: "%SRCROOT%",
  });
  assert.equal(loc.physicalLocation.region.startLine, 12);
  assert.deepEqual(loc.logicalLocations[0], {
    name: EVIL_TOOL,
    fullyQualifiedName: `demo/${EVIL_TOOL}`,
    kind: "function",
  });
  assert.equal(rel.originalUriBaseIds["%SRCROOT%"].uri, "file:///repo/");
  // The variant's own entry wins over the bare name; unknown tools: line 1.
  assert.equal(
    rel.results[1].locations[0].physicalLocation.region.startLine,
    30,
  );
  assert.equal(
    rel.results[4].locations[0].physicalLocation.region.startLine,
    1,
  );
  // Outside the root (a report made on another machine), or no root: still
  // relative to %SRCROOT%, from the definition's fixtures/ or targets/ folder,
  // never the other machine's file:// path.
  for (const opts of [{ root: "/elsewhere" }, {}, { root: "/rep" }]) {
    const run = JSON.parse(renderSarif(report, opts)).runs[0];
    assert.deepEqual(
      run.results[0].locations[0].physicalLocation.artifactLocation,
      { uri: "fixtures/demo/fixture.toml", uriBaseId: "%SRCROOT%" },
    );
    assert.ok(!JSON.stringify(run.results).includes("file://"));
  }
  report.provenance.definition.file = "/home/me/checks/my server.toml";
  assert.equal(
    JSON.parse(renderSarif(report, { root: "/repo" })).runs[0].results[0]
      .locations[0].physicalLocation.artifactLocation.uri,
    "my%20server.toml",
  );
});

Deno.test("sarif: valid for any origin: scp-like and local-path remotes become URIs, the rest is left out", () => {
  const cases: [string, string | null][] = [
    ["git@github.com:o/r.git", "ssh://git@github.com/o/r.git"],
    ["github.com:o/r.git", "ssh://github.com/o/r.git"],
    ["/srv/git/defs", "file:///srv/git/defs"],
    ["/srv/my defs", "file:///srv/my%20defs"],
    ["https://example.org/defs.git", "https://example.org/defs.git"],
    ["ssh://git@host:2222/defs.git", "ssh://git@host:2222/defs.git"],
    ["../defs", null],
    ["not a uri", null],
  ];
  for (const [origin, uri] of cases) {
    const report = syntheticReportWithProvenance();
    report.provenance.definition.git!.repository = origin;
    for (const root of ["/repo", null]) {
      const log = assertValidSarif(renderSarif(report, { root }));
      const vcs = (log.runs[0].versionControlProvenance ?? []).find((
        v: Any,
      ) => v.properties.role === "definition");
      assert.equal(
        vcs?.repositoryUri ?? null,
        uri ?? (root === null ? null : "file:///repo/"),
        `${origin} (root ${root})`,
      );
    }
  }
});

Deno.test("sarif: security-severity per test rule (readOnly and destructive high), helpUri to methodology anchors, untested claims under their own rule", async () => {
  const log = assertValidSarif(
    renderSarif(syntheticReport({ audit: true }), {
      root: "/repo",
      docsUrl: "https://github.com/o/verity/blob/v1/docs",
    }),
  );
  const rules = Object.fromEntries(
    log.runs[0].tool.driver.rules.map((r: Any) => [r.id, r]),
  );
  const sev = (id: string) => rules[id].properties["security-severity"];
  assert.equal(sev("read_only"), "8.0");
  assert.equal(sev("destructive"), "8.0");
  assert.equal(sev("open_world"), "7.0");
  assert.equal(sev("sequential_idempotence"), "5.0");
  assert.equal(sev("concurrent_idempotence"), "5.0");
  for (const id of ["untested", "setup"]) {
    assert.equal(sev(id), undefined, id);
    assert.ok(!rules[id].properties.tags.includes("security"), id);
  }
  assert.ok(rules.read_only.properties.tags.includes("security"));
  assert.equal(
    rules.read_only.helpUri,
    "https://github.com/o/verity/blob/v1/docs/methodology.md#read_only",
  );
  // every anchor is a heading of docs/methodology.md
  const md = await Deno.readTextFile(
    new URL("../../docs/methodology.md", import.meta.url),
  );
  const anchors = new Set(
    [...md.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!.toLowerCase().replace(/[`:.()]/g, "").trim().replace(/ /g, "-")
    ),
  );
  for (const r of Object.values(rules) as Any[]) {
    const [page, anchor] = new URL(r.helpUri).pathname.endsWith(
        "methodology.md",
      )
      ? ["methodology.md", new URL(r.helpUri).hash.slice(1)]
      : ["other", null];
    if (page === "methodology.md") {
      assert.ok(anchors.has(anchor!), `${r.id}: #${anchor} is no heading`);
    }
  }
  // an untested claim of a listed tool never exercised is a result too
  const report = syntheticReport({ audit: true });
  report.unexercised = ["reader"]; // listed, openWorldHint: false
  const results = assertValidSarif(renderSarif(report)).runs[0].results;
  const u = results.find((r: Any) => r.properties.reason === "NOT_EXERCISED");
  assert.ok(u, "NOT_EXERCISED result");
  assert.equal(u.ruleId, "untested");
  assert.equal(u.level, "note");
});

Deno.test("sarif: every published audit renders valid SARIF with relative locations", async () => {
  const { openReport } = await import("./pack.ts");
  const { parseEvidenceJson } = await import("../evidence/canonical.ts");
  const root = new URL("../../results/", import.meta.url);
  let n = 0;
  for (const e of Deno.readDirSync(root)) {
    const file = new URL(`${e.name}/report.json.gz`, root);
    let f: Deno.FsFile;
    try {
      f = await Deno.open(file);
    } catch {
      continue;
    }
    const text = await new Response(
      f.readable.pipeThrough(new DecompressionStream("gzip")),
    ).text();
    const opened = openReport(parseEvidenceJson(text));
    assert.ok("report" in opened, e.name);
    const log = assertValidSarif(
      renderSarif(opened.report as unknown as Report, {
        root: new URL("..", root).pathname,
      }),
    );
    const uri = log.runs[0].results[0]?.locations[0].physicalLocation
      .artifactLocation;
    if (uri) {
      assert.equal(uri.uriBaseId, "%SRCROOT%", e.name);
      assert.match(uri.uri, /^targets\/[^/]+\/target\.toml$/, e.name);
    }
    n++;
  }
  assert.ok(n >= 10, `${n} published audits`);
});

Deno.test("sarif: paths with spaces and non-ASCII are URI-encoded", () => {
  const report: Report = syntheticReport();
  report.provenance.definition.file = "/repo/my fixtures/dé mo/fixture.toml";
  const log = assertValidSarif(renderSarif(report, { root: "/repo" }));
  assert.equal(
    log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri,
    "my%20fixtures/d%C3%A9%20mo/fixture.toml",
  );
});

Deno.test("sarif: definitionToolLines finds each [[tools]] entry, variants too", () => {
  const toml = [
    "[fixture]", // 1
    'name = "not-a-tool"', // 2
    "", // 3
    "[[tools]]", // 4
    "name = 'get_item' # literal string", // 5
    "arguments = { id = 1 }", // 6
    "[tools.expected.read_only]", // 7
    'verdict = "PASS"', // 8
    "", // 9
    "  [[tools]]", // 10
    'variant = "again"', // 11
    'name = "put\\"item"', // 12
    "[[tools]]", // 13
    'name = "put\\"item"', // 14
    "[[adapters]]", // 15
    'name = "ignored"', // 16
  ].join("\n");
  assert.deepEqual(definitionToolLines(toml), {
    get_item: 4,
    'put"item[again]': 10,
    'put"item': 10,
  });
});

Deno.test("sarif: a real report (liar-readonly) is valid and has its violation", async () => {
  const report = JSON.parse(await Deno.readTextFile(SMALL)) as Report;
  const toml = await Deno.readTextFile(
    new URL("../../fixtures/liar-readonly/fixture.toml", import.meta.url),
  );
  const lines = definitionToolLines(toml);
  const toolsLine = toml.split("\n").indexOf("[[tools]]") + 1;
  assert.equal(lines.get_item, toolsLine);
  const log = assertValidSarif(renderSarif(report, { toolLines: lines }));
  const results = log.runs[0].results;
  assert.equal(results.length, 1);
  assert.equal(results[0].ruleId, "read_only");
  assert.equal(results[0].level, "error");
  assert.equal(
    results[0].locations[0].physicalLocation.region.startLine,
    toolsLine,
  );
});

Deno.test("sarif: the schema check itself rejects a broken log", () => {
  const log = JSON.parse(renderSarif(syntheticReport()));
  log.runs[0].results[0].level = "fatal";
  delete log.runs[0].results[1].message;
  delete log.runs[0].tool.driver.name;
  assert.equal(validate(log), false);
  const paths = validate.errors.map((e: Any) => e.instancePath);
  assert.ok(paths.includes("/runs/0/results/0/level"), paths.join(" "));
  assert.ok(paths.includes("/runs/0/tool/driver"), paths.join(" "));
});

Deno.test("sarif: provenance is valid SARIF: versionControlProvenance for the definition and the pinned target, run properties", () => {
  const log = assertValidSarif(
    renderSarif(syntheticReportWithProvenance(), { root: "/repo" }),
  );
  const run = log.runs[0];
  assert.deepEqual(
    run.versionControlProvenance.map((v: Any) => [
      v.properties.role,
      v.repositoryUri,
      v.revisionId,
      v.properties.dirty ?? null,
    ]),
    [
      ["definition", "https://example.org/defs.git", "c".repeat(40), true],
      ["target", "https://example.org/server.git", "e".repeat(40), null],
    ],
  );
  assert.equal(run.properties.target.package, "@example/server");
  assert.equal(run.properties.definition.git.dirty, true);
  assert.equal(run.properties.erroredCalls.changedState[0].tool, EVIL_TOOL);
  assert.match(
    run.properties.controlEffect.summary,
    /^changed the seed: append-only \+1/,
  );
  // A report without the fields (every published one): no provenance entries.
  const old = assertValidSarif(
    renderSarif(syntheticReport(), { root: "/repo" }),
  );
  assert.equal(old.runs[0].versionControlProvenance, undefined);
});

Deno.test("sarif: a learned target's results carry where each argument came from, its controls as JSON escapes", () => {
  const plain = JSON.parse(renderSarif(syntheticReport({ audit: true })));
  assert.ok(
    plain.runs[0].results.every((r: Any) =>
      !("argumentOrigins" in r.properties)
    ),
  );
  const report = syntheticReport({ audit: true });
  report.learned = syntheticLearned();
  const text = renderSarif(report);
  assert.ok(!text.includes("\u001b") && !text.includes("\u009b"));
  assert.ok(text.includes("\\u009b"));
  const log = assertValidSarif(text);
  const byTool = (tool: string) =>
    log.runs[0].results.filter((r: Any) => r.properties.tool === tool);
  const [violation] = byTool(EVIL_TOOL);
  assert.deepEqual(violation.properties.argumentOrigins, [{
    path: "id",
    value: EVIL_VALUE,
    from: `derived from the answer of ${EVIL_TOOL}`,
  }]);
  assert.equal(violation.properties.learned, "names_seed_record");
  // A tool with no learned set has none.
  assert.ok(
    byTool("writer").every((r: Any) => !("argumentOrigins" in r.properties)),
  );
});
