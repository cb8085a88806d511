/**
 * A small synthetic report for the renderer tests: every outcome kind, a
 * variant, concurrent attempts, a matched, a mismatched and an orphan
 * expectation, and hostile server-provided strings. Test-only.
 *
 * @module
 */
import { type Report, REPORT_SCHEMA } from "../lib/report/report.ts";
import { ENGINE_VERSION } from "../lib/verdicts/engine.ts";
import {
  checkExpectations,
  type ExpectedVerdict,
} from "../lib/report/expectations.ts";
import type { Verdict } from "../lib/verdicts/types.ts";

/** A tool name that needs escaping in every markup language. */
export const EVIL_TOOL = `evil<&"'>`;

/** A string a hostile server might put in a description or a value. */
export const EVIL_PAYLOAD =
  `<script>alert("owned")</script><img src=x onerror=alert(1)>`;

const SEED = `sha256:${"a".repeat(64)}`;
const AFTER = `sha256:${"b".repeat(64)}`;

function verdict(
  v: Partial<Verdict> & Pick<Verdict, "tool" | "test" | "outcome">,
): Verdict {
  const kind = v.outcome.split(":")[0] as Verdict["kind"];
  const hint = v.test === "read_only"
    ? "readOnlyHint"
    : v.test === "destructive"
    ? "destructiveHint"
    : v.test === "open_world"
    ? "openWorldHint"
    : "idempotentHint";
  return {
    variant: null,
    hint,
    declared: "TRUE",
    kind,
    reason: (v.outcome.split(":")[1] ?? null) as Verdict["reason"],
    secondary: [],
    observed: "unknown",
    overDeclared: false,
    facts: {},
    details: [],
    evidence: {},
    ...v,
  };
}

/** The verdicts of the synthetic report. */
export function syntheticVerdicts(): Verdict[] {
  return [
    verdict({
      tool: EVIL_TOOL,
      test: "read_only",
      outcome: "VIOLATION",
      observed: "read_only=fails",
      facts: { business_changed: true, append_only_changed: false },
      details: [`state changed between control and once in 3/3 runs`],
      evidence: {
        control_vs_once: [1, 2, 3].map((run) => ({
          run,
          from: SEED,
          to: AFTER,
          delta: {
            business: {
              lossy: true,
              added: [],
              removed: [],
              changed: [{
                region: "state.db:items",
                key: "[1]",
                lossy: true,
                fields: [{
                  field: "name",
                  before: "apple",
                  after: EVIL_PAYLOAD,
                  lossy: true,
                }],
              }],
            },
          },
        })),
      },
    }),
    verdict({
      tool: "writer",
      variant: "again",
      test: "sequential_idempotence",
      outcome: "INCONCLUSIVE:PARTIAL_COVERAGE",
      secondary: ["CALL_ERROR"],
      observed: "idempotent=unknown",
      details: ["sqlite:cache.db is declared but not observed"],
    }),
    verdict({
      tool: "writer",
      variant: "again",
      test: "concurrent_idempotence",
      outcome: "VIOLATION",
      observed: "idempotent=fails",
      facts: { diverged_attempts: 2, overlapped_attempts: 1 },
      details: [
        "2 attempt(s) diverged from one call; first: two_process attempt 1",
      ],
      evidence: {
        counts: {
          single_connection: {
            attempts: 3,
            diverged: 0,
            overlapped: 0,
            setup_failed: 0,
          },
          two_process: {
            attempts: 3,
            diverged: 2,
            overlapped: 1,
            setup_failed: 1,
          },
        },
        attempts: [
          {
            mode: "two_process",
            attempt: 1,
            diverged: true,
            overlap: true,
            overlapDetail: "both in flight 120.0 ms; ping round trips 5.0 ms",
            calls: ["ok", "ok"],
            timeline: [
              { event: "opened", t: 1000 },
              { event: "send call 1", t: 1010 },
              { event: "send call 2", t: 1012 },
              { event: "receive call 1", t: 1132 },
              { event: "receive call 2", t: 1135 },
              { event: "closed", t: 1140 },
            ],
            delta: {
              business: {
                lossy: false,
                added: [{ region: "state.db:items", key: "[9]" }],
                removed: [],
                changed: [],
              },
            },
          },
          {
            mode: "two_process",
            attempt: 2,
            diverged: true,
            overlap: false,
            overlapDetail: "calls did not overlap",
            calls: ["ok", "tool_error"],
            timeline: [
              { event: "send call 1", t: 50 },
              { event: "receive call 1", t: 60 },
              { event: "send call 2", t: 70 },
            ],
            delta: {
              business: {
                lossy: false,
                added: [{ region: "state.db:items", key: "[9]" }],
                removed: [],
                changed: [],
              },
            },
          },
        ],
        producedBy: ["two_process"],
      },
    }),
    verdict({
      tool: "writer",
      variant: "again",
      test: "destructive",
      declared: "TRUE",
      outcome: "NOT_APPLICABLE:PERMISSIVE_DECLARATION",
      observed: "non_destructive=holds",
      overDeclared: true,
    }),
    verdict({
      tool: "reader",
      test: "open_world",
      declared: "FALSE",
      outcome: "PASS",
      observed: "closed_world=holds",
      facts: { network_attempted: false },
      evidence: { network: [{ run: 1, attempts: [] }], oddity: EVIL_PAYLOAD },
    }),
  ];
}

