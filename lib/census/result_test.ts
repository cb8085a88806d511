import assert from "node:assert/strict";
import {
  type CensusServer,
  type CensusTool,
  classifyFailure,
  countHints,
  malformedOf,
  summarize,
} from "./result.ts";

function tool(name: string, states: [string, string | null][]): CensusTool {
  const [r, d, i, o] = states;
  return {
    name,
    hints: {
      readOnlyHint: { state: r![0] as "TRUE", detail: r![1] },
      destructiveHint: { state: d![0] as "TRUE", detail: d![1] },
      idempotentHint: { state: i![0] as "TRUE", detail: i![1] },
      openWorldHint: { state: o![0] as "TRUE", detail: o![1] },
    },
  };
}

const base = (id: string, over: Partial<CensusServer>): CensusServer => ({
  id,
  package: null,
  version: null,
  bin: null,
  backend: "deno",
  integrity: null,
  outcome: "audited",
  failure: null,
  server: null,
  manifest: null,
  tools: [],
  hints: countHints([]),
  malformed: [],
  reality: null,
  timing: { seconds: 1 },
  ...over,
});

const A: [string, null] = ["ABSENT", null];
const T: [string, null] = ["TRUE", null];
const F: [string, null] = ["FALSE", null];

Deno.test("countHints and malformedOf: declaring, complete, malformed with its kind", () => {
  const tools = [
    tool("none", [A, A, A, A]),
    tool("all", [T, F, T, F]),
    tool("bad", [["MALFORMED", 'string: "true"'], A, [
      "MALFORMED",
      "duplicate_key: sent 2 times, last true",
    ], A]),
  ];
  const c = countHints(tools);
  assert.equal(c.tools, 3);
  assert.equal(c.toolsDeclaring, 2);
  assert.equal(c.toolsComplete, 1);
  assert.equal(c.toolsMalformed, 1);
  assert.deepEqual(c.perHint.readOnlyHint, {
    TRUE: 1,
    FALSE: 0,
    ABSENT: 1,
    MALFORMED: 1,
  });
  assert.deepEqual(
    malformedOf(tools).map((m) => `${m.tool}.${m.hint}:${m.kind}`),
    [
      "bad.readOnlyHint:string",
      "bad.idempotentHint:duplicate_key",
    ],
  );
});

Deno.test("classifyFailure: timeouts, credentials, configuration, crashes, listing problems", () => {
  assert.equal(classifyFailure("timeout", "x", ""), "timed_out");
  assert.equal(
    classifyFailure("deadline", "tools/list did not finish", ""),
    "timed_out",
  );
  assert.equal(
    classifyFailure(
      "exited",
      "server exited (exit code 1)",
      "Error: BRAVE_API_KEY environment variable is required",
    ),
    "needs_credentials",
  );
  assert.equal(
    classifyFailure("exited", "server exited", "Please provide an API key"),
    "needs_credentials",
  );
  // A secret's name with more than one underscore segment (server-slack
  // 2025.4.25, results/census-2026-12-01/REVIEW.md).
  assert.equal(
    classifyFailure(
      "exited",
      "server exited (exit code 1)",
      "Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables",
    ),
    "needs_credentials",
  );
  assert.equal(
    classifyFailure(
      "exited",
      "server exited",
      "Error: DATABASE_URL is not set",
    ),
    "needs_configuration",
  );
  assert.equal(
    classifyFailure("exited", "server exited", "Error: MY_DB_PATH is not set"),
    "needs_configuration",
  );
  assert.equal(
    classifyFailure("exited", "server exited", "Usage: mcp-server <dir>"),
    "needs_configuration",
  );
  assert.equal(
    classifyFailure("exited", "server exited (signal SIGSEGV)", "segfault"),
    "crashed",
  );
  assert.equal(
    classifyFailure("invalid_output", "not JSON-RPC", ""),
    "cannot_list",
  );
  assert.equal(
    classifyFailure("closed", "tools/list failed", ""),
    "cannot_list",
  );
});

Deno.test("summarize: outcomes, failures, grades, malformed kinds sorted; order does not matter", () => {
  const reality = (score: number | null, grade: "A" | null) => ({
    file: "r",
    score,
    grade,
    checked: 1,
    total: 1,
    passed: 1,
    flagged: 0,
    failed: 0,
    skipped: 0,
    lowCoverage: false,
  });
  const bad = [
    tool("t", [["MALFORMED", "string: x"], ["MALFORMED", "null: null"], A, A]),
  ];
  const servers = [
    base("a", {
      reality: reality(100, "A"),
      tools: bad,
      hints: countHints(bad),
      malformed: malformedOf(bad),
    }),
    base("b", { reality: reality(60, null) }),
    base("c", { reality: reality(null, null) }),
    base("d", {
      outcome: "failed",
      failure: { stage: "list", kind: "needs_credentials", message: "m" },
    }),
  ];
  const s = summarize(servers);
  assert.deepEqual(s.outcomes, { audited: 3, partial: 0, failed: 1 });
  assert.equal(s.failures.needs_credentials, 1);
  assert.deepEqual(s.grades, {
    A: 1,
    B: 0,
    C: 0,
    D: 0,
    F: 0,
    ungraded: 1,
    none: 1,
  });
  assert.deepEqual(Object.keys(s.malformedKinds), ["null", "string"]);
  assert.equal(s.serversMalformed, 1);
  assert.deepEqual(summarize([...servers].reverse()), s);
});

Deno.test("summarize with behavior: batteries summed; a battery that did not finish counts its listing's claims, untested", () => {
  // readOnlyHint: true makes one claim (read_only); the others supersede.
  const ro = [tool("get", [T, A, A, A])];
  const lying = [{
    ...tool("put", [F, F, A, A]),
    verdicts: [{
      variant: null,
      test: "destructive" as const,
      outcome: "VIOLATION",
      evidence: `sha256:${"0".repeat(64)}`,
    }],
  }];
  const server = (
    id: string,
    tools: CensusTool[],
    behavior: NonNullable<CensusServer["behavior"]>,
  ) => base(id, { tools, hints: countHints(tools), behavior });
  const claims = (held: number, violated: number, untested: number) => ({
    falsifiable: held + violated + untested,
    tested: held + violated,
    held,
    violated,
    untested,
    violationRate: held + violated === 0 ? null : violated / (held + violated),
  });
  const ran = {
    failure: null,
    report: "r",
    target: "t",
    stateFiles: 1,
    seeding: { kept: 1 },
  };
  const servers = [
    server("lied", lying, { ...ran, claims: claims(0, 1, 0) }),
    server("slow", ro, {
      failure: { kind: "timed_out", message: "the battery timed out" },
      report: null,
      target: null,
      stateFiles: 0,
      seeding: null,
      claims: null,
    }),
  ];
  const s = summarize(servers, true);
  assert.deepEqual(s.behavior, {
    servers: 2,
    failed: { timed_out: 1, failed: 0, internal_error: 0 },
    serversViolating: 1,
    claims: claims(0, 1, 1),
    verdicts: { PASS: 0, VIOLATION: 1, INCONCLUSIVE: 0, NOT_APPLICABLE: 0 },
  });
  assert.deepEqual(s.claims, {
    falsifiable: 2,
    tested: 1,
    violated: 1,
    violationRate: 1,
  });
  // Without --behavior nothing is tested and no behavior summary exists.
  const plain = summarize(servers);
  assert.equal(plain.behavior, undefined);
  assert.equal(plain.claims!.tested, 0);
});
