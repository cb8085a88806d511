/**
 * The rules that keep an audit from giving false advice: process-memory
 * evidence, coverage none, declared memory state, a server that could not
 * be audited, and over-declarations only on positive evidence.
 */
import assert from "node:assert/strict";
import { judge, serverFailure, type SnapshotStore } from "./engine.ts";
import { maskVolatile, processMemoryEvidence } from "./process_memory.ts";
import type {
  CallObservation,
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import type { Snapshot } from "../state/types.ts";
import { overDeclarations } from "../report/over_declarations.ts";

const EMPTY: Snapshot = { regions: [], problems: [] };
const STORE: SnapshotStore = { seed: EMPTY };

function call(
  response: string | null,
  status: CallObservation["status"] = "ok",
): CallObservation {
  return {
    status,
    frameIndex: 1,
    ms: 1,
    message: status === "ok" ? null : "boom",
    response: response === null
      ? null
      : JSON.stringify({ content: [{ type: "text", text: response }] }),
    ...(status === "unknown" ? { ended: "exited" } : {}),
  };
}

function session(
  kind: SessionObservation["kind"],
  run: number,
  responses: (string | null)[],
  status: CallObservation["status"] = "ok",
): SessionObservation {
  return {
    kind,
    run,
    stateDigest: "seed",
    setupFailure: null,
    calls: responses.map((r) => call(r, status)),
    network: [],
    backend: "deno",
  };
}

function defn(
  locations: { location: string; observedBy: string | null }[],
): DefinitionObservations {
  return {
    coverage: {
      complete: locations.every((l) => l.observedBy !== null),
      locations,
    },
    reset: { verified: true, digests: ["seed", "seed"], problem: null },
    seedDigest: "seed",
    control: [1, 2, 3].map((r) => session("control", r, [])),
    startupWrites: false,
    seesNetwork: true,
    runs: 3,
  };
}

const OBSERVED = [{
  location: "sqlite:state.db",
  observedBy: "sqlite:state.db",
}];

function tool(
  first: string,
  second: string,
  hints: Partial<
    Record<
      "readOnlyHint" | "idempotentHint" | "destructiveHint",
      "TRUE" | "FALSE"
    >
  > = {},
): ToolObservations {
  const h = (s: string | undefined) => ({
    state: (s ?? "ABSENT") as "TRUE",
    detail: null,
  });
  return {
    tool: "toggle",
    variant: null,
    arguments: {},
    hints: {
      readOnlyHint: h(hints.readOnlyHint),
      destructiveHint: h(hints.destructiveHint),
      idempotentHint: h(hints.idempotentHint),
      openWorldHint: h("FALSE"),
    },
    once: [1, 2, 3].map((r) => session("once", r, [first])),
    twice: [1, 2, 3].map((r) => session("twice", r, [first, second])),
    concurrent: null,
    twoProcessSkipped: null,
  };
}

Deno.test("masking: ids and timestamps do not make answers differ", () => {
  assert.equal(
    maskVolatile(
      "saved 5f0c2a9e-1b2c-4d5e-8f90-123456789abc at 2026-11-30T18:00:00Z",
    ),
    maskVolatile(
      "saved 0b1c2d3e-4f50-4a6b-8c9d-0e1f2a3b4c5d at 2026-11-30T18:00:07.123Z",
    ),
  );
  assert.notEqual(maskVolatile("1 visit"), maskVolatile("2 visits"));
});

Deno.test("a toggle that answers Started then Stopped, with state observed and unchanged: unknown, not over-declared", () => {
  const t = tool("Started logging", "Stopped logging", {
    idempotentHint: "FALSE",
    readOnlyHint: "FALSE",
  });
  for (const test of ["sequential_idempotence", "read_only"] as const) {
    const v = judge(test, defn(OBSERVED), t, STORE);
    assert.equal(v.outcome, "NOT_APPLICABLE:PERMISSIVE_DECLARATION");
    assert.match(v.observed, /=unknown$/);
    assert.equal(v.overDeclared, false);
    assert.match(
      v.details[0]!,
      /state may live in process memory.*"Started logging" then "Stopped logging"/,
    );
    assert.deepEqual((v.evidence.process_memory as unknown[]).length, 3);
  }
  // A claim cannot PASS on it.
  const claim = tool("count: 1", "count: 2", { readOnlyHint: "TRUE" });
  const v = judge("read_only", defn(OBSERVED), claim, STORE);
  assert.equal(v.outcome, "INCONCLUSIVE:UNOBSERVED_STATE");
});

Deno.test("the same answer twice is no evidence; answers that vary between fresh runs are randomness, not memory", () => {
  const same = tool("ok", "ok", { idempotentHint: "FALSE" });
  const v = judge("sequential_idempotence", defn(OBSERVED), same, STORE);
  assert.equal(v.observed, "idempotent=holds");
  assert.equal(v.overDeclared, true);
  const random = tool("token aaa", "token bbb", { idempotentHint: "FALSE" });
  random.once[1] = session("once", 2, ["token ccc"]);
  assert.equal(processMemoryEvidence(random.once, random.twice), null);
  // Reports written before responses were kept: no evidence either way.
  const old = tool("x", "y");
  for (const s of [...old.once, ...old.twice]) {
    for (const c of s.calls) delete c.response;
  }
  assert.equal(processMemoryEvidence(old.once, old.twice), null);
});

Deno.test("coverage none (locations = []): nothing holds, nothing is over-declared, a claim cannot PASS", () => {
  const same = tool("ok", "ok", {
    idempotentHint: "FALSE",
    readOnlyHint: "TRUE",
  });
  const v = judge("read_only", defn([]), same, STORE);
  assert.equal(v.outcome, "INCONCLUSIVE:PARTIAL_COVERAGE");
  assert.equal(v.observed, "read_only=unknown");
  assert.match(v.details.join("\n"), /coverage none/);
  const permissive = tool("ok", "ok", { idempotentHint: "FALSE" });
  const s = judge("sequential_idempotence", defn([]), permissive, STORE);
  assert.equal(s.observed, "idempotent=unknown");
  assert.equal(s.overDeclared, false);
});

Deno.test("memory:process declared: UNOBSERVED_STATE, never PASS", () => {
  const t = tool("ok", "ok", { readOnlyHint: "TRUE" });
  const v = judge(
    "read_only",
    defn([{ location: "memory:process", observedBy: null }]),
    t,
    STORE,
  );
  assert.equal(v.outcome, "INCONCLUSIVE:UNOBSERVED_STATE");
  assert.match(
    v.details.join("\n"),
    /process memory cannot be observed: memory:process/,
  );
});

Deno.test("a server that never started or died in every session: every verdict SETUP_FAILED with the cause", () => {
  const d = defn(OBSERVED);
  d.control = d.control.map((s) => ({
    ...s,
    stateDigest: null,
    setupFailure: 'session opening failed: cannot start "nope"',
  }));
  const t = tool("ok", "ok", { readOnlyHint: "TRUE" });
  t.once = [];
  t.twice = [];
  const cause = serverFailure(d, [t]);
  assert.match(
    cause!,
    /^the server never started: control run 1: .*cannot start "nope"/,
  );
  const v = judge("read_only", d, t, STORE, { serverFailed: cause });
  assert.equal(v.outcome, "INCONCLUSIVE:SETUP_FAILED");
  assert.equal(v.details[0], cause);
  // Permissive or absent hints do not hide it behind NOT_APPLICABLE.
  const absent = judge("destructive", d, t, STORE, { serverFailed: cause });
  assert.equal(absent.outcome, "INCONCLUSIVE:SETUP_FAILED");
  assert.deepEqual(absent.secondary, ["SUPERSEDED_BY_READ_ONLY"]);

  const dies = tool("", "", {});
  dies.once = [1, 2, 3].map((r) => session("once", r, [null], "unknown"));
  dies.twice = [1, 2, 3].map((r) => session("twice", r, [null], "unknown"));
  assert.match(
    serverFailure(defn(OBSERVED), [dies])!,
    /died in every session \(6\/6\)/,
  );
  // One session that answered: the server ran, and the tool is judged as usual.
  dies.twice[2] = session("twice", 3, ["ok", "ok"]);
  assert.equal(serverFailure(defn(OBSERVED), [dies]), null);
});

Deno.test("over-declarations: per tool over every argument set, none errored", () => {
  const v = (variant: string, overDeclared: boolean, facts = {}) =>
    judgeLike({ variant, overDeclared, facts });
  assert.deepEqual(
    overDeclarations([v("a", true), v("b", true)]).map((o) => o.variants),
    [["a", "b"]],
  );
  assert.deepEqual(overDeclarations([v("a", true), v("b", false)]), []);
  assert.deepEqual(
    overDeclarations([v("a", true), v("b", true, { repeat_errored: true })]),
    [],
  );
});

function judgeLike(
  o: { variant: string; overDeclared: boolean; facts: Record<string, boolean> },
) {
  return {
    tool: "create",
    variant: o.variant,
    test: "sequential_idempotence" as const,
    hint: "idempotentHint" as const,
    declared: "FALSE" as const,
    outcome: "NOT_APPLICABLE:PERMISSIVE_DECLARATION",
    kind: "NOT_APPLICABLE" as const,
    reason: "PERMISSIVE_DECLARATION" as const,
    secondary: [],
    observed: o.overDeclared ? "idempotent=holds" : "idempotent=fails",
    overDeclared: o.overDeclared,
    facts: o.facts,
    details: [],
    evidence: {},
  };
}

Deno.test("a repeated call that errored is never an over-declaration", () => {
  const t = tool("ok", "ok", { idempotentHint: "FALSE" });
  for (const s of t.twice) s.calls[1] = call(null, "tool_error");
  const v = judge("sequential_idempotence", defn(OBSERVED), t, STORE);
  assert.equal(v.observed, "idempotent=holds");
  assert.equal(v.facts.repeat_errored, true);
  assert.equal(v.overDeclared, false);
});

Deno.test("rules version 2 is still applied to reports judged under it", () => {
  const mem = defn([{ location: "memory:process", observedBy: null }]);
  const t = tool("ok", "ok", { readOnlyHint: "TRUE" });
  assert.equal(
    judge("read_only", mem, t, STORE, { rules: 2 }).outcome,
    "INCONCLUSIVE:PARTIAL_COVERAGE",
  );
  assert.equal(
    judge("read_only", mem, t, STORE).outcome,
    "INCONCLUSIVE:UNOBSERVED_STATE",
  );
  const none = tool("ok", "ok", { readOnlyHint: "TRUE" });
  assert.equal(
    judge("read_only", defn([]), none, STORE, { rules: 2 }).outcome,
    "PASS",
  );
  const rep = tool("ok", "ok", { idempotentHint: "FALSE" });
  for (const s of rep.twice) s.calls[1] = call(null, "tool_error");
  const v2 = judge("sequential_idempotence", defn(OBSERVED), rep, STORE, {
    rules: 2,
  });
  assert.equal(v2.overDeclared, true);
  assert.equal(v2.facts.repeat_errored, undefined);
  // A server failure is not a version 2 rule.
  assert.notEqual(
    judge("read_only", defn(OBSERVED), t, STORE, {
      rules: 2,
      serverFailed: "x",
    }).outcome,
    "INCONCLUSIVE:SETUP_FAILED",
  );
});

Deno.test("probe: a read after the call that answers differently makes a read-only claim unknown, never PASS", () => {
  const withProbe = (
    reads: (run: number) => [string, string, string],
    digest = "seed",
  ): ToolObservations => ({
    ...tool("ok", "ok", { readOnlyHint: "TRUE" }),
    probe: { name: "get_hits", arguments: {} },
    probed: [1, 2, 3].map((r) => {
      const [a, b, after] = reads(r);
      return {
        ...session("probed", r, [a, b, "ok", after]),
        stateDigest: digest,
      };
    }),
  });
  const d = defn(OBSERVED);
  // Without a probe, identical "ok" answers and no state change: PASS.
  assert.equal(
    judge("read_only", d, tool("ok", "ok", { readOnlyHint: "TRUE" }), STORE)
      .outcome,
    "PASS",
  );
  // hits: 0, 0 before; hits: 1 after, in every run.
  const counting = judge(
    "read_only",
    d,
    withProbe(() => ["hits: 0", "hits: 0", "hits: 1"]),
    STORE,
  );
  assert.equal(counting.outcome, "INCONCLUSIVE:UNOBSERVED_STATE");
  assert.equal(counting.observed, "read_only=unknown");
  assert.equal(counting.facts.probe_changed, true);
  assert.match(counting.details[0]!, /"hits: 0" before, "hits: 1" after/);
  const ev = counting.evidence.probe as {
    tool: string;
    readings: { run: number; before: string; after: string }[];
  };
  assert.equal(ev.tool, "get_hits");
  assert.deepEqual(ev.readings.map((r) => [r.before, r.after]), [
    ["hits: 0", "hits: 1"],
    ["hits: 0", "hits: 1"],
    ["hits: 0", "hits: 1"],
  ]);
  // An honest read: the same before and after (timestamps masked): PASS.
  const honest = judge(
    "read_only",
    d,
    withProbe((r) => [
      `hits: 0 at 2026-11-30T0${r}:00:00Z`,
      `hits: 0 at 2026-11-30T0${r}:00:01Z`,
      `hits: 0 at 2026-11-30T0${r}:00:02Z`,
    ]),
    STORE,
  );
  assert.equal(honest.outcome, "PASS");
  assert.equal(honest.facts.probe_changed, false);
  // An unstable read (the two reads before the call differ) is no evidence.
  const unstable = judge(
    "read_only",
    d,
    withProbe((r) => [`n=${r}`, `n=${r + 1}`, `n=${r + 2}`]),
    STORE,
  );
  assert.equal(unstable.outcome, "PASS");
  assert.equal(unstable.facts.probe_changed, undefined);
  assert.match(unstable.details.join("\n"), /unstable read is no evidence/);
  // A differing read where observed state changed too: judged on that state.
  const observedToo = judge(
    "read_only",
    d,
    withProbe(() => ["hits: 0", "hits: 0", "hits: 1"], "other"),
    {
      ...STORE,
      other: {
        regions: [{
          adapter: "sqlite:state.db",
          kind: "sqlite",
          name: "sqlite:items",
          category: "business",
          records: [{ key: "[1]", value: { id: 1 } }],
        }],
        problems: [],
      },
    },
  );
  assert.notEqual(observedToo.reason, "UNOBSERVED_STATE");
  // Open world is judged on the permission log: the probe does not apply.
  assert.equal(
    judge(
      "open_world",
      d,
      withProbe(() => ["hits: 0", "hits: 0", "hits: 1"]),
      STORE,
    ).facts.probe_changed,
    undefined,
  );
});