/** The fixture expectations of the synthetic report. */
export function syntheticExpectations(): ExpectedVerdict[] {
  return [
    {
      tool: EVIL_TOOL,
      variant: null,
      test: "read_only",
      verdict: "VIOLATION",
      assertions: { business_changed: true },
    },
    {
      tool: "writer",
      variant: "again",
      test: "sequential_idempotence",
      verdict: "PASS",
      assertions: {},
    },
    {
      tool: "writer",
      variant: "again",
      test: "concurrent_idempotence",
      verdict: "VIOLATION",
      assertions: {},
    },
    {
      tool: "reader",
      variant: null,
      test: "open_world",
      verdict: "PASS",
      assertions: {},
    },
    {
      tool: "ghost",
      variant: null,
      test: "read_only",
      verdict: "PASS",
      assertions: {},
    },
  ];
}

const TOOLS_LIST = JSON.stringify({
  jsonrpc: "2.0",
  id: 2,
  result: {
    tools: [
      {
        name: EVIL_TOOL,
        description: `Reads items. ${EVIL_PAYLOAD}`,
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true, openWorldHint: "no" },
      },
      {
        name: "writer",
        description: "Writes an item.",
        inputSchema: { type: "object" },
        annotations: { idempotentHint: true, destructiveHint: true },
      },
      {
        name: "reader",
        description: "Reads.",
        inputSchema: { type: "object" },
        outputSchema: { type: "object" },
        annotations: { openWorldHint: false },
      },
    ],
  },
});

/** Options for {@linkcode syntheticReport}. */
export interface SyntheticReportOptions {
  /** An audit report (no expectations) instead of a fixture report. @default false */
  audit?: boolean;
}

