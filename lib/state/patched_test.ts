import assert from "node:assert/strict";
import { computeDelta, snapshotDigest } from "./delta.ts";
import { sortRecords } from "./keys.ts";
import { applyPatch, patchFromDelta } from "./patched.ts";
import { createPrng, type Prng } from "../reality/prng.ts";
import type { Category, Region, Snapshot, StateRecord } from "./types.ts";

const CATS: Category[] = ["business", "append_only", "unclassified"];

function value(p: Prng, kind: Region["kind"]): Record<string, unknown> {
  const scalar = () =>
    p.pick<unknown>([null, p.int(0, 3), `s${p.int(0, 3)}`, true, {
      $bytes: "AA==",
    }]);
  if (kind !== "json") {
    return {
      a: scalar(),
      b: scalar(),
      ...(p.next() < 0.5 ? { c: scalar() } : {}),
    };
  }
  return {
    a: scalar(),
    n: { x: scalar(), ...(p.next() < 0.5 ? { y: [scalar(), scalar()] } : {}) },
    ...(p.next() < 0.3 ? { l: [p.int(0, 2), p.int(0, 2)] } : {}),
  };
}

function key(p: Prng): string {
  return p.next() < 0.6
    ? JSON.stringify([p.int(-5, 40)])
    : JSON.stringify([`k${p.int(0, 30)}`, p.int(0, 2)]);
}

function records(p: Prng, kind: Region["kind"], n: number): StateRecord[] {
  const m = new Map<string, StateRecord>();
  for (let i = 0; i < n; i++) {
    const k = key(p);
    m.set(k, { key: k, value: value(p, kind) });
  }
  return sortRecords([...m.values()]);
}

function region(p: Prng, adapter: string, name: string): Region {
  const kind: Region["kind"] = adapter.endsWith(".db") ? "sqlite" : "json";
  return {
    adapter,
    kind,
    name,
    category: p.pick(CATS),
    records: records(p, kind, p.int(0, 12)),
    ...(kind === "sqlite"
      ? { columns: p.next() < 0.8 ? ["a", "b"] : ["a", "b", "c"] }
      : {}),
  };
}

function order(regions: Region[]): Region[] {
  return regions.sort((x, y) =>
    x.adapter < y.adapter
      ? -1
      : x.adapter > y.adapter
      ? 1
      : x.name < y.name
      ? -1
      : x.name > y.name
      ? 1
      : 0
  );
}

function seedSnapshot(p: Prng, json = true): Snapshot {
  const regions: Region[] = [];
  for (const name of ["t1", "t2", "t3"]) {
    if (p.next() < 0.8) regions.push(region(p, "state.db", name));
  }
  if (json && p.next() < 0.7) regions.push(region(p, "data.json", "items"));
  return {
    regions: order(regions),
    problems: p.next() < 0.2 ? ["data.json: bad line 3"] : [],
  };
}

/** Random edits of a snapshot: records added, removed, changed; tables created, dropped, reshaped. */
function edit(p: Prng, s: Snapshot): Snapshot {
  const regions: Region[] = [];
  for (const r of s.regions) {
    const roll = p.next();
    if (roll < 0.1) continue; // dropped
    let columns = r.columns;
    if (columns !== undefined && roll < 0.2) {
      columns = p.next() < 0.5 ? [...columns, "d"] : columns.slice(0, 1);
    }
    const m = new Map(r.records.map((x) => [x.key, x]));
    const edits = p.int(0, 5);
    for (let i = 0; i < edits; i++) {
      const keys = [...m.keys()];
      const what = p.next();
      if (what < 0.3 && keys.length > 0) m.delete(p.pick(keys));
      else if (what < 0.7 && keys.length > 0) {
        const k = p.pick(keys);
        const old = m.get(k)!;
        m.set(
          k,
          p.next() < 0.2
            ? old
            : { key: k, value: { ...old.value, a: value(p, r.kind).a } },
        );
        if (p.next() < 0.3) m.set(k, { key: k, value: value(p, r.kind) });
      } else {
        const k = key(p);
        m.set(k, { key: k, value: value(p, r.kind) });
      }
    }
    regions.push({
      ...r,
      ...(columns !== undefined ? { columns } : {}),
      records: sortRecords([...m.values()]),
    });
  }
  for (const name of ["t1", "t2", "t3", "t4"]) {
    if (
      p.next() < 0.15 &&
      !regions.some((r) => r.adapter === "state.db" && r.name === name)
    ) {
      // A table dropped and created again keeps its classification (the
      // definition's).
      const was = s.regions.find((r) => r.name === name);
      const r = region(p, "state.db", name);
      regions.push(was === undefined ? r : { ...r, category: was.category });
    }
  }
  return {
    regions: order(regions),
    problems: p.next() < 0.2 ? ["state.db: bad WAL frame"] : s.problems,
  };
}

Deno.test("patchFromDelta: the patch a page delta and its rows give rebuilds the state", () => {
  let built = 0;
  let refused = 0;
  for (let round = 0; round < 300; round++) {
    const p = createPrng(1000 + round);
    const seed = seedSnapshot(p, round % 10 === 0);
    const digest = snapshotDigest(seed);
    const after = edit(p, seed);
    const delta = computeDelta(seed, after);
    const rows = new Map<string, Map<string, Record<string, unknown>>>();
    for (const r of after.regions) {
      rows.set(
        `${r.adapter}:${r.name}`,
        new Map(r.records.map((x) => [x.key, x.value])),
      );
    }
    const patch = patchFromDelta(digest, seed, delta, rows, after.problems);
    const reshaped = ["business", "append_only", "unclassified"].some((c) =>
      delta[c as Category].structure.length > 0
    );
    const untabled = seed.regions.some((r) => r.columns === undefined);
    if ("why" in patch) {
      // Refused only for a table created, dropped or reshaped, or a seed
      // region that is not a table (whether it exists is not in a delta).
      assert.ok(
        untabled ? /is not a table/.test(patch.why) : reshaped,
        patch.why,
      );
      refused++;
      continue;
    }
    assert.ok(!reshaped && !untabled);
    const rebuilt = applyPatch(seed, patch);
    assert.equal(
      snapshotDigest(rebuilt),
      snapshotDigest(after),
      `round ${round}`,
    );
    built++;
    // A record whose row was not kept: refused, never guessed.
    const touched = [...delta.business.added, ...delta.business.changed][0];
    if (touched !== undefined) {
      const without = new Map(rows);
      without.set(touched.region, new Map());
      const r = patchFromDelta(digest, seed, delta, without, []);
      assert.ok("why" in r && /was not kept/.test(r.why), JSON.stringify(r));
    }
  }
  assert.ok(built > 100 && refused > 20, `${built} built, ${refused} refused`);
});
