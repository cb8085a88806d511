import assert from "node:assert/strict";
import { deltaDigest, deriveStateEffects } from "./effects.ts";
import { computeDelta, snapshotDigest } from "../state/delta.ts";
import type { Snapshot } from "../state/types.ts";
import type {
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import {
  EVIL_TOOL,
  syntheticReport,
  syntheticReportWithProvenance,
} from "../../tests/_synthetic_report.ts";
import { renderHtml } from "./html.ts";
import { renderJunit } from "./junit.ts";
import { renderText } from "./text.ts";

function snap(rows: string[], boot = 0): Snapshot {
  return {
    regions: [
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "items",
        category: "business",
        records: rows.map((r, i) => ({
          key: `[${i + 1}]`,
          value: { id: i + 1, name: r },
        })),
        columns: ["id", "name"],
      },
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "boot_log",
        category: "append_only",
        records: Array.from({ length: boot }, (_, i) => ({
          key: `[${i + 1}]`,
          value: { id: i + 1 },
        })),
        columns: ["id"],
      },
    ],
    problems: [],
  };
}

const seed = snap(["a"]);
const booted = snap(["a"], 1);
const wrote = snap(["a", "b"], 1);
const store: Record<string, Snapshot> = {};
for (const s of [seed, booted, wrote]) store[snapshotDigest(s)] = s;
const [SEED, BOOTED, WROTE] = [seed, booted, wrote].map(snapshotDigest) as [
  string,
  string,
  string,
];

function session(
  kind: SessionObservation["kind"],
  run: number,
  stateDigest: string | null,
  statuses: SessionObservation["calls"][0]["status"][],
): SessionObservation {
  return {
    kind,
    run,
    stateDigest,
    setupFailure: stateDigest === null ? "did not start" : null,
    calls: statuses.map((status, i) => ({
      status,
      frameIndex: i,
      ms: 1,
      message: status === "ok" ? null : `${status} ${i}`,
      ...(status === "unknown" ? { ended: "timeout" } : {}),
    })),
    network: [],
    backend: "deno",
  };
}

function definition(control: (string | null)[]): DefinitionObservations {
  return {
    coverage: { complete: true, locations: [] },
    reset: { verified: true, digests: [SEED, SEED], problem: null },
    seedDigest: SEED,
    control: control.map((d, i) => session("control", i + 1, d, [])),
    startupWrites: control.some((d) => d !== SEED),
    seesNetwork: true,
    runs: control.length,
  };
}

function tool(
  once: SessionObservation[],
  twice: SessionObservation[],
): ToolObservations {
  return {
    tool: "t",
    variant: "v",
    arguments: {},
    hints: {} as ToolObservations["hints"],
    once,
    twice,
    concurrent: [{
      mode: "two_process",
      attempt: 1,
      stateDigest: WROTE,
      setupFailure: null,
      calls: [
        session("once", 1, WROTE, ["ok"]).calls[0]!,
        session("once", 1, WROTE, ["protocol_error"]).calls[0]!,
      ],
      overlap: true,
      overlapDetail: "",
      timeline: [],
    }],
    twoProcessSkipped: null,
  };
}

Deno.test("state effects: the control's delta against the seed, and every errored call's session state", () => {
  const e = deriveStateEffects({
    definition: definition([BOOTED, BOOTED]),
    tools: [tool([
      session("once", 1, BOOTED, ["tool_error"]),
      session("once", 2, WROTE, ["unknown"]),
      session("once", 3, WROTE, ["ok"]),
    ], [session("twice", 1, null, [])])],
  }, store);
  const boot = computeDelta(seed, booted);
  assert.deepEqual(e.control.map((c) => [c.run, c.changed, c.deltaDigest]), [
    [1, true, deltaDigest(boot)],
    [2, true, deltaDigest(boot)],
  ]);
  assert.deepEqual(
    (e.control[0]!.delta as { append_only: { added: unknown[] } }).append_only
      .added,
    [{ region: "state.db:boot_log", key: "[1]" }],
  );
  assert.deepEqual(
    e.erroredCalls.map((
      c,
    ) => [
      c.session,
      c.run,
      c.call,
      c.status,
      c.stateChanged,
      c.beyondControl,
      c.ended ?? null,
    ]),
    [
      // The server's own boot row only: changed vs the seed, not beyond the control.
      ["once", 1, 1, "tool_error", true, false, null],
      ["once", 2, 1, "unknown", true, true, "timeout"],
      ["attempt:two_process", 1, 2, "protocol_error", true, true, null],
    ],
  );
  assert.equal(
    e.erroredCalls[1]!.deltaDigest,
    deltaDigest(computeDelta(seed, wrote)),
  );
});

Deno.test("state effects: unknown where the evidence is missing; beyondControl null when the control sessions disagree", () => {
  const e = deriveStateEffects({
    definition: definition([BOOTED, null]),
    tools: [tool([session("once", 1, SEED, ["tool_error"])], [])],
  }, store);
  assert.deepEqual(e.control[1], {
    run: 2,
    from: SEED,
    to: null,
    changed: null,
    delta: null,
    deltaDigest: null,
  });
  assert.equal(e.erroredCalls[0]!.stateChanged, false);
  assert.equal(e.erroredCalls[0]!.beyondControl, null);
  assert.throws(
    () =>
      deriveStateEffects({
        definition: definition([`sha256:${"0".repeat(64)}`]),
        tools: [],
      }, store),
    RangeError,
  );
});

Deno.test("provenance in JUnit, HTML (escaped) and text", () => {
  const r = syntheticReportWithProvenance();
  const junit = renderJunit(r);
  assert.match(junit, /name="verity.target.integrity" value="sha512-abc"/);
  assert.match(junit, /name="verity.definition.git.dirty" value="true"/);
  assert.match(
    junit,
    /name="verity.erroredCalls" value="1 errored call\(s\) in 1 session\(s\); state changed in 1/,
  );

  const html = renderHtml(r);
  assert.ok(!html.includes(EVIL_TOOL), "the tool name is escaped");
  assert.match(html, /evil&lt;&amp;&quot;&#39;&gt; once run 1 call 1/);
  assert.match(html, /<span class="badge ok">pinned<\/span>/);
  assert.match(html, /<span class="badge bad">state changed<\/span>/);

  const text = renderText(r);
  assert.match(
    text,
    /target: @example\/server@1\.2\.3 sha512-abc, run from the prepared, integrity-checked Deno cache/,
  );
  assert.match(text, /git: commit c{40}, DIRTY \(1 path\(s\)/);
  assert.match(
    text,
    /\n {4}evil<&"'> once run 1 call 1 tool_error: state changed vs the seed, beyond the control session's own effect/,
  );
});

Deno.test("provenance: a report without the new fields says not recorded", () => {
  const text = renderText(syntheticReport());
  assert.match(text, /git: not recorded \(report written before 2026-12-01\)/);
  assert.match(text, /target: not recorded/);
  assert.match(text, /control effect: unknown/);
});
