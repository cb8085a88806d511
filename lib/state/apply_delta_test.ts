import assert from "node:assert/strict";
import { applyDelta } from "./apply_delta.ts";
import { computeDelta, snapshotDigest } from "./delta.ts";
import type { Region, Snapshot, StateRecord } from "./types.ts";

function table(name: string, records: StateRecord[]): Region {
  return {
    adapter: "state.db",
    kind: "sqlite",
    name,
    category: "business",
    records,
    columns: ["id", "name", "n"],
  };
}

const row = (id: number, name: string, n: unknown = id): StateRecord => ({
  key: `[${id}]`,
  value: { id, name, n },
});

const seed: Snapshot = {
  regions: [
    table("a", [row(1, "one"), row(2, "two"), row(3, "three")]),
    table("b", [row(1, "x"), row(10, "y")]),
  ],
  problems: [],
};

Deno.test("applyDelta: changed and removed rows rebuild the after side, sharing the rest", () => {
  const after: Snapshot = {
    regions: [
      table("a", [
        row(1, "one"),
        row(3, "THREE", { $int: "9007199254740993" }),
      ]),
      table("b", [row(1, "x"), row(10, "y", null)]),
    ],
    problems: [],
  };
  const got = applyDelta(seed, computeDelta(seed, after));
  assert.ok(typeof got !== "string", String(got));
  assert.deepEqual(got, after);
  assert.equal(snapshotDigest(got), snapshotDigest(after));
  // Untouched records are the seed's own objects.
  assert.equal(got.regions[0]!.records[0], seed.regions[0]!.records[0]);
  assert.equal(got.regions[1]!.records[0], seed.regions[1]!.records[0]);
  // Nothing changed: the seed's regions themselves.
  const same = applyDelta(seed, computeDelta(seed, seed));
  assert.ok(typeof same !== "string");
  assert.equal(same.regions[0], seed.regions[0]);
});

Deno.test("applyDelta: what a delta does not say is refused with the reason", () => {
  const added: Snapshot = {
    regions: [
      table("a", [...seed.regions[0]!.records, row(4, "four")]),
      seed
        .regions[1]!,
    ],
    problems: [],
  };
  assert.equal(
    applyDelta(seed, computeDelta(seed, added)),
    "a record was added",
  );
  const dropped: Snapshot = { regions: [seed.regions[0]!], problems: [] };
  assert.equal(
    applyDelta(seed, computeDelta(seed, dropped)),
    "a table was created, dropped or reshaped",
  );
  // A nested value is diffed by path: not a flat row's field.
  const nested = (v: unknown): Snapshot => ({
    regions: [{ ...seed.regions[0]!, records: [row(1, "one", v)] }],
    problems: [],
  });
  const base = nested({ a: 1, b: 2 });
  assert.match(
    String(applyDelta(base, computeDelta(base, nested({ a: 1, b: 3 })))),
    /^cannot rebuild: field n\.b /,
  );
  // A delta that does not start from this base.
  const other: Snapshot = {
    regions: [table("a", [row(1, "uno"), row(2, "two"), row(3, "three")])],
    problems: [],
  };
  const d = computeDelta(other, {
    ...other,
    regions: [table("a", [row(1, "1"), row(2, "two"), row(3, "three")])],
  });
  assert.match(String(applyDelta(seed, d)), /^cannot rebuild: field name /);
});

Deno.test("applyDelta: added records whose values are given go in key order", () => {
  const after: Snapshot = {
    regions: [
      table("a", [
        row(0, "zero"),
        row(1, "one"),
        row(2, "two"),
        row(3, "three"),
        row(11, "eleven"),
      ]),
      seed.regions[1]!,
    ],
    problems: [],
  };
  const d = computeDelta(seed, after);
  const values = new Map([
    [
      "state.db:a",
      new Map([
        ["[11]", row(11, "eleven").value],
        ["[0]", row(0, "zero").value],
      ]),
    ],
  ]);
  const got = applyDelta(seed, d, values);
  assert.ok(typeof got !== "string", String(got));
  assert.deepEqual(got, after);
  assert.equal(snapshotDigest(got), snapshotDigest(after));
  // One added value missing: refused.
  values.get("state.db:a")!.delete("[0]");
  assert.equal(applyDelta(seed, d, values), "a record was added");
});
