import assert from "node:assert/strict";
import { parseToolPages } from "../contracts/contracts.ts";
import { planReality } from "./plan.ts";
import { buildReport, type ObservedCall, rejudgeReport } from "./report.ts";
import { gradeFor, missesThreshold, scoreLine, summarize } from "./score.ts";

Deno.test("score: grades at the documented thresholds", () => {
  const cases: [number, string][] = [
    [100, "A"],
    [97, "A"],
    [96.99, "B"],
    [90, "B"],
    [89.9, "C"],
    [75, "C"],
    [74.9, "D"],
    [50, "D"],
    [49.9, "F"],
    [0, "F"],
  ];
  for (const [s, g] of cases) assert.equal(gradeFor(s), g, String(s));
});

Deno.test("score: share of checkable tools not flagged; failed and skipped do not count", () => {
  const t = (
    status: "passed" | "flagged" | "failed" | "skipped",
    echoMismatch = false,
  ) => ({ status, echoMismatch });
  const s = summarize([
    t("passed"),
    t("passed", true),
    t("flagged"),
    t("failed"),
    t("skipped"),
  ]);
  assert.equal(s.checkable, 3);
  assert.equal(s.score, 66.6, "rounded down");
  assert.equal(s.grade, "D");
  assert.equal(s.echoMismatches, 1);
  assert.equal(missesThreshold(s, 66.7), true);
  assert.equal(missesThreshold(s, 66.6), false);
  const none = summarize([t("failed"), t("skipped")]);
  assert.equal(none.score, null);
  assert.equal(none.grade, null);
  assert.equal(
    missesThreshold(none, 0),
    true,
    "no evidence never passes a threshold",
  );
});

function page(tools: unknown[]): string {
  return JSON.stringify({ jsonrpc: "2.0", id: 2, result: { tools } });
}

const TOOLS = [
  {
    name: "ro",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: "rw",
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: false },
  },
  {
    name: "bad_hint",
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: "true" },
  },
  { name: "none", inputSchema: { type: "object" } },
  {
    name: "ro",
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: true },
  },
];

Deno.test("plan: only readOnlyHint TRUE is read-only; MALFORMED and ABSENT are skipped; duplicates refused", () => {
  const { contracts } = parseToolPages([page(TOOLS)]);
  const plan = planReality(contracts);
  assert.deepEqual(plan.map((p) => p.skip?.reason ?? "call"), [
    "call",
    "not_read_only",
    "not_read_only",
    "not_read_only",
    "invalid_tool",
  ]);
  assert.match(plan[2]!.skip!.message, /readOnlyHint is MALFORMED/);
  const all = planReality(contracts, { includeDestructive: true });
  assert.deepEqual(all.map((p) => p.skip?.reason ?? "call"), [
    "call",
    "call",
    "call",
    "call",
    "invalid_tool",
  ]);
});

Deno.test("report: verdicts re-derive from the report; a tampered status is caught", () => {
  const { contracts } = parseToolPages([page(TOOLS.slice(0, 2))]);
  const plan = planReality(contracts, { includeDestructive: true });
  const calls = new Map<string, ObservedCall[]>([
    ["ro", [{
      session: "s",
      observation: {
        kind: "result",
        result: { content: [{ type: "text", text: "Paris: 18 °C" }] },
        ms: 2,
      },
    }]],
    ["rw", [{
      session: "s",
      observation: { kind: "result", result: { content: [] }, ms: 2 },
    }]],
  ]);
  const report = buildReport({
    verity: "test",
    server: {
      command: ["x"],
      target: null,
      serverInfo: null,
      sandbox: "none",
      scratchState: false,
    },
    options: { seed: 1, includeDestructive: true, timeoutS: 30 },
    plan,
    calls,
    listingProblems: [],
  });
  assert.deepEqual(report.tools.map((t) => t.status), ["passed", "flagged"]);
  assert.equal(report.summary.score, 50);
  const saved = JSON.parse(JSON.stringify(report));
  assert.deepEqual(rejudgeReport(saved), []);
  saved.tools[1].status = "passed";
  saved.tools[1].flags = [];
  saved.tools[1].calls[0].status = "passed";
  saved.tools[1].calls[0].flags = [];
  const diffs = rejudgeReport(saved);
  assert.ok(
    diffs.some((d) => d.includes("rw: status passed, re-derived flagged")),
    diffs.join("\n"),
  );
  assert.ok(
    diffs.some((d) =>
      d.includes("rw call 1: status passed, re-derived flagged")
    ),
    diffs.join("\n"),
  );
  assert.ok(diffs.includes("summary does not match the tools"));
});

