import assert from "node:assert/strict";
import { DefinitionError } from "../errors.ts";
import { parsePythonJson } from "./canonical.ts";
import { readObservations, validateObservations } from "./checks.ts";
import { buildManifest, readDeclaration } from "./manifest.ts";

const DATA = new URL("../../tests/data/evidence/", import.meta.url);
const load = (name: string) =>
  parsePythonJson(Deno.readTextFileSync(new URL(name, DATA)));

Deno.test("the notes example: one finding per gap, each with its severity", () => {
  const r = validateObservations(
    readDeclaration(load("notes-declared.json"), "notes-declared.json"),
    readObservations(load("notes-observed.json"), "notes-observed.json"),
  );
  assert.deepEqual(
    r.findings.map((f) => [f.observation_index, f.tool, f.check, f.severity]),
    [
      [2, "search_notes", "scope_violation", "high"],
      [3, "search_notes", "contract_mutated", "medium"],
      [4, "export_notes", "unknown_tool", "high"],
      [5, "search_notes", "recipe_mismatch", "high"],
      [6, "add_note", "unbound_annotation", "low"],
      [7, "add_note", "scope_violation", "high"],
    ],
  );
  assert.deepEqual(r.findings[0]!.arguments, ["include_deleted"]);
  assert.deepEqual(r.findings[5]!.arguments, ["as_user"]);
  const mutated = r.findings[1]!;
  assert.equal(
    mutated.declared_contract,
    "sha256:ba12933f19195213764fc55574052f50fc743c21fc54dfcf29086a1c1f76c5b4",
  );
  assert.deepEqual(mutated.bindings, ["ann-search"]);
  assert.deepEqual(r.summary.by_severity, { high: 4, medium: 1, low: 1 });
  assert.deepEqual(r.summary.contract_recipes, ["1", "2"]);
  assert.equal(r.summary.observations, 7);
  // Observations 1 and 2: search_notes as declared, bound by ann-search
  // (2's extra argument is a scope finding, not a contract one).
  assert.equal(r.summary.bound_unmutated, 2);
});

Deno.test("a silent observation against a recipe-2 declaration is refused as recipe_mismatch, with the fix", () => {
  const r = validateObservations(
    readDeclaration(load("notes-declared-recipe2.json"), "d.json"),
    readObservations(load("notes-observed.json"), "o.json"),
  );
  const mismatches = r.findings.filter((f) => f.check === "recipe_mismatch");
  // Observations 1,2,3,6 carry a hash and no recipe (read as 1); 5 states 2 and matches.
  assert.deepEqual(mismatches.map((f) => f.observation_index), [1, 2, 3, 6]);
  assert.match(
    mismatches[0]!.detail,
    /states no recipe, so its hash is read as recipe 1/,
  );
  assert.match(
    mismatches[0]!.detail,
    /set "contract_recipe": "1" on the declaration/,
  );
  // Never reported as drift.
  assert.equal(
    r.findings.filter((f) => f.check === "contract_mutated").length,
    0,
  );
  // Observation 7 carries no hash: no recipe claim, but its arguments are still judged.
  assert.ok(
    !r.findings.some((f) =>
      f.observation_index === 7 && f.check === "recipe_mismatch"
    ),
  );
  assert.ok(
    r.findings.some((f) =>
      f.observation_index === 7 && f.check === "scope_violation"
    ),
  );
  assert.equal(
    r.findings.find((f) => f.observation_index === 5)?.check,
    "unbound_annotation",
  );
});

Deno.test("a recipe stated once for the whole observed file applies to silent observations", () => {
  const d = readDeclaration(
    { contract_recipe: "2", tools: [{ name: "t" }] },
    "d",
  );
  const h = d.tools[0]!.hash;
  const o = readObservations({
    contract_recipe: "2",
    observations: [{ tool: "t", contract_hash: h }],
  }, "o");
  assert.equal(o.observations[0]!.recipe, "2");
  assert.equal(o.observations[0]!.recipeSource, "file");
  assert.deepEqual(validateObservations(d, o).findings.map((f) => f.check), [
    "unbound_annotation",
  ]);
});

