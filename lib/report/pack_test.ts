import assert from "node:assert/strict";

const assertEquals = (a: unknown, b: unknown, m?: string) =>
  assert.deepEqual(a, b, m);
const assertThrows = (fn: () => unknown, _t: unknown, msg: string) =>
  assert.throws(fn, new RegExp(msg));
import { snapshotDigest } from "../state/delta.ts";
import { canonicalStateJson, compareKeys } from "../state/keys.ts";
import type { Region, Snapshot, StateRecord } from "../state/types.ts";
import { applyPatch, diffSnapshot } from "../state/patched.ts";
import {
  frameDigest,
  openReport,
  packReport,
  reportText,
  seedReferenceOf,
  unpackReport,
} from "./pack.ts";
import { verifyReport } from "./verify.ts";
import { readEvidenceText } from "../evidence/files.ts";
import type { Report } from "./report.ts";

/** A published audit (verity.report/1): real snapshots, patches and frames. */
const PUBLISHED = new URL(
  "../../results/sqlite-npx-2026-11-30/report.json.gz",
  import.meta.url,
).pathname;
const published = JSON.parse((await readEvidenceText(PUBLISHED)).text);
const testReport = (): Report => structuredClone(published) as Report;

/** A small deterministic generator (no clock, no Math.random). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function region(
  name: string,
  keys: number[],
  val: (k: number) => unknown,
  columns?: string[],
): Region {
  const records: StateRecord[] = keys.map((k) => ({
    key: `[${k}]`,
    value: { v: val(k) },
  }));
  records.sort((a, b) => compareKeys(a.key, b.key));
  return {
    adapter: "db.sqlite",
    kind: "sqlite",
    name,
    category: "business",
    records,
    ...(columns ? { columns } : {}),
  };
}

/** A random edit of a snapshot: rows changed, added, removed; regions added or dropped. */
function edit(base: Snapshot, r: () => number): Snapshot {
  const regions: Region[] = [];
  for (const reg of base.regions) {
    if (r() < 0.1) continue; // region dropped
    const recs = new Map(reg.records.map((x) => [x.key, x]));
    const n = Math.floor(r() * 6);
    for (let i = 0; i < n; i++) {
      const k = Math.floor(r() * 60);
      const what = r();
      if (what < 0.33) recs.delete(`[${k}]`);
      else recs.set(`[${k}]`, { key: `[${k}]`, value: { v: what } });
    }
    const records = [...recs.values()].sort((a, b) =>
      compareKeys(a.key, b.key)
    );
    regions.push({
      ...reg,
      records,
      ...(r() < 0.1 ? { columns: ["v", "w"] } : {}),
    });
  }
  if (r() < 0.2) regions.push(region("zz_new", [1, 2, 3], (k) => k));
  return { regions, problems: r() < 0.1 ? ["something unreadable"] : [] };
}

Deno.test("applyPatch(diffSnapshot) rebuilds every random edit exactly (differential)", () => {
  const r = rng(42);
  for (let round = 0; round < 300; round++) {
    const keys = Array.from({ length: 40 }, (_, i) => i * 2);
    const base: Snapshot = {
      regions: [
        region("a", keys, (k) => k * 10, ["v"]),
        region("b", keys.slice(0, 5), (k) => ({ nested: [k] })),
      ],
      problems: [],
    };
    const after = edit(base, r);
    const patch = diffSnapshot(snapshotDigest(base), base, after);
    const rebuilt = applyPatch(base, patch);
    assertEquals(snapshotDigest(rebuilt), snapshotDigest(after));
    assertEquals(canonicalStateJson(rebuilt), canonicalStateJson(after));
    // Only what differs is stored.
    const stored = patch.regions.reduce((n, x) => n + x.put.length, 0);
    assert(stored <= after.regions.reduce((n, x) => n + x.records.length, 0));
  }
});

Deno.test("a patch of an unchanged snapshot stores no record", () => {
  const base: Snapshot = {
    regions: [region("a", [1, 2, 3], (k) => k)],
    problems: [],
  };
  const copy = structuredClone(base);
  const p = diffSnapshot("sha256:x", base, copy);
  assertEquals(p.regions[0]!.put, []);
  assertEquals(p.regions[0]!.drop, []);
});

Deno.test("applyPatch refuses unsorted keys and drops the base lacks", () => {
  const base: Snapshot = {
    regions: [region("a", [1, 2, 3], (k) => k)],
    problems: [],
  };
  const p = diffSnapshot("sha256:x", base, base);
  assertThrows(
    () =>
      applyPatch(base, {
        ...p,
        regions: [{ ...p.regions[0]!, drop: ["[9]"] }],
      }),
    RangeError,
    "does not hold",
  );
  assertThrows(
    () =>
      applyPatch(base, {
        ...p,
        regions: [{
          ...p.regions[0]!,
          put: [{ key: "[3]", value: {} }, { key: "[1]", value: {} }],
        }],
      }),
    RangeError,
    "key order",
  );
});

