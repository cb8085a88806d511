import assert from "node:assert/strict";
import { computeDelta, diffFields, snapshotDigest } from "./delta.ts";
import type { Category, Snapshot, StateRecord } from "./types.ts";

function snap(regions: [string, Category, StateRecord[]][]): Snapshot {
  return {
    regions: regions.map(([name, category, records]) => ({
      adapter: "state.db",
      kind: "sqlite",
      name,
      category,
      records,
    })),
    problems: [],
  };
}
const rec = (key: unknown, value: Record<string, unknown>): StateRecord => ({
  key: JSON.stringify([key]),
  value,
});

Deno.test("delta: added, removed and changed records per category", () => {
  const before = snap([
    ["items", "business", [
      rec(1, { v: "a" }),
      rec(2, { v: "b" }),
      rec(10, { v: "c" }),
    ]],
    ["audit", "append_only", [rec(1, { what: "seed" })]],
  ]);
  const after = snap([
    ["items", "business", [
      rec(2, { v: "b" }),
      rec(9, { v: "new" }),
      rec(10, { v: "C" }),
    ]],
    ["audit", "append_only", [
      rec(1, { what: "seed" }),
      rec(2, { what: "upsert" }),
    ]],
  ]);
  const d = computeDelta(before, after);
  assert.deepEqual(d.business.added, [{
    region: "state.db:items",
    key: "[9]",
  }]);
  assert.deepEqual(d.business.removed, [{
    region: "state.db:items",
    key: "[1]",
  }]);
  assert.deepEqual(d.business.changed, [{
    region: "state.db:items",
    key: "[10]",
    fields: [{ field: "v", before: "c", after: "C", lossy: true }],
    lossy: true,
  }]);
  assert.equal(d.business.lossy, true);
  assert.equal(
    d.append_only.lossy,
    false,
    "an appended audit row loses nothing",
  );
  assert.equal(d.append_only.added.length, 1);
  assert.equal(d.unclassified.empty, true);
  assert.equal(d.empty, false);
  assert.ok(computeDelta(before, before).empty);
});

Deno.test("delta: additive versus lossy field changes", () => {
  assert.deepEqual(diffFields({ a: 1 }, { a: 1, b: 2 }), [{
    field: "b",
    before: undefined,
    after: 2,
    lossy: false,
  }]);
  assert.deepEqual(diffFields({ a: 1, b: 2 }, { a: 1 }), [{
    field: "b",
    before: 2,
    after: undefined,
    lossy: true,
  }]);
  assert.deepEqual(diffFields({ a: null }, { a: "x" }), [{
    field: "a",
    before: null,
    after: "x",
    lossy: false,
  }]);
  assert.deepEqual(diffFields({ a: "x" }, { a: null }), [{
    field: "a",
    before: "x",
    after: null,
    lossy: true,
  }]);
  const obs = (xs: string[]) => ({ name: "Alice", observations: xs });
  assert.equal(
    diffFields(obs(["tea"]), obs(["tea", "cake"]))[0]?.lossy,
    false,
    "appended observation",
  );
  assert.equal(
    diffFields(obs(["tea", "cake"]), obs(["milk", "tea", "jam", "cake"]))[0]
      ?.lossy,
    false,
    "inserted",
  );
  assert.equal(
    diffFields(obs(["tea", "cake"]), obs(["cake"]))[0]?.lossy,
    true,
    "dropped element",
  );
  assert.equal(
    diffFields(obs(["tea", "cake"]), obs(["cake", "tea"]))[0]?.lossy,
    true,
    "reordered: an order was lost",
  );
  assert.deepEqual(
    diffFields({ m: { a: 1, b: { c: 2 } } }, {
      m: { a: 1, b: { c: 3 }, d: 4 },
    }),
    [
      { field: "m.b.c", before: 2, after: 3, lossy: true },
      { field: "m.d", before: undefined, after: 4, lossy: false },
    ],
  );
  assert.deepEqual(diffFields({ "a.b": 1 }, { "a.b": 2 }).map((f) => f.field), [
    "a.b",
  ]);
  assert.deepEqual(
    diffFields({ x: { "a.b": 1 } }, { x: { "a.b": 2 } }).map((f) => f.field),
    ['x["a.b"]'],
  );
  assert.deepEqual(
    diffFields({ b: { $bytes: "AA==" } }, { b: { $bytes: "AQ==" } })[0]?.lossy,
    true,
  );
  assert.deepEqual(
    diffFields({ k: 1, v: [1, { x: 2 }] }, { v: [1, { x: 2 }], k: 1 }),
    [],
    "values, not key order",
  );
});

