import assert from "node:assert/strict";
import type { AdapterDef } from "../lib/definition/types.ts";
import { adapterDef } from "../tests/_definition.ts";
import { computeDelta } from "../lib/state/delta.ts";
import type { Snapshot } from "../lib/state/types.ts";
import { readJsonState } from "./json.ts";
import { getPath } from "../lib/state/json_path.ts";

function def(label: string, extra: Partial<AdapterDef> = {}): AdapterDef {
  return adapterDef("json", label, extra);
}

function snap(text: string, d: AdapterDef): Snapshot {
  return {
    regions: readJsonState(text, d).regions.map((r) => ({
      adapter: d.label,
      kind: "json",
      name: r.name,
      category: "business",
      records: r.records,
    })),
    problems: [],
  };
}

Deno.test("json: reordered keys, whitespace and a missing trailing newline are not changes", () => {
  const d = def("store.json");
  const a = '{"notes":[{"id":1,"text":"a"}],"next":2}\n';
  const b = '{\n  "next": 2,\n  "notes": [ { "text": "a", "id": 1 } ]\n}';
  assert.ok(computeDelta(snap(a, d), snap(b, d)).empty);
  const l = def("m.jsonl");
  assert.ok(
    computeDelta(
      snap('{"a":1,"b":2}\n{"c":3}\n', l),
      snap('{"b":2, "a":1}\n\n{"c":3}', l),
    ).empty,
  );
});

Deno.test("json: a document is one record whose fields are compared; arrays give one record per element", () => {
  const obj = readJsonState('{"notes":["a"],"n":1}', def("s.json"));
  assert.deepEqual(obj.regions, [{
    name: "s.json",
    records: [{ key: "[]", value: { notes: ["a"], n: 1 } }],
  }]);
  const arr = readJsonState('[{"x":1}, 5, "s"]', def("a.json"));
  assert.deepEqual(arr.regions[0]?.records.map((r) => r.value), [
    { $value: 5 },
    { $value: "s" },
    { x: 1 },
  ]);
});

Deno.test("json: region_by splits memory-server lines; key identifies records; duplicates show", () => {
  const d = def("memory.jsonl", {
    region_by: "type",
    key: { entity: ["name"], relation: ["from", "to", "relationType"] },
  });
  const text = [
    '{"type":"entity","name":"Bob","entityType":"person","observations":[]}',
    '{"type":"entity","name":"Alice","entityType":"person","observations":["tea"]}',
    '{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}',
    '{"type":"entity","name":"Alice","entityType":"robot","observations":[]}',
  ].join("\n");
  const obs = readJsonState(text, d);
  assert.deepEqual(obs.regions.map((r) => r.name), ["entity", "relation"]);
  assert.deepEqual(obs.regions[0]?.records.map((r) => r.key), [
    '["Alice"]',
    '["Alice",{"dup":2}]',
    '["Bob"]',
  ]);
  assert.deepEqual(obs.regions[1]?.records.map((r) => r.key), [
    '["Alice","Bob","knows"]',
  ]);
});

Deno.test("json: regions pick arrays or objects of records by JSON pointer; the rest stays", () => {
  const d = def("store.json", {
    regions: { notes: "/data/notes", users: "/users" },
  });
  const obs = readJsonState(
    '{"data":{"notes":[{"id":2},{"id":1}],"v":1},"users":{"u1":{"n":"a"},"u2":"b"},"next":3}',
    {
      ...d,
      key: { notes: ["id"] },
    },
  );
  const by = Object.fromEntries(obs.regions.map((r) => [r.name, r.records]));
  assert.deepEqual(by.notes?.map((r) => r.key), ["[1]", "[2]"]);
  assert.deepEqual(by.users, [{ key: '["u1"]', value: { n: "a" } }, {
    key: '["u2"]',
    value: { $value: "b" },
  }]);
  assert.deepEqual(by["store.json"], [{
    key: "[]",
    value: { data: { v: 1 }, next: 3 },
  }]);
});

Deno.test("json: invalid JSON is a problem and is kept as text, so a change is still seen", () => {
  const l = def("m.jsonl");
  const obs = readJsonState('{"a":1}\n{oops\n', l);
  assert.match(obs.problems[0] ?? "", /line 2 is not valid JSON/);
  assert.equal(obs.regions[0]?.records.length, 2);
  const doc = readJsonState("{", def("s.json"));
  assert.match(doc.problems[0] ?? "", /not valid JSON/);
  assert.deepEqual(doc.regions[0]?.records[0]?.value, { $unparsed: "{" });
  assert.deepEqual(
    readJsonState("", def("s.json")).regions,
    [],
    "an empty file has no records",
  );
});

Deno.test("json: getPath reads dotted paths and JSON pointers", () => {
  const v = { a: { "b/c": [10, 20], d: null } };
  assert.equal(getPath(v, "/a/b~1c/1"), 20);
  assert.equal(getPath(v, "a.d"), null);
  assert.equal(getPath(v, "a.x"), undefined);
});