Deno.test("packed report: its text parses to the same value, unpacks to the report, verifies", () => {
  const report = testReport();
  const packed = packReport(report);
  const text = reportText(packed);
  assertEquals(JSON.parse(text), JSON.parse(JSON.stringify(packed)));
  const parsed = JSON.parse(text);
  assertEquals(parsed.schema, "verity.report/2");
  const { report: back, problems } = unpackReport(parsed);
  assertEquals(problems, []);
  assertEquals(
    canonicalStateJson({ ...back, schema: "x" }),
    canonicalStateJson({ ...JSON.parse(JSON.stringify(report)), schema: "x" }),
  );
  assertEquals(verifyReport(report), []);
  assertEquals(verifyReport(parsed), []);
  // The seed is whole, every other snapshot a patch against it.
  const seed = report.observations.definition.seedDigest!;
  for (const [d, s] of Object.entries(parsed.snapshots)) {
    assertEquals("base" in (s as object), d !== seed, d);
  }
  // Frames are stored once by digest.
  const all = report.sessions.flatMap((s) => s.callResponses).filter((x) =>
    x !== null
  );
  assertEquals(Object.keys(parsed.frames).length, new Set(all).size);
});

Deno.test("packed report: an edited frame or a frame nobody names is refused", () => {
  const parsed = JSON.parse(
    reportText(packReport(testReport())),
  );
  const d = Object.keys(parsed.frames)[0] as string;
  assert(d !== undefined, "the test report has a frame");
  parsed.frames[d] = parsed.frames[d] + " ";
  parsed.frames[frameDigest("orphan")] = "orphan";
  const problems = verifyReport(parsed).map((p) => p.where);
  assert(problems.includes(`frames.${d}`), problems.join());
  assert(problems.includes(`frames.${frameDigest("orphan")}`));
  const opened = openReport(parsed);
  assert("problem" in opened);
});

Deno.test("a report of another schema is not unpacked", () => {
  const r = testReport();
  const opened = openReport(r);
  assert("report" in opened && opened.report === (r as unknown));
});

Deno.test("seed by reference (verity.report/3): no seed records stored; verify needs the rebuilt seed and checks its digest", () => {
  const report = testReport();
  const seedDigest = report.observations.definition.seedDigest!;
  const seedSnap = report.snapshots[seedDigest]! as Snapshot;
  const ref = { definition: report.provenance.definition.digest, file: "x" };
  const parsed = JSON.parse(
    reportText(packReport(report, { seedRef: ref })),
  );
  assertEquals(parsed.schema, "verity.report/3");
  assertEquals(parsed.snapshots[seedDigest], { seedRef: ref });
  assertEquals(seedReferenceOf(parsed), { digest: seedDigest, ref });
  // Every other snapshot is still a patch against the seed.
  for (const [d, s] of Object.entries(parsed.snapshots)) {
    if (d !== seedDigest) {
      assertEquals((s as { base: string }).base, seedDigest);
    }
  }
  // The rebuilt seed given: everything re-derives.
  assertEquals(verifyReport(parsed, { seed: seedSnap }), []);
  // Without it nothing that reads the state can be rebuilt: never all clear.
  const without = verifyReport(parsed).map((p) => p.where);
  assert(without.includes(`snapshots.${seedDigest}`), without.join());
  // A seed that is not the one the report names: its digest is re-derived.
  const other: Snapshot = {
    ...seedSnap,
    regions: seedSnap.regions.map((r, i) =>
      i === seedSnap.regions.findIndex((x) => x.records.length > 0)
        ? { ...r, records: r.records.slice(1) }
        : r
    ),
  };
  const wrong = verifyReport(parsed, { seed: other }).map((p) => p.where);
  assert(wrong.includes(`snapshots.${seedDigest}`), wrong.join());
  // Showing the report does not need the seed.
  const opened = openReport(parsed);
  assert("report" in opened, JSON.stringify(opened));
  // A seed reference in a /2 report is refused.
  const two = { ...parsed, schema: "verity.report/2" };
  assert(unpackReport(two, { seed: seedSnap }).problems.length > 0);
  // Without a seed reference option the form is /2 as before.
  assertEquals(packReport(report, { seedRef: null }).schema, "verity.report/2");
});

Deno.test("a stored snapshot posing as the seed's header is refused", () => {
  const seedDigest = testReport().observations.definition.seedDigest!;
  // A stored snapshot posing as a header (a digest of its own) is never
  // taken at its word.
  const forged = testReport() as unknown as {
    snapshots: Record<string, Record<string, unknown>>;
  };
  forged.snapshots[seedDigest]!.digest = seedDigest;
  assert(
    verifyReport(forged).some((p) =>
      p.where === `snapshots.${seedDigest}` &&
      /not a whole snapshot/.test(p.message)
    ),
  );
});