Deno.test("the real filesystem drift: calls against 2026.8.31 judged against the 2026.1.14 capture", () => {
  const r = validateObservations(
    readDeclaration(load("filesystem-2026.1.14.manifest.json"), "old.json"),
    readObservations(
      load("filesystem-observed-2026.8.31.json"),
      "observed.json",
    ),
  );
  assert.deepEqual(r.findings.map((f) => [f.tool, f.check]), [
    ["read_text_file", "contract_mutated"],
    ["read_media_file", "contract_mutated"],
    ["get_file_info", "contract_mutated"],
  ]);
  assert.deepEqual(r.summary.contract_recipes, ["3"]);
});

Deno.test("bad observations are refused with the file and key path, even for undeclared tools", () => {
  const bad: [unknown, RegExp][] = [
    [
      {
        observations: [{
          tool: "nope",
          contract_hash: "sha256:" + "a".repeat(64),
          contract_recipe: "9",
        }],
      },
      /o\.json: observations\[0\]\.contract_recipe: unknown contract recipe "9"/,
    ],
    [
      { observations: [{ tool: "t", contract_hash: "abc" }] },
      /observations\[0\]\.contract_hash: must be "sha256:"/,
    ],
    [
      { observations: [{ args: {} }] },
      /observations\[0\]\.tool: must be a string/,
    ],
    [{ observations: [{ tool: "t", args: [1] }] }, /observations\[0\]\.args/],
    [{ observations: {} }, /o\.json: observations: must be an array/],
    [
      { observations: [], contract_recipe: "x" },
      /o\.json: contract_recipe: unknown contract recipe "x"/,
    ],
  ];
  for (const [doc, re] of bad) {
    assert.throws(
      () => readObservations(doc, "o.json"),
      (e: Error) => e instanceof DefinitionError && re.test(e.message),
    );
  }
});

