import assert from "node:assert/strict";
import {
  planConcurrent,
  planControl,
  planSequential,
  selectTools,
  wantsConcurrent,
} from "./plan.ts";
import { InputError } from "../errors.ts";

const TOOLS = [
  { name: "get", variant: null, arguments: {} },
  { name: "put", variant: "new", arguments: { key: "a" } },
  { name: "put", variant: "existing", arguments: { key: "b" } },
];

Deno.test("selectTools: every tool without selectors, in definition order", () => {
  assert.deepEqual(selectTools(TOOLS, []).map((t) => [t.index, t.name]), [
    [0, "get"],
    [1, "put"],
    [2, "put"],
  ]);
});

Deno.test("selectTools: NAME picks every variant, NAME[variant] one; order stays the definition's", () => {
  assert.deepEqual(
    selectTools(TOOLS, ["put[existing]", "get"]).map((t) => t.index),
    [0, 2],
  );
  assert.deepEqual(selectTools(TOOLS, ["put"]).map((t) => t.variant), [
    "new",
    "existing",
  ]);
  assert.deepEqual(selectTools(TOOLS, ["get", "get"]).length, 1);
});

Deno.test("selectTools: an unknown tool or a malformed selector is a usage error naming it", () => {
  assert.throws(
    () => selectTools(TOOLS, ["delete"]),
    (e: Error) =>
      e instanceof InputError && e.message.includes('"delete"') &&
      e.message.includes("have: get, put[new], put[existing]"),
  );
  assert.throws(
    () => selectTools(TOOLS, ["put[new"]),
    (e: Error) =>
      e instanceof InputError && e.message.includes("NAME[variant]"),
  );
});

Deno.test("wantsConcurrent: an idempotence claim on a writing tool, or observation asked for", () => {
  assert.equal(
    wantsConcurrent({ readOnlyHint: "FALSE", idempotentHint: "TRUE" }, false),
    true,
  );
  assert.equal(
    wantsConcurrent({ readOnlyHint: "ABSENT", idempotentHint: "TRUE" }, false),
    true,
  );
  // A read-only tool's idempotence is not tested concurrently.
  assert.equal(
    wantsConcurrent({ readOnlyHint: "TRUE", idempotentHint: "TRUE" }, false),
    false,
  );
  assert.equal(
    wantsConcurrent({ readOnlyHint: "FALSE", idempotentHint: "ABSENT" }, false),
    false,
  );
  assert.equal(
    wantsConcurrent({ readOnlyHint: "FALSE", idempotentHint: "FALSE" }, true),
    true,
  );
});

Deno.test("planControl and planSequential: runs numbered from 1, ids unique", () => {
  assert.deepEqual(planControl(3), [
    { id: "control-1", kind: "control", run: 1 },
    { id: "control-2", kind: "control", run: 2 },
    { id: "control-3", kind: "control", run: 3 },
  ]);
  const tools = selectTools(TOOLS, ["get", "put[existing]"]);
  const seq = planSequential(tools, 3);
  assert.equal(seq.length, 2 * 2 * 3);
  assert.deepEqual(seq.slice(0, 4).map((s) => s.id), [
    "once-0-1",
    "once-0-2",
    "once-0-3",
    "twice-0-1",
  ]);
  assert.ok(seq.every((s) => s.kind !== "control" && "tool" in s));
  assert.equal(new Set(seq.map((s) => s.id)).size, seq.length);
});

Deno.test("planConcurrent: both modes per tool, or single connection only when two-process is skipped", () => {
  const tools = selectTools(TOOLS, ["put"]);
  const both = planConcurrent(tools, {
    concurrentAttempts: 2,
    skipTwoProcess: false,
  });
  assert.deepEqual(both.map((s) => s.id), [
    "attempt-1-single_connection-1",
    "attempt-1-single_connection-2",
    "attempt-1-two_process-1",
    "attempt-1-two_process-2",
    "attempt-2-single_connection-1",
    "attempt-2-single_connection-2",
    "attempt-2-two_process-1",
    "attempt-2-two_process-2",
  ]);
  const single = planConcurrent(tools, {
    concurrentAttempts: 3,
    skipTwoProcess: true,
  });
  assert.equal(single.length, 6);
  assert.ok(
    single.every((s) => s.kind === "attempt" && s.mode === "single_connection"),
  );
  assert.deepEqual(
    planConcurrent([], { concurrentAttempts: 20, skipTwoProcess: false }),
    [],
  );
});

Deno.test("planSequential: a tool with a probe also gets one probed session per run", () => {
  const tools = selectTools([
    { name: "get", variant: null, arguments: {} },
    {
      name: "increment",
      variant: null,
      arguments: {},
      probe: { name: "get", arguments: { id: "a" } },
    },
  ], []);
  assert.equal(tools[0]!.probe, null);
  assert.deepEqual(tools[1]!.probe, { name: "get", arguments: { id: "a" } });
  const plan = planSequential(tools, 3);
  assert.deepEqual(
    plan.filter((p) => p.kind === "probed").map((p) => p.id),
    ["probed-1-1", "probed-1-2", "probed-1-3"],
  );
  assert.equal(plan.length, 3 * 2 + 3 * 3);
});