/** Build the synthetic report. */
export function syntheticReport(options: SyntheticReportOptions = {}): Report {
  const audit = options.audit ?? false;
  const verdicts = syntheticVerdicts();
  const expected = audit ? [] : syntheticExpectations();
  const control = [1, 2, 3].map((run) => ({
    kind: "control" as const,
    run,
    stateDigest: SEED,
    setupFailure: null,
    calls: [],
    network: [],
    backend: "deno",
  }));
  return {
    schema: REPORT_SCHEMA,
    runId: "20261130T000000000Z-demo",
    provenance: {
      definition: {
        name: "demo",
        kind: audit ? "target" : "fixture",
        file: "/repo/fixtures/demo/fixture.toml",
        digest: `sha256:${"d".repeat(64)}`,
      },
      harness: { version: "0.1.0", commit: "c0ffee", dirty: false },
      engine: ENGINE_VERSION,
      deno: "2.9.6",
      sdk: "@modelcontextprotocol/sdk 1.32.2",
      capturedAt: "2026-11-30T00:00:00.000Z",
      options: { runs: 3, audit },
    },
    protocol: {
      initialize: null,
      toolsList: [TOOLS_LIST],
      serverInfo: { name: "demo<server>", version: "1.0" },
      listingProblems: [],
    },
    sandbox: { backend: "deno" },
    observations: {
      definition: {
        coverage: {
          complete: false,
          locations: [
            { location: "sqlite:state.db", observedBy: "sqlite:state.db" },
            { location: "sqlite:cache.db", observedBy: null },
          ],
        },
        reset: { verified: true, digests: [SEED, SEED], problem: null },
        seedDigest: SEED,
        control,
        startupWrites: false,
        seesNetwork: true,
        runs: 3,
      },
      tools: [],
    },
    snapshots: {},
    sessions: [],
    unexercised: ["unused_tool"],
    tests: [
      "sequential_idempotence",
      "concurrent_idempotence",
      "read_only",
      "destructive",
      "open_world",
    ],
    verdicts,
    expected,
    expectations: checkExpectations(expected, verdicts),
    audit,
  };
}

/** The synthetic audit report with the provenance of 2026-12-01: definition git, a pinned target, state effects. */
export function syntheticReportWithProvenance(): Report {
  const r = syntheticReport({ audit: true });
  r.provenance.definition.git = {
    commit: "c".repeat(40),
    dirty: true,
    repository: "https://example.org/defs.git",
    detail:
      "1 path(s) under its directory differ from the commit (target.toml)",
  };
  r.provenance.target = {
    pinned: true,
    package: "@example/server",
    version: "1.2.3",
    integrity: "sha512-abc",
    git: "https://example.org/server.git",
    commit: "e".repeat(40),
    preparedCache: true,
    runtime: "deno",
    lockIntegrity: "sha512-abc",
    tarball: { integrity: "sha512-abc", sha256: "sha256:00" },
    preparedAt: "2026-12-01T00:00:00.000Z",
  };
  r.stateEffects = {
    control: [{
      run: 1,
      from: `sha256:${"a".repeat(64)}`,
      to: `sha256:${"b".repeat(64)}`,
      changed: true,
      delta: {
        append_only: {
          lossy: false,
          added: [{ region: "state.db:boot_log", key: "[1]" }],
          removed: [],
          changed: [],
        },
      },
      deltaDigest: `sha256:${"1".repeat(64)}`,
    }],
    erroredCalls: [{
      tool: EVIL_TOOL,
      variant: null,
      session: "once",
      run: 1,
      call: 1,
      status: "tool_error",
      message: "<b>no</b>",
      from: `sha256:${"a".repeat(64)}`,
      to: `sha256:${"c".repeat(64)}`,
      stateChanged: true,
      beyondControl: true,
      deltaDigest: `sha256:${"2".repeat(64)}`,
    }],
  };
  return r;
}

/** A hostile argument value: markup, an ESC sequence and a C1 control (CSI). */
export const EVIL_VALUE = "<script>alert(3)</script>\u001b[2J\u009b";

/** What learning did, for a learned target: the violating tool's id derived from a hostile answer. */
export function syntheticLearned(): NonNullable<Report["learned"]> {
  const origins = [{
    path: "id",
    value: EVIL_VALUE,
    from: `derived from the answer of ${EVIL_TOOL}`,
  }];
  return {
    files: [{ path: "notes.json", kind: "json" }],
    steps: [{
      tool: EVIL_TOOL,
      arguments: { id: EVIL_VALUE },
      origins,
      outcome: "kept",
      detail: "added 1 record(s), changed 0 additively",
    }],
    calls: [{
      tool: EVIL_TOOL,
      variant: null,
      arguments: { id: EVIL_VALUE },
      origins,
      learned: "names_seed_record",
    }],
  };
}
