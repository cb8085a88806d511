import assert from "node:assert/strict";
import { snapshotDigest } from "./delta.ts";
import { shareRecords } from "./share.ts";
import type { Snapshot } from "./types.ts";

function snap(values: [number, string][]): Snapshot {
  return {
    regions: [{
      adapter: "db",
      kind: "sqlite",
      name: "t",
      category: "business",
      columns: ["v"],
      records: values.map(([k, v]) => ({ key: `[${k}]`, value: { v } })),
    }],
    problems: [],
  };
}

Deno.test("shareRecords keeps the snapshot's content and digest and shares the base's unchanged records", () => {
  const base = snap([[1, "a"], [2, "b"], [3, "c"], [5, "e"]]);
  const after = snap([[1, "a"], [2, "B"], [4, "d"], [5, "e"]]);
  const shared = shareRecords(base, after);
  assert.equal(snapshotDigest(shared), snapshotDigest(after));
  const [b, s] = [base.regions[0]!.records, shared.regions[0]!.records];
  assert.equal(s[0], b[0], "unchanged row 1 is the base's object");
  assert.notEqual(s[1], b[1], "changed row 2 is the snapshot's own");
  assert.equal(s[1]!.value.v, "B");
  assert.equal(s[2]!.key, "[4]");
  assert.equal(s[3], b[3], "unchanged row 5 is the base's object");
  // The input is not modified.
  assert.notEqual(after.regions[0]!.records[0], b[0]);
});