Deno.test("scope_violation on privilege use: declared permissions first, hints otherwise, unseen never judged", () => {
  const declared = readDeclaration({
    server: "s",
    tools: [
      {
        name: "stated",
        description: "",
        input_schema: { type: "object", properties: {} },
        permissions: ["read:state", "write:state", "net"],
      },
      {
        name: "hinted",
        description: "",
        input_schema: { type: "object", properties: {} },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      {
        name: "silent",
        description: "",
        input_schema: { type: "object", properties: {} },
        permissions: ["read:notes"],
      },
      { name: "open", description: "", input_schema: { type: "object" } },
    ],
  }, "declared.json");
  const use = {
    seen: true,
    reads: [
      { path: "{state}/a.json", in_state: true, allowed: true },
      { path: "/srv/code/package.json", in_state: false, allowed: true },
      { path: "/root/.ssh/id_rsa", in_state: false, allowed: false },
    ],
    writes: [
      { path: "{state}/a.json", in_state: true, allowed: true },
      { path: "/etc/x", in_state: false, allowed: false },
    ],
    env: [{ value: "HOME", allowed: true }],
    net: [{ value: "example.com", allowed: false }],
    other: [],
  };
  const obs = (tool: string, privilege: unknown) => ({ tool, privilege });
  const r = validateObservations(
    declared,
    readObservations({
      observations: [
        obs("stated", use),
        obs("hinted", use),
        obs("silent", use),
        obs("open", use),
        obs("hinted", { ...use, seen: false }),
      ],
    }, "observed.json"),
  );
  const scope = r.findings.filter((f) => f.check === "scope_violation");
  assert.deepEqual(scope.map((f) => [f.tool, f.scope_source, f.privileges]), [
    // read:state permits the state and what the sandbox grants (own code),
    // not a refused read elsewhere; write:state no write outside; no env.
    ["stated", "permissions", [
      "read /root/.ssh/id_rsa (refused by the sandbox)",
      "write /etc/x (refused by the sandbox)",
      "env HOME (allowed by the sandbox)",
    ]],
    // readOnlyHint: no write at all; openWorldHint false: no network; reads
    // and variables are not judged by any hint.
    ["hinted", "hints", [
      "write {state}/a.json (allowed by the sandbox)",
      "write /etc/x (refused by the sandbox)",
      "net example.com (refused by the sandbox)",
    ]],
    // "read:notes" is a read permission: writes, env and net are outside it.
    ["silent", "permissions", [
      "write {state}/a.json (allowed by the sandbox)",
      "write /etc/x (refused by the sandbox)",
      "env HOME (allowed by the sandbox)",
      "net example.com (refused by the sandbox)",
    ]],
  ]);
  assert.throws(
    () =>
      readObservations(
        { observations: [obs("open", { seen: true, writes: [{ path: 1 }] })] },
        "observed.json",
      ),
    (e: unknown) =>
      e instanceof DefinitionError &&
      /observations\[0\]\.privilege\.writes\[0\]/.test(e.message),
  );
});

/** A captured manifest of two tools: one declares annotations, one none. */
function captured(recipe: "1" | "3") {
  const page = JSON.stringify({
    jsonrpc: "2.0",
    id: 2,
    result: {
      tools: [
        {
          name: "read_graph",
          inputSchema: { type: "object", properties: {} },
          annotations: { readOnlyHint: true, openWorldHint: false },
        },
        {
          name: "plain",
          inputSchema: { type: "object", properties: { q: {} } },
        },
      ],
    },
  });
  return buildManifest({
    pageTexts: [page],
    serverInfo: { name: "s", version: "1" },
    protocolVersion: "2025-11-25",
    command: ["s"],
    capturedAt: "2026-12-01T00:00:00Z",
    recipe,
  });
}

Deno.test("a capture binds each tool's declared annotations to its contract: a clean call is bound_unmutated, a changed contract is contract_mutated naming the binding", () => {
  const m = captured("3");
  assert.deepEqual(m.annotations.map((b) => [b.id, b.tool]), [
    ["read_graph#annotations", "read_graph"],
  ]);
  assert.equal(m.annotations[0]!.bound_contract, m.tools[0]!.contract_hash);
  assert.equal(
    m.annotations[0]!.statement,
    'declares annotations {"openWorldHint":false,"readOnlyHint":true}',
  );
  // As `verity capture` writes it and `ledger validate` reads it back.
  const declared = readDeclaration(
    parsePythonJson(JSON.stringify(m)),
    "declared.json",
  );
  const [read, plain] = m.tools;
  const observed = readObservations({
    contract_recipe: "3",
    observations: [
      {
        index: 1,
        tool: "read_graph",
        args: {},
        contract_hash: read!.contract_hash,
      },
      {
        index: 2,
        tool: "read_graph",
        args: {},
        contract_hash: "sha256:" + "e".repeat(64),
      },
      {
        index: 3,
        tool: "plain",
        args: { q: "x" },
        contract_hash: plain!.contract_hash,
      },
    ],
  }, "observed.json");
  const r = validateObservations(declared, observed);
  assert.equal(
    r.summary.bound_unmutated,
    1,
    "the clean call is the healthy baseline",
  );
  assert.deepEqual(
    r.findings.map((f) => [f.observation_index, f.check, f.bindings ?? null]),
    [
      [2, "contract_mutated", ["read_graph#annotations"]],
      // A tool that declares nothing has nothing bound: said so.
      [3, "unbound_annotation", null],
    ],
  );
});

Deno.test("under recipe 1, which does not cover annotations, a capture binds none", () => {
  const m = captured("1");
  assert.deepEqual(m.annotations, []);
  const r = validateObservations(
    readDeclaration(parsePythonJson(JSON.stringify(m)), "d.json"),
    readObservations({
      observations: [{
        tool: "read_graph",
        contract_hash: m.tools[0]!.contract_hash,
      }],
    }, "o.json"),
  );
  assert.equal(r.summary.bound_unmutated, 0);
  assert.deepEqual(r.findings.map((f) => f.check), ["unbound_annotation"]);
});
