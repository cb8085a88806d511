import assert from "node:assert/strict";
import { DOMParser } from "@xmldom/xmldom";
import { renderJunit } from "./junit.ts";
import { EVIL_PAYLOAD, EVIL_TOOL, syntheticReport } from "./_test_report.ts";
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

function cases(doc: Any) {
  return Array.from(doc.getElementsByTagName("testcase") as Any[]).map((
    c: Any,
  ) => ({
    classname: c.getAttribute("classname"),
    name: c.getAttribute("name"),
    failure: c.getElementsByTagName("failure")[0] ?? null,
    skipped: c.getElementsByTagName("skipped")[0] ?? null,
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

Deno.test("junit: an audit run fails on VIOLATION and skips INCONCLUSIVE and NOT_APPLICABLE", () => {
  const doc = parseXml(renderJunit(syntheticReport({ audit: true })));
  const got = cases(doc).map((c) =>
    `${c.name} ${
      c.failure
        ? `FAIL:${c.failure.getAttribute("type")}`
        : c.skipped
        ? `SKIP:${c.skipped.getAttribute("message")}`
        : "ok"
    }`
  );
  assert.deepEqual(got, [
    "read_only FAIL:VIOLATION",
    "sequential_idempotence SKIP:INCONCLUSIVE:PARTIAL_COVERAGE: sqlite:cache.db is declared but not observed",
    "concurrent_idempotence FAIL:VIOLATION",
    "destructive SKIP:NOT_APPLICABLE:PERMISSIVE_DECLARATION",
    "open_world ok",
  ]);
  const suite = doc.getElementsByTagName("testsuite")[0];
  assert.equal(suite.getAttribute("failures"), "2");
  assert.equal(suite.getAttribute("skipped"), "2");
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