Deno.test("delta: an entity that only gained an observation is not destroyed", () => {
  const before = snap([["entity", "business", [
    rec("Alice", { name: "Alice", observations: ["tea"] }),
  ]]]);
  const after = snap([["entity", "business", [
    rec("Alice", { name: "Alice", observations: ["tea", "cake"] }),
  ]]]);
  const d = computeDelta(before, after);
  assert.equal(d.business.changed.length, 1);
  assert.equal(d.business.lossy, false);
});

Deno.test("delta: regions on one side only, and numeric keys in SQL order", () => {
  const before = snap([["gone", "business", [rec(1, {})]]]);
  const after = snap([["new", "unclassified", [
    rec(2, {}),
    rec(10, {}),
    rec(100, {}),
  ]]]);
  const d = computeDelta(before, after);
  assert.deepEqual(d.business.removed, [{
    region: "state.db:gone",
    key: "[1]",
  }]);
  assert.deepEqual(d.unclassified.added.map((a) => a.key), [
    "[2]",
    "[10]",
    "[100]",
  ]);
  // Merge over keys sorted numerically (not as strings).
  const x = snap([["t", "business", [2, 9, 10, 11].map((k) => rec(k, { k }))]]);
  const y = snap([[
    "t",
    "business",
    [2, 10, 11, 12].map((k) => rec(k, { k })),
  ]]);
  const dd = computeDelta(x, y);
  assert.deepEqual(dd.business.removed.map((r) => r.key), ["[9]"]);
  assert.deepEqual(dd.business.added.map((r) => r.key), ["[12]"]);
  assert.equal(dd.business.changed.length, 0);
});

Deno.test("snapshotDigest: equal state, equal digest; any difference, different digest", () => {
  const a = snap([["t", "business", [rec(1, { a: 1, b: "x" })]]]);
  const b = snap([["t", "business", [rec(1, { b: "x", a: 1 })]]]);
  assert.equal(snapshotDigest(a), snapshotDigest(b));
  assert.match(snapshotDigest(a), /^sha256:[0-9a-f]{64}$/);
  const c = snap([["t", "business", [rec(1, { a: 2, b: "x" })]]]);
  assert.notEqual(snapshotDigest(a), snapshotDigest(c));
  assert.notEqual(snapshotDigest(a), snapshotDigest({ ...a, problems: ["x"] }));
});

Deno.test("a table created, dropped or reshaped is a change even with no rows", () => {
  const table = (
    name: string,
    columns: string[],
    category: Category = "unclassified",
  ) => ({
    adapter: "db.sqlite",
    kind: "sqlite" as const,
    name,
    category,
    records: [],
    columns,
  });
  const notes = table("notes", ["id", "title"], "business");
  const base: Snapshot = { regions: [notes], problems: [] };
  const created = computeDelta(base, {
    regions: [notes, table("tags", ["id", "label"])],
    problems: [],
  });
  assert.equal(created.empty, false);
  assert.equal(created.unclassified.empty, false);
  assert.equal(created.unclassified.lossy, false);
  assert.deepEqual(created.unclassified.structure, [{
    region: "db.sqlite:tags",
    change: "created",
    before: null,
    after: ["id", "label"],
    lossy: false,
  }]);
  assert.equal(created.business.empty, true);
  const dropped = computeDelta(base, { regions: [], problems: [] });
  assert.equal(dropped.business.lossy, true);
  assert.equal(dropped.business.structure[0]?.change, "dropped");
  const reshaped = computeDelta(base, {
    regions: [table("notes", ["id", "title", "body"], "business")],
    problems: [],
  });
  assert.equal(reshaped.business.structure[0]?.change, "columns");
  assert.equal(reshaped.business.lossy, false, "a column added loses nothing");
  // Regions without columns (fs, json) keep the record-only comparison.
  const fsEmpty = computeDelta({ regions: [], problems: [] }, {
    regions: [{
      adapter: ".",
      kind: "fs",
      name: "x",
      category: "unclassified",
      records: [],
    }],
    problems: [],
  });
  assert.equal(fsEmpty.empty, true);
  assert.equal(computeDelta(base, base).empty, true);
});
