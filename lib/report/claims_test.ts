import assert from "node:assert/strict";
import type { HintName, HintState } from "../contracts/contracts.ts";
import type { TestName } from "../definition/types.ts";
import type { Verdict } from "../verdicts/types.ts";
import { claimsLine, claimsOf, type DeclaredTool } from "./claims.ts";
import { syntheticReport } from "../../tests/_synthetic_report.ts";
import { renderText } from "./text.ts";
import { renderJunit } from "./junit.ts";
import { renderSarif } from "./sarif.ts";
import { renderHtml } from "./html.ts";

const HINT: Record<TestName, HintName> = {
  sequential_idempotence: "idempotentHint",
  concurrent_idempotence: "idempotentHint",
  read_only: "readOnlyHint",
  destructive: "destructiveHint",
  open_world: "openWorldHint",
};

function hints(
  h: Partial<Record<HintName, HintState>>,
): DeclaredTool["hints"] {
  return {
    readOnlyHint: { state: h.readOnlyHint ?? "ABSENT" },
    destructiveHint: { state: h.destructiveHint ?? "ABSENT" },
    idempotentHint: { state: h.idempotentHint ?? "ABSENT" },
    openWorldHint: { state: h.openWorldHint ?? "ABSENT" },
  };
}

function v(tool: string, test: TestName, outcome: string): Verdict {
  const [kind, reason] = outcome.split(":");
  return {
    tool,
    variant: null,
    test,
    hint: HINT[test],
    declared: "TRUE",
    outcome,
    kind: kind as Verdict["kind"],
    reason: (reason ?? null) as Verdict["reason"],
    secondary: [],
    observed: "",
    overDeclared: false,
    facts: {},
    details: [],
    evidence: {},
  };
}

Deno.test("claims: only falsifiable declarations count; untested ones carry their reason", () => {
  const reader = {
    tool: "read",
    variant: null,
    hints: hints({ readOnlyHint: "TRUE", openWorldHint: "FALSE" }),
  };
  const mover = {
    tool: "move",
    variant: null,
    hints: hints({
      readOnlyHint: "FALSE",
      destructiveHint: "FALSE",
      idempotentHint: "FALSE",
    }),
  };
  const c = claimsOf(
    [
      v("read", "read_only", "VIOLATION"),
      v("read", "open_world", "PASS"),
      // superseded by the read-only claim: not a claim, whatever the outcome
      v("read", "destructive", "INCONCLUSIVE:SETUP_FAILED"),
      v(
        "read",
        "sequential_idempotence",
        "NOT_APPLICABLE:SUPERSEDED_BY_READ_ONLY",
      ),
      v("move", "destructive", "INCONCLUSIVE:CALL_ERROR"),
      // permissive (idempotentHint false): no claim
      v(
        "move",
        "sequential_idempotence",
        "NOT_APPLICABLE:PERMISSIVE_DECLARATION",
      ),
      // absent openWorldHint: no claim
      v("move", "open_world", "NOT_APPLICABLE:NO_DECLARATION"),
    ],
    [reader, mover],
    [],
  );
  assert.deepEqual(
    [c.falsifiable, c.tested, c.held, c.violated, c.violationRate],
    [3, 2, 1, 1, 0.5],
  );
  assert.deepEqual(c.untested, [{
    tool: "move",
    variant: null,
    test: "destructive",
    hint: "destructiveHint",
    reason: "CALL_ERROR",
  }]);
  assert.equal(
    claimsLine(c),
    "3 claims: 1 held, 1 violated, 1 untested (move destructive: CALL_ERROR); violation rate 1/2 tested (50%)",
  );
});

Deno.test("claims: a listed tool nobody exercised leaves each of its claims untested", () => {
  const c = claimsOf([], [], [{
    tool: "drop",
    hints: hints({
      readOnlyHint: "FALSE",
      destructiveHint: "FALSE",
      idempotentHint: "TRUE",
      openWorldHint: "FALSE",
    }),
  }]);
  assert.deepEqual(
    c.untested.map((u) => `${u.test}:${u.reason}`),
    [
      "sequential_idempotence:NOT_EXERCISED",
      "concurrent_idempotence:NOT_EXERCISED",
      "destructive:NOT_EXERCISED",
      "open_world:NOT_EXERCISED",
    ],
  );
  assert.equal(c.violationRate, null);
  assert.match(
    claimsLine(c),
    /^4 claims: 0 held, 0 violated, 4 untested .*violation rate: none tested$/,
  );
});

Deno.test("claims: a server that could not be audited has no claims we know of", () => {
  const none = claimsOf([], [], []);
  assert.equal(
    claimsLine(none),
    "0 claims: the server declared nothing a test can contradict",
  );
  assert.match(
    claimsLine(none, true),
    /^claims unknown: the server could not be audited/,
  );
});

Deno.test("claims: every format leads with the same headline", () => {
  const r = syntheticReport();
  // Every exercised tool declares each hint the claiming way.
  const claiming = hints({
    readOnlyHint: "FALSE",
    destructiveHint: "FALSE",
    idempotentHint: "TRUE",
    openWorldHint: "FALSE",
  });
  r.observations.tools = [
    ...new Map(r.verdicts.map((x) => [`${x.tool}|${x.variant}`, x])).values(),
  ].map((x) => ({
    tool: x.tool,
    variant: x.variant,
    hints: claiming,
  })) as unknown as typeof r.observations.tools;
  const text = renderText(r);
  const line = text.split("\n")[1]!;
  assert.match(
    line,
    /^ {2}claims: \d+ claims?: \d+ held, \d+ violated, \d+ untested/,
  );
  const headline = line.slice("  claims: ".length);
  assert.ok(
    renderJunit(r).includes(
      `name="verity.claims" value="${headline.replaceAll('"', "&quot;")}"`,
    ),
  );
  const sarif = JSON.parse(renderSarif(r));
  assert.equal(sarif.runs[0].properties.claims.summary, headline);
  const html = renderHtml(r);
  const at = html.indexOf('id="claims"');
  assert.ok(at > 0 && at < html.indexOf("Tools × tests"), "before the grid");
});

Deno.test("claims: where writes outside the declared state were not observed, every format's headline says so", () => {
  const r = syntheticReport();
  r.observations.definition.writes = {
    observed: false,
    why: "overlays need Linux",
  };
  const said =
    "writes outside declared state: not observed (overlays need Linux)";
  const line = renderText(r).split("\n")[1]!;
  assert.ok(line.endsWith(`; ${said}`), line);
  assert.ok(renderJunit(r).includes(said));
  const sarif = JSON.parse(renderSarif(r));
  assert.equal(
    sarif.runs[0].properties.claims.unobservedWrites,
    "overlays need Linux",
  );
  assert.ok(renderHtml(r).includes(said));
  r.observations.definition.writes = { observed: true, why: null };
  assert.ok(!renderText(r).includes("not observed ("));
});
