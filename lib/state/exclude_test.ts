import assert from "node:assert/strict";
import type { CategoryDelta, Delta } from "./delta.ts";
import { excludeFromDelta, exclusionsOf } from "./exclude.ts";

const none: CategoryDelta = {
  added: [],
  removed: [],
  changed: [],
  structure: [],
  lossy: false,
  empty: true,
};

function delta(unclassified: Partial<CategoryDelta>): Delta {
  const c = { ...none, ...unclassified, empty: false };
  return { business: none, append_only: none, unclassified: c, empty: false };
}

Deno.test("exclude: fs paths by name or pattern, tables by name or pattern; lossy and empty recomputed", () => {
  const d = delta({
    added: [
      { region: ".:.", key: '["logs/a.log"]' },
      { region: ".:.", key: '["cache/x.json"]' },
      { region: "state.db:sqlite_stat1", key: '["items"]' },
    ],
    removed: [{ region: "state.db:mcp_tmp", key: "[1]" }],
    structure: [{
      region: "state.db:mcp_tmp",
      change: "dropped",
      before: ["id"],
      after: null,
      lossy: true,
    }],
    lossy: true,
  });
  const out = excludeFromDelta(d, [
    { adapter: ".", kind: "fs", entries: ["logs"] },
    { adapter: "state.db", kind: "sqlite", entries: ["sqlite_stat1", "mcp_*"] },
  ]);
  assert.deepEqual(out.unclassified.added, [{
    region: ".:.",
    key: '["cache/x.json"]',
  }]);
  assert.deepEqual(out.unclassified.removed, []);
  assert.deepEqual(out.unclassified.structure, []);
  assert.equal(out.unclassified.lossy, false, "the only loss was excluded");
  assert.equal(out.empty, false);
  const all = excludeFromDelta(out, [
    { adapter: ".", kind: "fs", entries: ["cache/**"] },
  ]);
  assert.equal(all.empty, true);
  // Another adapter's regions are untouched; no exclusions: the same delta.
  assert.equal(
    excludeFromDelta(d, [{
      adapter: "other.db",
      kind: "sqlite",
      entries: ["*"],
    }])
      .unclassified.added.length,
    3,
  );
  assert.equal(excludeFromDelta(d, []), d);
});

Deno.test("exclude: the history records only adapters that exclude something", () => {
  assert.deepEqual(
    exclusionsOf({ adapters: [{ kind: "fs", label: "./", exclude: [] }] }),
    {},
  );
  assert.deepEqual(
    exclusionsOf({
      adapters: [
        { kind: "sqlite", label: "state.db" },
        { kind: "fs", label: "./", exclude: ["logs/**"] },
      ],
    }),
    { excluded: [{ adapter: ".", kind: "fs", entries: ["logs/**"] }] },
  );
});
