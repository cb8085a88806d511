import assert from "node:assert/strict";
import {
  deriveArguments,
  freshArguments,
  learnedAim,
  learnedName,
  renderLearned,
  ValuePool,
} from "./learn_plan.ts";

function memoryPool(): ValuePool {
  const pool = new ValuePool();
  pool.add(
    {
      type: "entity",
      name: "Alice",
      entityType: "person",
      observations: ["likes tea", "on call"],
    },
    "the seed (memory.jsonl:entity)",
  );
  pool.add(
    { type: "relation", from: "Alice", to: "Bob", relationType: "knows" },
    "the seed (memory.jsonl:relation)",
  );
  return pool;
}

Deno.test("derive: a reference to a stored record takes that record's values", () => {
  const pool = memoryPool();
  const del = deriveArguments(
    { deletions: [{ entityName: "Jo", observations: ["zzz"] }] },
    pool,
    undefined,
  );
  assert.deepEqual(del.arguments, {
    deletions: [{ entityName: "Alice", observations: ["likes tea"] }],
  });
  assert.ok(
    del.origins.every((o) =>
      o.from === "derived from the seed (memory.jsonl:entity)"
    ),
  );
  const rel = deriveArguments(
    { relations: [{ from: "a", to: "b", relationType: "c" }] },
    pool,
    undefined,
  );
  assert.deepEqual(rel.arguments, {
    relations: [{ from: "Alice", to: "Bob", relationType: "knows" }],
  });
});

Deno.test("derive: identifiers only; other values stay generated, a stored one changed", () => {
  const pool = new ValuePool();
  pool.add({ id: 1, title: "Groceries", body: "milk" }, "the seed (notes)");
  const d = deriveArguments({ id: 42, title: "Groceries" }, pool, undefined);
  assert.deepEqual(d.arguments, { id: 1, title: "Groceries (changed)" });
  assert.deepEqual(d.origins.map((o) => o.from), [
    "derived from the seed (notes)",
    "generated, changed from a value seen in the seed",
  ]);
  // Nothing seen: generated as it is, and said so.
  const g = deriveArguments({ id: 42 }, new ValuePool(), undefined);
  assert.deepEqual(g.arguments, { id: 42 });
  assert.deepEqual(g.origins.map((o) => o.from), ["generated"]);
});

Deno.test("derive: arguments the schema refuses stay generated", () => {
  const pool = new ValuePool();
  pool.add({ id: "abc" }, "an answer");
  const schema = {
    type: "object",
    properties: { id: { type: "string", pattern: "^[0-9]+$" } },
  };
  const d = deriveArguments({ id: "7" }, pool, schema);
  assert.deepEqual(d.arguments, { id: "7" });
});

Deno.test("answers: JSON text, structuredContent and absolute paths are seen", () => {
  const pool = new ValuePool();
  pool.addAnswer({
    content: [{ type: "text", text: '{"id": 9, "name": "report"}' }, {
      type: "text",
      text: "Allowed directories:\n/srv/files",
    }],
  }, "the answer of add");
  assert.deepEqual(pool.values.map((v) => [v.name, v.value]), [
    ["id", 9],
    ["name", "report"],
    ["path", "/srv/files"],
  ]);
  assert.equal(
    deriveArguments({ directory: "/tmp/x" }, pool, undefined).arguments
      .directory,
    "/srv/files",
  );
});

Deno.test("fresh: a creating tool's strings seen before are made new", () => {
  const f = freshArguments(
    { entities: [{ name: "Alice", entityType: "person" }] },
    memoryPool(),
    undefined,
  );
  assert.deepEqual(f?.arguments, {
    entities: [{ name: "Alice (new)", entityType: "person (new)" }],
  });
  assert.equal(freshArguments({ name: "Zed" }, memoryPool(), undefined), null);
});

Deno.test("names and the text of what was learned", () => {
  assert.equal(learnedName(["python3", "srv/app.py"]), "app");
  assert.equal(learnedName(["npx", "-y", "@x/y@1.2.3", "/d"]), "y");
  const text = renderLearned({
    target: "/r/t/target.toml",
    files: [{ path: "db.sqlite", kind: "sqlite" }],
    steps: [{
      tool: "rm",
      outcome: "lossy",
      detail: "removed 1 record(s)",
      origins: [],
    }],
    calls: [{
      tool: "rm",
      variant: null,
      origins: [{ path: "id", value: 1, from: "derived from the seed" }],
      learned: "names_seed_record",
    }],
  });
  assert.match(text, /state files: db\.sqlite \(sqlite\)/);
  assert.match(text, /rm: lossy: removed 1 record/);
  assert.match(text, /id = 1 {2}derived from the seed/);
  assert.doesNotMatch(text, /no argument names a record/);
  const empty = renderLearned({
    target: "/r/t/target.toml",
    files: [],
    steps: [],
    calls: [],
  });
  assert.match(
    empty,
    /the seed is empty, so no destructive claim can fail here \(NOTHING_TO_CHANGE\)/,
  );
  assert.doesNotMatch(empty, /refused writes/);
  // A seed left empty because the sandbox refused the server's writes says so.
  const refused = renderLearned({
    target: "/r/t/target.toml",
    files: [],
    steps: [{
      tool: "add",
      outcome: "errored",
      detail:
        'isError: true: "Requires write access to \\"/pkg/dist/memory.jsonl\\""',
      origins: [],
    }],
    calls: [],
  });
  assert.match(
    refused,
    /NOTHING_TO_CHANGE\); the sandbox refused writes outside the state directory/,
  );
  assert.match(refused, /add: errored: isError: true: "Requires write access/);
  const blind = renderLearned({
    target: "/r/t/target.toml",
    files: [{ path: "db.sqlite", kind: "sqlite" }],
    steps: [],
    calls: [{
      tool: "rm",
      variant: null,
      origins: [{ path: "id", value: 9, from: "generated" }],
      learned: "names_nothing",
    }],
  });
  assert.match(blind, /rm {2}\(no argument names a record seen/);
  // A server's strings stay on their line, controls visible.
  const hostile = renderLearned({
    target: "/r/t/target.toml",
    files: [],
    steps: [{
      tool: "rm\n    forged: kept",
      outcome: "errored",
      detail: "isError: true",
      origins: [{
        path: "id",
        value: "\u009b2J",
        from: "derived from \u001b[2K",
      }],
    }],
    calls: [],
  });
  assert.ok(hostile.includes("rm\\n    forged: kept: errored"));
  assert.ok(hostile.includes('id = "\\u{9b}2J"  derived from \\u{1b}[2K'));
  // What each set names, as the learned target records it.
  const gen = { path: "id", value: 9, from: "generated" };
  const seen = { path: "id", value: 1, from: "derived from the seed" };
  assert.equal(learnedAim([gen], false), "names_nothing");
  assert.equal(learnedAim([gen, seen], false), "names_seed_record");
  assert.equal(learnedAim([], false), "no_arguments");
  assert.equal(learnedAim([seen], true), "empty_seed");
});
