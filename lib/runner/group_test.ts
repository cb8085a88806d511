import assert from "node:assert/strict";
import { groupObservations, STARTUP_WRITES_SKIP } from "./group.ts";
import {
  planConcurrent,
  type PlannedSession,
  planSequential,
  selectTools,
} from "./plan.ts";
import type {
  AttemptObservation,
  DeclaredHint,
  SessionObservation,
} from "../history/types.ts";
import type { HintName } from "../contracts/contracts.ts";

const TOOLS = selectTools([
  { name: "put", variant: null, arguments: { k: "a" } },
  { name: "get", variant: null, arguments: {} },
], []);

function session(p: PlannedSession): SessionObservation {
  if (p.kind !== "once" && p.kind !== "twice") throw new TypeError(p.kind);
  return {
    kind: p.kind,
    run: p.run,
    stateDigest: `sha256:${p.id}`,
    setupFailure: null,
    calls: [],
    network: null,
    backend: "deno",
  };
}

function attempt(p: PlannedSession): AttemptObservation {
  if (p.kind !== "attempt") throw new TypeError(p.kind);
  return {
    mode: p.mode,
    attempt: p.attempt,
    stateDigest: `sha256:${p.id}`,
    setupFailure: null,
    calls: [],
    timeline: [],
  };
}

const hints = (name: string): Record<HintName, DeclaredHint> => ({
  readOnlyHint: { state: name === "get" ? "TRUE" : "FALSE", detail: null },
  destructiveHint: { state: "ABSENT", detail: null },
  idempotentHint: { state: "TRUE", detail: null },
  openWorldHint: { state: "FALSE", detail: null },
});

Deno.test("grouping: each observation goes to its tool and kind by the plan, whatever order the sessions finished in", () => {
  const seq = planSequential(TOOLS, 3).map((plan) => ({
    plan,
    observation: session(plan),
  }));
  const att = planConcurrent([TOOLS[0]!], {
    concurrentAttempts: 2,
    skipTwoProcess: false,
  }).map((plan) => ({ plan, observation: attempt(plan) }));
  const shuffled = [...seq].reverse();
  const [put, get] = groupObservations({
    tools: TOOLS,
    sequential: shuffled,
    attempts: att,
    concurrent: new Set([0]),
    hints,
    startupWrites: false,
  });
  assert.deepEqual(put!.once.map((o) => o.stateDigest), [
    "sha256:once-0-3",
    "sha256:once-0-2",
    "sha256:once-0-1",
  ]);
  assert.ok(put!.twice.every((o) => o.kind === "twice"));
  assert.equal(put!.twice.length, 3);
  assert.deepEqual(put!.concurrent!.map((a) => `${a.mode}-${a.attempt}`), [
    "single_connection-1",
    "single_connection-2",
    "two_process-1",
    "two_process-2",
  ]);
  assert.equal(put!.twoProcessSkipped, null);
  assert.deepEqual(put!.arguments, { k: "a" });
  assert.equal(get!.concurrent, null, "no attempts: null, not []");
  assert.equal(get!.hints.readOnlyHint.state, "TRUE");
  assert.ok(
    get!.once.every((o) => o.stateDigest!.startsWith("sha256:once-1-")),
  );
});

Deno.test("grouping: a server writing on start or stop names why two-process attempts were skipped", () => {
  const [put, get] = groupObservations({
    tools: TOOLS,
    sequential: [],
    attempts: [],
    concurrent: new Set([0]),
    hints,
    startupWrites: true,
  });
  assert.equal(put!.twoProcessSkipped, STARTUP_WRITES_SKIP);
  assert.deepEqual(put!.concurrent, []);
  assert.equal(get!.twoProcessSkipped, null);
});
