import assert from "node:assert/strict";
import { DefinitionError } from "../errors.ts";
import { parsePythonJson, prettyJson } from "./canonical.ts";
import { buildManifest, readDeclaration } from "./manifest.ts";

const DATA = new URL("../../tests/data/evidence/", import.meta.url);
const load = (name: string) =>
  parsePythonJson(Deno.readTextFileSync(new URL(name, DATA)));

const page = (id: number, result: string) =>
  `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
const PAGES = [
  page(
    2,
    `{"tools":[{"name":"search","description":"Search notes — café","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"weight":{"type":"number","maximum":1.0}},"required":["q"]},"annotations":{"readOnlyHint":true}}],"nextCursor":"p2"}`,
  ),
  page(
    3,
    `{"tools":[{"name":"add","annotations":{"readOnlyHint":false,"readOnlyHint":true}},{"description":"no name"},{"name":"search"}]}`,
  ),
];
// Python: json.dumps of the recipe-3 payload of "search" (maximum kept as 1.0).
const SEARCH_R3 =
  "sha256:db8132231cd9fd1ec8802b692c99a9ddbbe8920fbc26333a2cb60188d6a9d844";

function manifest() {
  return buildManifest({
    pageTexts: PAGES,
    serverInfo: { name: "mini-notes", version: "1.0.0" },
    protocolVersion: "2025-11-25",
    command: ["deno", "run", "server.ts"],
    capturedAt: "2026-11-30T00:00:00Z",
    recipe: "3",
  });
}

Deno.test("a manifest keeps every tool as served, hashed as Python hashes it (1.0 stays 1.0)", () => {
  const m = manifest();
  assert.equal(m.server.name, "mini-notes");
  assert.equal(m.server.version, "1.0.0");
  assert.deepEqual(m.tools.map((t) => t.name), ["search", "add", "search"]);
  assert.equal(m.tools[0]!.contract_hash, SEARCH_R3);
  assert.ok(prettyJson(m).includes('"maximum": 1.0'));
  // Problems are recorded, not hidden: the duplicated key, the nameless tool, the duplicated name.
  assert.ok(
    m.problems.some((p) => p.includes("readOnlyHint: MALFORMED duplicate_key")),
    m.problems.join("\n"),
  );
  assert.ok(m.problems.some((p) => p.includes("name is not a string")));
  assert.ok(m.problems.some((p) => p.includes('duplicate tool name "search"')));
});

Deno.test("a written manifest reads back with every stored hash checked", () => {
  const m = manifest();
  m.tools.pop(); // drop the duplicate so it can be read
  const d = readDeclaration(parsePythonJson(prettyJson(m)), "m.json");
  assert.equal(d.kind, "verity-manifest");
  assert.equal(d.recipe, "3");
  assert.equal(d.tools[0]!.hash, SEARCH_R3);
  // Editing a declaration without its hash is caught, naming the key path.
  const edited = parsePythonJson(prettyJson(m)) as typeof m;
  (edited.tools[1]!.raw as Record<string, unknown>).description = "sneaky";
  assert.throws(
    () => readDeclaration(parsePythonJson(prettyJson(edited)), "m.json"),
    (e: Error) =>
      e instanceof DefinitionError &&
      /m\.json: tools\[1\]\.contract_hash: .*the manifest was edited/.test(
        e.message,
      ),
  );
  // Re-deriving under another recipe does not check the stored hashes.
  assert.equal(
    readDeclaration(parsePythonJson(prettyJson(edited)), "m.json", {
      recipe: "1",
    }).recipe,
    "1",
  );
});

Deno.test("bad declarations are refused with the file and key path", () => {
  const bad: [unknown, RegExp][] = [
    [
      { tools: [{ name: "a", contract_recipe: "9" }] },
      /d\.json: tools\[0\]\.contract_recipe: unknown contract recipe "9"/,
    ],
    [
      { contract_recipe: 2, tools: [] },
      /d\.json: contract_recipe: unknown contract recipe 2/,
    ],
    [
      { tools: [{ name: "a" }, { name: "a" }] },
      /d\.json: tools\[1\]: duplicate tool name "a"/,
    ],
    [
      { tools: [{ description: "x" }] },
      /d\.json: tools\[0\]\.name: must be a string/,
    ],
    [
      { tools: [], annotations: [{ tool: "a", bound_contract: "abc" }] },
      /annotations\[0\]\.bound_contract/,
    ],
    [{ format: "other", tools: [] }, /d\.json: format: unknown format "other"/],
    [[1, 2], /d\.json: must be a JSON object/],
  ];
  for (const [doc, re] of bad) {
    assert.throws(
      () => readDeclaration(doc, "d.json"),
      (e: Error) => e instanceof DefinitionError && re.test(e.message),
    );
  }
});

Deno.test("a declaration that states no recipe is read as recipe 1; a tool may override", () => {
  const silent = readDeclaration(
    load("notes-declared.json"),
    "notes-declared.json",
  );
  assert.equal(silent.recipe, "1");
  assert.equal(silent.recipeStated, false);
  assert.equal(silent.bindings.length, 1);
  const mixed = readDeclaration({
    contract_recipe: "2",
    tools: [{ name: "a" }, { name: "b", contract_recipe: "1" }],
  }, "x");
  assert.deepEqual(mixed.tools.map((t) => t.recipe), ["2", "1"]);
});
