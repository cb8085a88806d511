/**
 * The verdict engine against fake observation logs: a perfect server, a
 * lossy one, a nondeterministic one and an always-unknown one.
 */
import assert from "node:assert/strict";
import { judge, type SnapshotStore } from "./engine.ts";
import type {
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import type { TestName } from "../definition/types.ts";
import type { Snapshot } from "../state/types.ts";
import type { Changeset } from "../state/changeset.ts";
import type { HintState } from "../contracts/contracts.ts";

/** A snapshot with one business table `items` and one append-only `audit`. */
function snap(
  items: Record<string, string>,
  audit = 0,
  extra: Record<string, string> = {},
): Snapshot {
  const rec = (o: Record<string, string>) =>
    Object.entries(o).sort().map(([k, v]) => ({
      key: JSON.stringify([k]),
      value: { key: k, value: v },
    }));
  return {
    regions: [
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "audit",
        category: "append_only",
        records: Array.from(
          { length: audit },
          (_, i) => ({ key: `[${i + 1}]`, value: { id: i + 1 } }),
        ),
      },
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "cache",
        category: "unclassified",
        records: rec(extra),
      },
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "items",
        category: "business",
        records: rec(items),
      },
    ],
    problems: [],
  };
}

const STORE: SnapshotStore = {
  seed: snap({ a: "1" }),
  added: snap({ a: "1", z: "new" }, 1),
  added2: snap({ a: "1", z: "new" }, 2),
  twoRows: snap({ a: "1", z: "new", y: "new" }, 2),
  overwritten: snap({ a: "changed" }),
  logged: snap({ a: "1" }, 1),
  cacheOnly: snap({ a: "1" }, 0, { c: "x" }),
  tokenA: snap({ a: "1", t: "aaaa" }),
  tokenB: snap({ a: "1", t: "bbbb" }),
};

function session(
  kind: SessionObservation["kind"],
  run: number,
  digest: string | null,
  status: "ok" | "tool_error" = "ok",
): SessionObservation {
  const calls = kind === "control" ? 0 : kind === "once" ? 1 : 2;
  return {
    kind,
    run,
    stateDigest: digest,
    setupFailure: digest === null ? "server did not start" : null,
    calls: Array.from(
      { length: calls },
      () => ({
        status,
        frameIndex: 1,
        ms: 1,
        message: status === "ok" ? null : "boom",
      }),
    ),
    network: [],
    backend: "deno",
  };
}

function defn(
  over: Partial<DefinitionObservations> = {},
): DefinitionObservations {
  return {
    coverage: {
      complete: true,
      locations: [{ location: "sqlite:state.db", observedBy: "state.db" }],
    },
    reset: { verified: true, digests: ["seed", "seed"], problem: null },
    seedDigest: "seed",
    control: [1, 2, 3].map((r) => session("control", r, "seed")),
    startupWrites: false,
    seesNetwork: true,
    runs: 3,
    ...over,
  };
}

function tool(
  hints: Partial<
    Record<
      "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint",
      HintState
    >
  >,
  once: (string | null)[],
  twice: (string | null)[],
  status: "ok" | "tool_error" = "ok",
): ToolObservations {
  const h = (s: HintState | undefined) => ({
    state: s ?? "ABSENT",
    detail: s === "MALFORMED" ? 'string: "true"' : null,
  });
  return {
    tool: "t",
    variant: null,
    arguments: {},
    hints: {
      readOnlyHint: h(hints.readOnlyHint),
      destructiveHint: h(hints.destructiveHint),
      idempotentHint: h(hints.idempotentHint),
      openWorldHint: h(hints.openWorldHint),
    },
    once: once.map((d, i) => session("once", i + 1, d, status)),
    twice: twice.map((d, i) => session("twice", i + 1, d, status)),
    concurrent: null,
    twoProcessSkipped: null,
  };
}

function outcome(test: TestName, t: ToolObservations, d = defn()): string {
  return judge(test, d, t, STORE).outcome;
}