Deno.test("report: a planned call the server never answered is a failed call", () => {
  const { contracts } = parseToolPages([page(TOOLS.slice(0, 1))]);
  const report = buildReport({
    verity: "test",
    server: {
      command: ["x"],
      target: null,
      serverInfo: null,
      sandbox: "none",
      scratchState: false,
    },
    options: { seed: 1, includeDestructive: false, timeoutS: 30 },
    plan: planReality(contracts),
    calls: new Map(),
    listingProblems: [],
  });
  assert.equal(report.tools[0]!.status, "failed");
  assert.equal(report.tools[0]!.failure?.kind, "no_answer");
});

Deno.test("score: under half the tools checked there is no grade, and --fail-under fails unless low coverage is allowed", () => {
  const t = (status: "passed" | "skipped") => ({ status, echoMismatch: false });
  const low = summarize([
    t("passed"),
    t("passed"),
    ...Array(12).fill(t("skipped")),
  ]);
  assert.equal(low.score, 100);
  assert.equal(low.grade, null);
  assert.equal(low.lowCoverage, true);
  assert.equal(
    scoreLine(low),
    "100% (12/14 tools skipped; 2/14 checked): ungraded, under half the tools checked",
  );
  assert.equal(missesThreshold(low, 90), true);
  assert.equal(missesThreshold(low, 90, true), false);
  const half = summarize([t("passed"), t("skipped")]);
  assert.equal(half.grade, "A");
  assert.equal(half.lowCoverage, false);
  assert.equal(scoreLine(half), "100% A (1/2 tools skipped; 1/2 checked)");
});

Deno.test("plan: a tool the definition gives argument sets is called with each, in order, and no generated ones; the others are generated", () => {
  const { contracts } = parseToolPages([page(TOOLS)]);
  const plan = planReality(contracts, {
    includeDestructive: true,
    argumentSets: [
      { tool: "rw", variant: "a", arguments: { path: "{state}/x" } },
      { tool: "rw", variant: "b", arguments: {} },
    ],
  });
  const rw = plan.find((p) => p.name === "rw")!;
  assert.deepEqual(rw.calls.map((c) => [c.from, c.arguments]), [
    [{ kind: "definition", variant: "a" }, { path: "{state}/x" }],
    [{ kind: "definition", variant: "b" }, {}],
  ]);
  const ro = plan.find((p) => p.name === "ro")!;
  assert.deepEqual(ro.calls.map((c) => c.from), [{ kind: "generated" }]);
  // Still skipped without --include-destructive: the definition's
  // arguments do not make a write tool safe to call.
  const safe = planReality(contracts, {
    argumentSets: [{ tool: "rw", variant: null, arguments: {} }],
  });
  assert.equal(
    safe.find((p) => p.name === "rw")!.skip?.reason,
    "not_read_only",
  );
});

Deno.test("report: a tool's status joins its calls': flagged if any is, else passed if any is, else failed", () => {
  const { contracts } = parseToolPages([page(TOOLS.slice(0, 1))]);
  const plan = planReality(contracts, {
    argumentSets: [
      { tool: "ro", variant: "ok", arguments: { city: "Paris" } },
      { tool: "ro", variant: "err", arguments: { city: "Nowhere" } },
      { tool: "ro", variant: "empty", arguments: { city: "Oslo" } },
    ],
  });
  const result = (r: unknown): ObservedCall => ({
    session: "s",
    observation: { kind: "result", result: r, ms: 1 },
  });
  const build = (calls: ObservedCall[]) =>
    buildReport({
      verity: "test",
      server: {
        command: ["x"],
        target: null,
        serverInfo: null,
        sandbox: "none",
        scratchState: false,
      },
      options: { seed: 1, includeDestructive: false, timeoutS: 30 },
      plan,
      calls: new Map([["ro", calls]]),
      listingProblems: [],
    }).tools[0]!;
  const ok = result({ content: [{ type: "text", text: "Paris: 18 °C" }] });
  const err = result({
    isError: true,
    content: [{ type: "text", text: "no" }],
  });
  const empty = result({ content: [] });
  const t = build([ok, err, empty]);
  assert.deepEqual(t.calls.map((c) => c.status), [
    "passed",
    "failed",
    "flagged",
  ]);
  assert.equal(t.status, "flagged");
  assert.deepEqual(t.flags.map((f) => f.rule), ["empty_content"]);
  assert.equal(build([ok, err, ok]).status, "passed");
  const failed = build([err, err, err]);
  assert.equal(failed.status, "failed");
  assert.equal(failed.failure?.kind, "is_error");
});
