import assert from "node:assert/strict";
import { parsePythonJson } from "./canonical.ts";
import { diffDeclarations, jsonChanges, renderDiff } from "./diff.ts";
import { readDeclaration, type ReadDeclarationOptions } from "./manifest.ts";

const DATA = new URL("../../tests/data/evidence/", import.meta.url);
const OLD = "filesystem-2026.1.14.manifest.json";
const NEW = "filesystem-2026.8.31.manifest.json";
const decl = (name: string, opts: ReadDeclarationOptions = {}) =>
  readDeclaration(
    parsePythonJson(Deno.readTextFileSync(new URL(name, DATA))),
    name,
    opts,
  );

// Contract hashes mcp-evidence-validator published for the same two releases
// (recipe 3; its examples/filesystem-server-*.json): verity's captures agree.
const PUBLISHED = {
  old: {
    read_text_file:
      "sha256:6dbb750e057cb8b7e3f27a607d0ab4184317c847ab87a262b3c71bcd5727fd1f",
    read_media_file:
      "sha256:dc40a44fb332ee1017919018b2a2c24bf8d37071d7899acd7685f3f40f1a6a6e",
    get_file_info:
      "sha256:511bf6d1fc8863f3129585161834c09f342e54856af10056a062fd8a761faafb",
  },
  new: {
    read_text_file:
      "sha256:ddaa28575739db56e4f8ecfd4c5ed63d0a7b63ad287023a74cbbb3581660a027",
    read_media_file:
      "sha256:9eb812def2c5065953c632d0c42d8a0d06a62dd6d9f05a1a4ee063eec6b014dc",
    get_file_info:
      "sha256:1f66296c4f5cb71a8e0b79058e4a544ea1c69f5cc106570b1b8cd413f99f79a0",
  },
};

Deno.test("captured filesystem contracts equal the hashes mcp-evidence-validator published", () => {
  const a = new Map(decl(OLD).tools.map((t) => [t.name, t.hash]));
  const b = new Map(decl(NEW).tools.map((t) => [t.name, t.hash]));
  for (const [name, h] of Object.entries(PUBLISHED.old)) {
    assert.equal(a.get(name), h, name);
  }
  for (const [name, h] of Object.entries(PUBLISHED.new)) {
    assert.equal(b.get(name), h, name);
  }
});

Deno.test("server-filesystem 2026.1.14 → 2026.8.31: every contract moved, and diff names what moved", () => {
  const r = diffDeclarations(decl(OLD), decl(NEW));
  assert.equal(r.status, "drift");
  assert.equal(r.recipe, "3");
  assert.equal(r.changed.length, 14);
  assert.deepEqual([r.added.length, r.removed.length, r.unchanged], [0, 0, 0]);
  const by = new Map(r.changed.map((c) => [c.name, c]));
  // Every tool gained openWorldHint: false.
  for (const c of r.changed) {
    const ann = c.fields.find((f) => f.field === "annotations");
    assert.ok(
      ann?.changes.some((x) =>
        x.path === "/openWorldHint" && x.op === "added" && x.to === false
      ),
      c.name,
    );
  }
  // read_text_file moved only by that hint.
  assert.deepEqual(by.get("read_text_file")!.fields.map((f) => f.field), [
    "annotations",
  ]);
  // read_media_file: new description, an anyOf output schema, and the hint.
  const media = by.get("read_media_file")!;
  assert.deepEqual(media.fields.map((f) => f.field), [
    "description",
    "outputSchema",
    "annotations",
  ]);
  const desc = media.fields[0]!.changes[0]!;
  assert.match(String(desc.from), /^Read an image or audio file/);
  assert.match(String(desc.to), /embedded resource/);
  assert.ok(
    media.fields[1]!.changes.some((c) =>
      c.path === "/properties/content/items/anyOf" && c.op === "added"
    ),
  );
  // move_file now declares itself destructive.
  const move = by.get("move_file")!.fields.find((f) =>
    f.field === "annotations"
  )!;
  assert.ok(
    move.changes.some((c) =>
      c.path === "/destructiveHint" && c.from === false && c.to === true
    ),
  );
  const text = renderDiff(r);
  assert.match(text, /~ read_media_file/);
  assert.match(text, /description: text changed/);
  assert.match(text, /\/destructiveHint: false → true/);
  assert.match(text, /drift under recipe 3: 14 tool\(s\) moved/);
});

Deno.test("under recipe 1 only read_media_file moved: hints and output schemas are outside it", () => {
  const r = diffDeclarations(
    decl(OLD, { recipe: "1" }),
    decl(NEW, { recipe: "1" }),
  );
  assert.equal(r.status, "drift");
  assert.deepEqual(r.changed.map((c) => c.name), ["read_media_file"]);
  assert.deepEqual(r.changed[0]!.fields.map((f) => f.field), ["description"]);
  assert.equal(r.unchanged, 13);
  // The changes recipe 1 cannot see are still named, as outside the recipe.
  const rt = r.outside_recipe.find((o) => o.name === "read_text_file");
  assert.deepEqual(rt?.fields, ["annotations"]);
});

Deno.test("a manifest against itself is identical", () => {
  const r = diffDeclarations(decl(NEW), decl(NEW));
  assert.equal(r.status, "identical");
  assert.equal(r.unchanged, 14);
  assert.match(renderDiff(r), /identical under recipe 3/);
});

Deno.test("manifests of different recipes are refused as recipe_mismatch, never drift", () => {
  const r = diffDeclarations(decl(OLD), decl(NEW, { recipe: "2" }));
  assert.equal(r.status, "recipe_mismatch");
  assert.equal(r.recipe, null);
  assert.equal(r.changed.length, 0);
  assert.equal(r.refused.length, 14);
  assert.deepEqual(r.refused[0]!.a_recipe + r.refused[0]!.b_recipe, "32");
  assert.match(renderDiff(r), /comparison refused \(this is not drift\)/);
});

Deno.test("added and removed tools are named", () => {
  const a = readDeclaration({
    contract_recipe: "2",
    tools: [{ name: "keep" }, { name: "gone" }],
  }, "a");
  const b = readDeclaration({
    contract_recipe: "2",
    tools: [{ name: "keep" }, { name: "new" }],
  }, "b");
  const r = diffDeclarations(a, b);
  assert.deepEqual(r.removed.map((t) => t.name), ["gone"]);
  assert.deepEqual(r.added.map((t) => t.name), ["new"]);
  assert.equal(r.unchanged, 1);
});

Deno.test("array changes are an insertion, not a cascade", () => {
  assert.deepEqual(
    jsonChanges({ required: ["a", "c"] }, { required: ["a", "b", "c"] }),
    [
      { path: "/required/1", op: "added", to: "b" },
    ],
  );
  assert.deepEqual(jsonChanges({ enum: ["x", "y"] }, { enum: ["x", "z"] }), [
    { path: "/enum/1", op: "changed", from: "y", to: "z" },
  ]);
  assert.deepEqual(jsonChanges({ "a/b": 1 }, {}), [{
    path: "/a~1b",
    op: "removed",
    from: 1,
  }]);
});