Deno.test("an honest upsert passes sequential idempotence with an audit row per call", () => {
  const t = tool(
    { idempotentHint: "TRUE", readOnlyHint: "FALSE", destructiveHint: "FALSE" },
    ["added", "added", "added"],
    ["added2", "added2", "added2"],
  );
  const v = judge("sequential_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "PASS");
  assert.equal(v.observed, "idempotent=holds");
  assert.equal(v.facts.append_only_changed, true);
  assert.equal(v.facts.business_changed, false);
  assert.equal(outcome("destructive", t), "PASS");
  const ro = judge("read_only", defn(), t, STORE);
  assert.equal(ro.outcome, "NOT_APPLICABLE:PERMISSIVE_DECLARATION");
  assert.equal(ro.observed, "read_only=fails");
  assert.equal(ro.overDeclared, false);
});

Deno.test("a lossy server is a violation of destructiveHint false", () => {
  const t = tool({ destructiveHint: "FALSE" }, [
    "overwritten",
    "overwritten",
    "overwritten",
  ], ["overwritten", "overwritten", "overwritten"]);
  const v = judge("destructive", defn(), t, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.equal(v.facts.lossy, true);
  assert.match(v.details.join("\n"), /lost or overwritten in 3\/3 runs/);
});

Deno.test("an insert per call violates idempotentHint true in every run", () => {
  const t = tool({ idempotentHint: "TRUE" }, ["added", "added", "added"], [
    "twoRows",
    "twoRows",
    "twoRows",
  ]);
  assert.equal(outcome("sequential_idempotence", t), "VIOLATION");
});

Deno.test("a random token is NONDETERMINISTIC naming the column", () => {
  const t = tool({ idempotentHint: "TRUE" }, ["tokenA", "tokenB", "tokenA"], [
    "tokenB",
    "tokenA",
    "tokenA",
  ]);
  const v = judge("sequential_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "INCONCLUSIVE:NONDETERMINISTIC");
  assert.equal(v.facts.nondeterministic_columns, "items.value");
});

Deno.test("a change in only some runs is NONDETERMINISTIC, never a violation", () => {
  const t = tool({ readOnlyHint: "TRUE" }, ["logged", "seed", "logged"], []);
  assert.equal(outcome("read_only", t), "INCONCLUSIVE:NONDETERMINISTIC");
});

Deno.test("read-only: an append-only write is a violation; from rules 7 an unclassified one too, with its region", () => {
  assert.equal(
    outcome(
      "read_only",
      tool({ readOnlyHint: "TRUE" }, ["logged", "logged", "logged"], []),
    ),
    "VIOLATION",
  );
  assert.equal(
    outcome(
      "read_only",
      tool({ readOnlyHint: "TRUE" }, ["seed", "seed", "seed"], []),
    ),
    "PASS",
  );
  const cache = tool(
    { readOnlyHint: "TRUE" },
    ["cacheOnly", "cacheOnly", "cacheOnly"],
    [],
  );
  const v = judge("read_only", defn(), cache, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.equal(v.observed, "read_only=fails");
  const regions = v.evidence.changed_regions as {
    region: string;
    category: string;
  }[];
  assert.ok(regions.length > 0);
  assert.ok(
    regions.every((r) => r.category === "unclassified"),
    "the class is in the evidence",
  );
  assert.ok(v.details.some((d) => d.includes("does not classify")));
  // A report judged under rules 6 re-derives as it was judged.
  assert.equal(
    judge("read_only", defn(), cache, STORE, { rules: 6 }).outcome,
    "INCONCLUSIVE:UNCLASSIFIED_STATE",
  );
});

Deno.test("absent is never false, malformed is named, read-only supersedes", () => {
  const t = tool({}, ["seed", "seed", "seed"], ["seed", "seed", "seed"]);
  for (
    const test of [
      "read_only",
      "destructive",
      "sequential_idempotence",
      "open_world",
    ] as const
  ) {
    assert.equal(outcome(test, t), "NOT_APPLICABLE:NO_DECLARATION");
  }
  const v = judge("sequential_idempotence", defn(), t, STORE);
  assert.equal(
    v.observed,
    "idempotent=holds",
    "behaviour is reported even without a claim",
  );
  assert.equal(
    outcome(
      "read_only",
      tool({ readOnlyHint: "MALFORMED" }, ["seed", "seed", "seed"], []),
    ),
    "NOT_APPLICABLE:MALFORMED_DECLARATION",
  );
  const ro = tool(
    { readOnlyHint: "TRUE", destructiveHint: "FALSE", idempotentHint: "TRUE" },
    ["seed", "seed", "seed"],
    ["seed", "seed", "seed"],
  );
  assert.equal(
    outcome("destructive", ro),
    "NOT_APPLICABLE:SUPERSEDED_BY_READ_ONLY",
  );
  assert.equal(
    outcome("sequential_idempotence", ro),
    "NOT_APPLICABLE:SUPERSEDED_BY_READ_ONLY",
  );
});

Deno.test("a permissive declaration that behaved safely is an over-declaration", () => {
  const t = tool({ idempotentHint: "FALSE" }, ["added", "added", "added"], [
    "added2",
    "added2",
    "added2",
  ]);
  const v = judge("sequential_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "NOT_APPLICABLE:PERMISSIVE_DECLARATION");
  assert.equal(v.overDeclared, true);
});

Deno.test("partial coverage blocks PASS but never VIOLATION", () => {
  const partial = defn({
    coverage: {
      complete: false,
      locations: [{ location: "fs:ledger.txt", observedBy: null }],
    },
  });
  const ok = tool({ idempotentHint: "TRUE" }, ["seed", "seed", "seed"], [
    "seed",
    "seed",
    "seed",
  ]);
  assert.equal(
    outcome("sequential_idempotence", ok, partial),
    "INCONCLUSIVE:PARTIAL_COVERAGE",
  );
  const bad = tool({ idempotentHint: "TRUE" }, ["added", "added", "added"], [
    "twoRows",
    "twoRows",
    "twoRows",
  ]);
  const v = judge("sequential_idempotence", partial, bad, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.deepEqual(v.secondary, ["PARTIAL_COVERAGE"]);
});

Deno.test("always-unknown: failed setup, unverified reset, clean call errors", () => {
  const t = tool({ readOnlyHint: "TRUE" }, [null, null, null], []);
  assert.equal(outcome("read_only", t), "INCONCLUSIVE:SETUP_FAILED");
  const unverified = defn({
    reset: { verified: false, digests: ["seed", "seed2"], problem: "differ" },
  });
  assert.equal(
    outcome(
      "read_only",
      tool({ readOnlyHint: "TRUE" }, ["seed", "seed", "seed"], []),
      unverified,
    ),
    "INCONCLUSIVE:RESET_UNVERIFIED",
  );
  const clean = tool(
    { readOnlyHint: "TRUE" },
    ["seed", "seed", "seed"],
    [],
    "tool_error",
  );
  assert.equal(outcome("read_only", clean), "INCONCLUSIVE:CALL_ERROR");
  // An erroring call that still wrote is judged on the state.
  const dirty = tool(
    { readOnlyHint: "TRUE" },
    ["logged", "logged", "logged"],
    [],
    "tool_error",
  );
  assert.equal(outcome("read_only", dirty), "VIOLATION");
  // And a missing declaration keeps the call error visible as a secondary reason.
  const v = judge(
    "read_only",
    defn(),
    tool({}, ["seed", "seed", "seed"], [], "tool_error"),
    STORE,
  );
  assert.equal(v.outcome, "NOT_APPLICABLE:NO_DECLARATION");
  assert.deepEqual(v.secondary, ["CALL_ERROR"]);
});

Deno.test("open world: a network attempt absent from control sessions is a violation", () => {
  const t = tool({ openWorldHint: "FALSE" }, ["seed", "seed", "seed"], []);
  assert.equal(outcome("open_world", t), "PASS");
  for (const s of t.once) {
    s.network = [{ permission: "net", value: "127.0.0.1:9" }];
  }
  const v = judge("open_world", defn(), t, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.match(v.details.join(" "), /127\.0\.0\.1:9/);
  assert.equal(
    outcome("open_world", t, defn({ seesNetwork: false })),
    "INCONCLUSIVE:NO_NETWORK_OBSERVATION",
  );
  assert.equal(
    outcome(
      "open_world",
      tool({ openWorldHint: "TRUE" }, ["seed", "seed", "seed"], []),
    ),
    "NOT_APPLICABLE:PERMISSIVE_DECLARATION",
  );
});

/** Timer stamps of two calls that overlapped or not (ping round trips 1 ms). */
function stamps(
  mode: "single_connection" | "two_process",
  overlap: boolean,
): { event: string; t: number }[] {
  const pings = mode === "two_process"
    ? [1, 2].flatMap((i) => [
      { event: `ping ${i} send`, t: i },
      { event: `ping ${i} receive`, t: i + 1 },
    ])
    : [];
  // One connection: overlap when the second call is answered first; two
  // processes: both in flight 8 ms (overlap) or 0.5 ms (none).
  const second = mode === "single_connection"
    ? (overlap ? 15 : 25)
    : (overlap ? 30 : 20.5);
  return [
    ...pings,
    { event: "send call 1", t: 10 },
    { event: "send call 2", t: 12 },
    { event: "receive call 1", t: overlap ? 20 : 12.5 },
    { event: "receive call 2", t: second },
  ];
}

Deno.test("concurrent: one diverging attempt is conclusive; PASS needs overlap", () => {
  const attempt = (
    mode: "single_connection" | "two_process",
    n: number,
    digest: string,
    overlap: boolean,
  ) => ({
    mode,
    attempt: n,
    stateDigest: digest,
    setupFailure: null,
    calls: [
      { status: "ok" as const, frameIndex: null, ms: 1, message: null },
      { status: "ok" as const, frameIndex: null, ms: 1, message: null },
    ],
    timeline: stamps(mode, overlap),
  });
  const t = tool({ idempotentHint: "TRUE" }, ["added", "added", "added"], [
    "added2",
    "added2",
    "added2",
  ]);
  t.concurrent = [
    attempt("single_connection", 1, "added2", false),
    attempt("two_process", 1, "added2", false),
  ];
  assert.equal(
    outcome("concurrent_idempotence", t),
    "INCONCLUSIVE:NO_OVERLAP_OBSERVED",
  );
  t.concurrent[1]!.timeline = stamps("two_process", true);
  assert.equal(outcome("concurrent_idempotence", t), "PASS");
  // The overlap is the check's decision from the stamps, with its numbers.
  const attempts = judge("concurrent_idempotence", defn(), t, STORE).evidence
    .attempts as { overlap: boolean; overlapDetail: string }[];
  assert.deepEqual(attempts.map((a) => a.overlap), [false, true]);
  assert.equal(
    attempts[1]!.overlapDetail,
    "both in flight 8.0 ms; ping round trips combined 2.0 ms",
  );
  t.concurrent.push(attempt("two_process", 2, "twoRows", true));
  const v = judge("concurrent_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.deepEqual(v.evidence.producedBy, ["two_process"]);
  assert.equal(v.facts.diverged_attempts, 1);
});

Deno.test("concurrent: an attempt that ran out of time is TIMED_OUT, never a PASS beside it (rules 6); rules 5 kept its PASS", () => {
  const attempt = (
    mode: "single_connection" | "two_process",
    n: number,
    setupFailure: string | null,
    callMessage: string | null = null,
  ) => ({
    mode,
    attempt: n,
    stateDigest: setupFailure === null ? "added" : null,
    setupFailure,
    calls: setupFailure === null
      ? [
        { status: "ok" as const, frameIndex: null, ms: 1, message: null },
        callMessage === null
          ? { status: "ok" as const, frameIndex: null, ms: 1, message: null }
          : {
            status: "unknown" as const,
            frameIndex: null,
            ms: 0,
            message: callMessage,
          },
      ]
      : [],
    timeline: stamps(mode, setupFailure === null && callMessage === null),
  });
  const t = tool({ idempotentHint: "TRUE" }, ["added", "added", "added"], [
    "added",
    "added",
    "added",
  ]);
  const killed =
    "timed out: the overlap timer gave no answer within 30.0 s and was killed with its servers";
  t.concurrent = [
    attempt("single_connection", 1, null),
    attempt("two_process", 1, killed),
  ];
  const v = judge("concurrent_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "INCONCLUSIVE:TIMED_OUT");
  assert.equal(v.facts.timed_out_attempts, 1);
  assert.match(
    v.details.join("\n"),
    /1\/2 attempt\(s\) ran out of time; first: two_process attempt 1: timed out: the overlap timer/,
  );
  // The same evidence judged under rules 5 (reports before the reason).
  assert.equal(
    judge("concurrent_idempotence", defn(), t, STORE, { rules: 5 }).outcome,
    "PASS",
  );
  // Every attempt out of time: named, not SETUP_FAILED.
  t.concurrent = [attempt("two_process", 1, killed)];
  assert.equal(outcome("concurrent_idempotence", t), "INCONCLUSIVE:TIMED_OUT");
  // A call unanswered on one connection while the other was answered.
  t.concurrent = [
    attempt("single_connection", 1, null),
    attempt(
      "single_connection",
      2,
      null,
      "timed out: no answer to tools/call within 1.0 s",
    ),
  ];
  assert.equal(outcome("concurrent_idempotence", t), "INCONCLUSIVE:TIMED_OUT");
  // A failure to start that is not a timeout stays what it was.
  t.concurrent = [
    attempt("single_connection", 1, null),
    attempt("two_process", 1, "session opening failed: server exited"),
  ];
  assert.equal(outcome("concurrent_idempotence", t), "PASS");
  // Divergence seen in an attempt that finished is still a VIOLATION.
  t.concurrent = [
    { ...attempt("single_connection", 1, null), stateDigest: "twoRows" },
    attempt("two_process", 1, killed),
  ];
  assert.equal(outcome("concurrent_idempotence", t), "VIOLATION");
});

Deno.test("concurrent (rules 9): an attempt whose calls all failed and changed nothing is no divergence", () => {
  const busy = (n: number, stateDigest: string) => ({
    mode: "two_process" as const,
    attempt: n,
    stateDigest,
    setupFailure: null,
    calls: [0, 1].map(() => ({
      status: "tool_error" as const,
      frameIndex: null,
      ms: 1,
      message: "SQLITE_BUSY: database is locked",
    })),
    timeline: stamps("two_process", true),
  });
  const ok = (n: number) => ({
    ...busy(n, "added"),
    calls: busy(n, "added").calls.map((c) => ({
      ...c,
      status: "ok" as const,
      message: null,
    })),
  });
  const t = tool({ idempotentHint: "TRUE", readOnlyHint: "FALSE" }, [
    "added",
    "added",
    "added",
  ], ["added", "added", "added"]);
  // Both calls refused: the state is the seed's, one call's is not.
  t.concurrent = [ok(1), busy(2, "seed"), ok(3)];
  const v = judge("concurrent_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "PASS");
  assert.equal(v.facts.failed_without_effect_attempts, 1);
  // Under rules 8 the same evidence was a (false) VIOLATION.
  assert.equal(
    judge("concurrent_idempotence", defn(), t, STORE, { rules: 8 }).outcome,
    "VIOLATION",
  );
  // Calls that failed but wrote something still diverge.
  t.concurrent = [ok(1), busy(2, "twoRows")];
  assert.equal(
    judge("concurrent_idempotence", defn(), t, STORE).outcome,
    "VIOLATION",
  );
});

Deno.test("concurrent: attempts whose calls all failed are no evidence of idempotence", () => {
  const failedAttempt = (
    mode: "single_connection" | "two_process",
    n: number,
  ) => ({
    mode,
    attempt: n,
    stateDigest: "added",
    setupFailure: null,
    calls: [
      {
        status: "tool_error" as const,
        frameIndex: null,
        ms: 1,
        message: "no such entity",
      },
      {
        status: "tool_error" as const,
        frameIndex: null,
        ms: 1,
        message: "no such entity",
      },
    ],
    timeline: stamps(mode, true),
  });
  const t = tool({ idempotentHint: "FALSE" }, ["added", "added", "added"], [
    "added",
    "added",
    "added",
  ]);
  t.concurrent = [
    failedAttempt("single_connection", 1),
    failedAttempt("two_process", 1),
  ];
  const v = judge("concurrent_idempotence", defn(), t, STORE);
  assert.equal(v.outcome, "NOT_APPLICABLE:PERMISSIVE_DECLARATION");
  assert.equal(v.observed, "idempotent=unknown");
  assert.equal(v.overDeclared, false);
  assert.deepEqual(v.secondary, ["CALL_ERROR"]);
  // A once call that failed everywhere leaves nothing to compare, whatever the attempts did.
  const failedOnce = tool(
    { idempotentHint: "TRUE" },
    ["seed", "seed", "seed"],
    ["seed", "seed", "seed"],
    "tool_error",
  );
  failedOnce.concurrent = [{
    ...failedAttempt("two_process", 1),
    stateDigest: "seed",
  }];
  assert.equal(
    judge("concurrent_idempotence", defn(), failedOnce, STORE).outcome,
    "INCONCLUSIVE:CALL_ERROR",
  );
});

Deno.test("a check that throws is INCONCLUSIVE:CHECK_FAILED with the error as evidence, not a crashed run", () => {
  // The once sessions name a snapshot the evidence does not hold: the
  // read_only check's comparator throws.
  const t = tool(
    { readOnlyHint: "TRUE", openWorldHint: "FALSE" },
    ["missing", "missing", "missing"],
    [],
  );
  const v = judge("read_only", defn(), t, STORE);
  assert.equal(v.outcome, "INCONCLUSIVE:CHECK_FAILED");
  assert.equal(v.observed, "read_only=unknown");
  assert.deepEqual(v.evidence.check_error, {
    check: "read_only",
    name: "RangeError",
    message: "snapshot missing is missing from the evidence",
  });
  assert.match(v.details.join("\n"), /the read_only check failed/);
  // The other checks of the same tool still judge.
  assert.equal(judge("open_world", defn(), t, STORE).outcome, "PASS");
  // Under the rules a report was judged with before version 4, the same
  // evidence re-derives as it was judged then.
  assert.equal(
    judge("read_only", defn(), t, STORE, { rules: 3 }).outcome,
    "INCONCLUSIVE:SETUP_FAILED",
  );
});

Deno.test("read only: a refused write attempt is a VIOLATION of its own reason (rules 5); unseen attempts are said; rules 4 ignores them", () => {
  const withAttempts = (
    once: SessionObservation["attempts"][],
    control: SessionObservation["attempts"] = [],
  ) => {
    const d = defn();
    for (const c of d.control) c.attempts = control;
    const t = tool({ readOnlyHint: "TRUE" }, ["seed", "seed", "seed"], []);
    t.once.forEach((s, i) => (s.attempts = once[i] ?? []));
    return { d, t };
  };
  const w = { permission: "write", value: "/srv/app/cache.json" };
  // A write attempt in every run, state unchanged.
  let { d, t } = withAttempts([[w], [w], [w]]);
  let v = judge("read_only", d, t, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.equal(v.reason, "ATTEMPTED_WRITE");
  assert.equal(v.facts.write_attempted, true);
  assert.equal(v.facts.business_changed, false);
  assert.match(v.details[0] ?? "", /\/srv\/app\/cache\.json/);
  // The same write made by the control sessions too is the server's start, not the call.
  ({ d, t } = withAttempts([[w], [w], [w]], [w]));
  assert.equal(judge("read_only", d, t, STORE).outcome, "PASS");
  // In some runs only: NONDETERMINISTIC, never PASS.
  ({ d, t } = withAttempts([[w], [], []]));
  assert.equal(
    judge("read_only", d, t, STORE).outcome,
    "INCONCLUSIVE:NONDETERMINISTIC",
  );
  // A refused read is not a write: PASS, with the read as a fact.
  const r = { permission: "read", value: "/root/.ssh/id_rsa" };
  ({ d, t } = withAttempts([[r], [r], [r]]));
  v = judge("read_only", d, t, STORE);
  assert.equal(v.outcome, "PASS");
  assert.equal(v.facts.read_refused, true);
  assert.equal(v.facts.write_attempted, false);
  // State change and an attempt: a plain (state) VIOLATION.
  ({ d, t } = withAttempts([[w], [w], [w]]));
  for (const s of t.once) s.stateDigest = "logged";
  v = judge("read_only", d, t, STORE);
  assert.equal(v.outcome, "VIOLATION");
  assert.equal(v.reason, null);
  // A backend that sees no attempts: judged on state, and it says so.
  ({ d, t } = withAttempts([null, null, null], null));
  v = judge("read_only", d, t, STORE);
  assert.equal(v.outcome, "PASS");
  assert.equal(v.facts.attempts_observed, false);
  assert.match(v.details.join(" "), /attempts unseen/);
  // Rules version 4 judged on state only.
  ({ d, t } = withAttempts([[w], [w], [w]]));
  assert.equal(judge("read_only", d, t, STORE, { rules: 4 }).outcome, "PASS");
});

Deno.test("a declaration that changed between sessions is INCONCLUSIVE:DECLARATION_CHANGED under rules 8, both contracts as evidence; rules 7 judged the first listing", () => {
  const honest = tool({ readOnlyHint: "TRUE" }, ["seed", "seed", "seed"], [
    "seed",
    "seed",
    "seed",
  ]);
  assert.equal(outcome("read_only", honest), "PASS");
  const change = {
    session: "once t 2",
    fields: ["annotations.readOnlyHint"],
    first: { name: "t", annotations: { readOnlyHint: true } },
    then: { name: "t", annotations: { readOnlyHint: false } },
  };
  const pulled = { ...honest, declarationChanges: [change] };
  const v = judge("read_only", defn(), pulled, STORE);
  assert.equal(v.outcome, "INCONCLUSIVE:DECLARATION_CHANGED");
  assert.equal(v.overDeclared, false);
  assert.equal(v.facts.on_first_listing, "PASS");
  assert.deepEqual(v.evidence.declaration_changes, [change]);
  assert.match(v.details[0]!, /once run 2 of t: annotations\.readOnlyHint/);
  // Every test of the tool, the ones it does not claim too.
  assert.equal(
    judge("destructive", defn(), pulled, STORE).outcome,
    "INCONCLUSIVE:DECLARATION_CHANGED",
  );
  // A report judged under rules 7 re-derives as it was judged.
  assert.equal(
    judge("read_only", defn(), pulled, STORE, { rules: 7 }).outcome,
    "PASS",
  );
});

/** Changesets: what sessions changed outside their state directories. */
const NOTE = { type: "file" as const, mode: 0o644, format: "json" as const };
const CHANGESETS: Record<string, Changeset> = {
  // Start-up writes every session makes (a bytecode cache beside the code).
  boot: {
    changes: [{
      path: "/srv/__pycache__/s.pyc",
      before: null,
      after: { type: "file", mode: 0o644, size: 9, digest: "sha256:1" },
    }],
    lossy: false,
    problems: [],
  },
  // The same, plus a cache file under /tmp.
  cache: {
    changes: [
      {
        path: "/srv/__pycache__/s.pyc",
        before: null,
        after: { type: "file", mode: 0o644, size: 9, digest: "sha256:2" },
      },
      {
        path: "/tmp/cache.json",
        before: null,
        after: { ...NOTE, regions: [{ name: "$", records: [] }] },
      },
    ],
    lossy: false,
    problems: [],
  },
  // A note dropped from a file beside the code.
  dropped: {
    changes: [{
      path: "/srv/notes.json",
      before: {
        ...NOTE,
        regions: [{ name: "$", records: [{ key: '["a"]', value: { a: 1 } }] }],
      },
      after: { ...NOTE, regions: [{ name: "$", records: [] }] },
    }],
    lossy: false,
    problems: [],
  },
  cut: { changes: [], lossy: true, problems: ["more than 20000 entries"] },
};

function overlaid(
  t: ToolObservations,
  once: (string | null)[],
  twice: (string | null)[] = [],
): ToolObservations {
  t.once.forEach((s, i) => (s.changeset = once[i] ?? null));
  t.twice.forEach((s, i) => (s.changeset = twice[i] ?? null));
  return t;
}

const WRITES = defn({
  control: [1, 2, 3].map((r) => ({
    ...session("control", r, "seed"),
    changeset: "boot",
  })),
  writes: { observed: true, why: null },
});

Deno.test("overlay: a read-only tool that writes under /tmp is a VIOLATION naming the path; start-up writes the control sessions make do not count", () => {
  const t = overlaid(
    tool({ readOnlyHint: "TRUE" }, ["seed", "seed", "seed"], []),
    ["cache", "cache", "cache"],
  );
  const v = judge("read_only", WRITES, t, STORE, { changesets: CHANGESETS });
  assert.equal(v.outcome, "VIOLATION");
  assert.equal(v.facts.outside_changed, true);
  assert.deepEqual(
    v.evidence.outside_writes,
    [1, 2, 3].map((run) => ({
      run,
      paths: ["/tmp/cache.json"],
    })),
  );
  const honest = overlaid(
    tool({ readOnlyHint: "TRUE" }, ["seed", "seed", "seed"], []),
    ["boot", "boot", "boot"],
  );
  const h = judge("read_only", WRITES, honest, STORE, {
    changesets: CHANGESETS,
  });
  assert.equal(h.outcome, "PASS");
  assert.equal(h.facts.outside_changed, false);
});

Deno.test("overlay: a record lost from a file outside the state is destructive; a changeset cut short is never a PASS", () => {
  const t = overlaid(
    tool({ destructiveHint: "FALSE" }, ["seed", "seed", "seed"], []),
    ["dropped", "dropped", "dropped"],
  );
  const v = judge("destructive", WRITES, t, STORE, { changesets: CHANGESETS });
  assert.equal(v.outcome, "VIOLATION");
  const cut = overlaid(
    tool({ destructiveHint: "FALSE" }, ["seed", "seed", "seed"], []),
    ["cut", "cut", "cut"],
  );
  assert.equal(
    judge("destructive", WRITES, cut, STORE, { changesets: CHANGESETS })
      .outcome,
    "INCONCLUSIVE:PARTIAL_COVERAGE",
  );
});

Deno.test("learned: a destructive test on nothing (an empty seed, or nothing named and nothing changed) is NOTHING_TO_CHANGE, never PASS", () => {
  const d = (
    learned: ToolObservations["learned"],
    once: string[],
  ) =>
    judge("destructive", defn(), {
      ...tool({ readOnlyHint: "FALSE", destructiveHint: "FALSE" }, once, []),
      ...(learned ? { learned } : {}),
    }, STORE);
  const seed = ["seed", "seed", "seed"];
  const added = ["added", "added", "added"];
  // Not learned (a hand-written target or fixture): as before.
  assert.equal(d(undefined, seed).outcome, "PASS");
  const v = d("names_nothing", seed);
  assert.equal(v.outcome, "INCONCLUSIVE:NOTHING_TO_CHANGE");
  assert.equal(v.observed, "non_destructive=unknown");
  assert.equal(v.facts.nothing_to_change, true);
  assert.match(v.details[0]!, /no argument names a record the seed holds/);
  // Naming nothing but changing the state that holds the seed's records:
  // they could have been lost.
  assert.equal(d("names_nothing", added).outcome, "PASS");
  assert.equal(d("names_seed_record", seed).outcome, "PASS");
  assert.equal(d("no_arguments", seed).outcome, "PASS");
  // An empty seed: nothing pre-existing to lose, whatever the call did.
  assert.equal(
    d("empty_seed", added).outcome,
    "INCONCLUSIVE:NOTHING_TO_CHANGE",
  );
  // A record lost is a VIOLATION, named or not.
  assert.equal(
    d("names_nothing", ["overwritten", "overwritten", "overwritten"]).outcome,
    "VIOLATION",
  );
  // A permissive declaration on nothing is no over-declaration.
  const permissive = judge("destructive", defn(), {
    ...tool({ readOnlyHint: "FALSE", destructiveHint: "TRUE" }, seed, []),
    learned: "names_nothing",
  }, STORE);
  assert.equal(permissive.outcome, "NOT_APPLICABLE:PERMISSIVE_DECLARATION");
  assert.equal(permissive.overDeclared, false);
  // The other tests do not read it.
  assert.equal(
    judge("read_only", defn(), {
      ...tool({ readOnlyHint: "TRUE" }, seed, []),
      learned: "empty_seed",
    }, STORE).outcome,
    "PASS",
  );
});
