import assert from "node:assert/strict";
import type { AdapterDef } from "../definition/types.ts";
import { computeDelta } from "./delta.ts";
import { normalize } from "./normalize.ts";
import type { Snapshot } from "./types.ts";

const adapters: AdapterDef[] = [
  {
    kind: "sqlite",
    label: "state.db",
    seed: null,
    business: ["items"],
    append_only: ["audit"],
    mask: [{ region: "audit", column: "at", kind: "timestamp" }, {
      region: "items",
      column: "token",
      kind: "token",
    }],
    key: {},
  },
  {
    kind: "json",
    label: "./m.jsonl",
    seed: null,
    business: [],
    append_only: [],
    mask: [{ region: "entity", column: "meta.id", kind: "uuid" }],
    key: {},
  },
];

function snap(at: string | null, token: string, id: string): Snapshot {
  return {
    regions: [
      {
        adapter: "m.jsonl",
        kind: "json",
        name: "entity",
        category: "business",
        records: [{ key: '["a"]', value: { name: "a", meta: { id, n: 1 } } }],
      },
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "audit",
        category: "append_only",
        records: [{ key: "[1]", value: { id: 1, at } }],
      },
      {
        adapter: "state.db",
        kind: "sqlite",
        name: "items",
        category: "business",
        records: [{ key: '["k"]', value: { key: "k", token, v: 1 } }],
      },
    ],
    problems: [],
  };
}

Deno.test("normalize: declared volatile fields become placeholders, so runs compare equal", () => {
  const a = snap(
    "2026-01-01T00:00:00Z",
    "tok-1",
    "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
  );
  const b = snap(
    "2026-06-30T12:34:56Z",
    "tok-2",
    "6fa459ea-ee8a-3ca4-894e-db77e160355e",
  );
  assert.equal(computeDelta(a, b).empty, false);
  const na = normalize(a, { adapters });
  const nb = normalize(b, { adapters });
  assert.ok(computeDelta(na, nb).empty);
  assert.deepEqual(na.regions[1]?.records[0]?.value, {
    id: 1,
    at: "<timestamp>",
  });
  assert.deepEqual(na.regions[2]?.records[0]?.value, {
    key: "k",
    token: "<token>",
    v: 1,
  });
  assert.deepEqual(na.regions[0]?.records[0]?.value, {
    name: "a",
    meta: { id: "<uuid>", n: 1 },
  });
  assert.equal(
    a.regions[1]?.records[0]?.value.at,
    "2026-01-01T00:00:00Z",
    "the input is not modified",
  );
});

Deno.test("normalize: a null stays null, so a value appearing is still a change", () => {
  const a = normalize(snap(null, "t", "u"), { adapters });
  const b = normalize(snap("2026-01-01", "t", "u"), { adapters });
  const d = computeDelta(a, b);
  assert.deepEqual(d.append_only.changed[0]?.fields, [{
    field: "at",
    before: null,
    after: "<timestamp>",
    lossy: false,
  }]);
});

Deno.test("normalize: other columns and unmasked regions are untouched", () => {
  const a = snap("x", "t", "u");
  const n = normalize(a, { adapters: [] });
  assert.equal(n, a, "no masks: the same snapshot");
  const b = snap("x", "t", "u");
  b.regions[2]!.records[0]!.value.v = 2;
  assert.deepEqual(
    computeDelta(normalize(a, { adapters }), normalize(b, { adapters }))
      .business.changed[0]?.fields,
    [
      { field: "v", before: 1, after: 2, lossy: true },
    ],
  );
});
