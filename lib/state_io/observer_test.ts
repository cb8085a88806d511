import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { loadDefinition } from "../definition/load.ts";
import type { Definition } from "../definition/types.ts";
import { DeclaredStateObserver } from "./observer.ts";
import { resetState } from "./reset.ts";

const DATA = new URL("../../tests/data/", import.meta.url).pathname;

/** `n` state directories under `work`, each reset from `def`'s seed. */
async function resets(def: Definition, work: string, n: number) {
  const dirs: string[] = [];
  for (let i = 0; i < n; i++) {
    dirs.push(`${work}/s${i}`);
    await resetState(def, dirs[i]!);
  }
  return dirs;
}

function sql(dir: string, statement: string): void {
  const db = new DatabaseSync(`${dir}/state.db`);
  db.exec(statement);
  db.close();
}

Deno.test("declared observer: a verified SQLite seed is kept; an untouched state is the seed, a changed one a patch (the same change one state), applied to the seed's records", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-observer-" });
  const def = await loadDefinition(`${DATA}items-sqlite`);
  const observer = new DeclaredStateObserver(def, work);
  try {
    const [a, b, same, changed, again] = await resets(def, work, 5);
    const seed = await observer.seed(a!, b!);
    assert.equal(seed.verified, true);
    assert.equal(seed.problem, null);
    assert.equal(seed.keepsFirst, true);
    assert.equal(seed.digests[0], seed.digests[1]);
    assert.deepEqual(await observer.observe(same!), {
      digest: seed.digests[0],
      method: "seed",
      why: null,
    });
    sql(changed!, "UPDATE items SET value = 'new' WHERE key = 'a'");
    sql(again!, "UPDATE items SET value = 'new' WHERE key = 'a'");
    const o = await observer.observe(changed!);
    assert.equal(o.method, "patched");
    assert.equal(o.why, "the state differs from the seed");
    assert.notEqual(o.digest, seed.digests[0]);
    assert.deepEqual(await observer.observe(again!), o);
    const items = observer.states.get(o.digest)!.regions.find((r) =>
      r.name === "items"
    )!;
    const value = (k: string) =>
      items.records.find((r) => r.key === JSON.stringify([k]))?.value as
        | Record<string, unknown>
        | undefined;
    assert.equal(value("a")?.value, "new");
    assert.equal(value("b")?.value, "bee");
    // Neither state was held twice: the seed and the one patch.
    assert.equal(observer.states.size, 2);
  } finally {
    await observer.close();
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("declared observer: a seed two resets do not rebuild is not kept, and every state is snapshotted whole, with why", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-observer-" });
  const def = await loadDefinition(`${DATA}random-seed`);
  const observer = new DeclaredStateObserver(def, work);
  try {
    const [a, b, c] = await resets(def, work, 3);
    const seed = await observer.seed(a!, b!);
    assert.equal(seed.verified, false);
    assert.equal(seed.problem, "two resets produced different state");
    assert.equal(seed.keepsFirst, false);
    assert.notEqual(seed.digests[0], seed.digests[1]);
    const o = await observer.observe(c!);
    assert.equal(o.method, "snapshot");
    assert.equal(o.why, "no seed to compare with: the reset is not verified");
    assert.ok(!seed.digests.includes(o.digest));
    assert.equal(observer.states.size, 3);
  } finally {
    await observer.close();
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("declared observer: a state that cannot be compared page by page is snapshotted whole, and says why", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-observer-" });
  const def = await loadDefinition(`${DATA}items-sqlite`);
  const observer = new DeclaredStateObserver(def, work);
  try {
    const [a, b, broken] = await resets(def, work, 3);
    await observer.seed(a!, b!);
    // Not a database any more: compared by snapshots, not pages, so not
    // kept as a patch; the snapshot names the problem.
    await Deno.writeTextFile(`${broken}/state.db`, "not a database");
    const o = await observer.observe(broken!);
    assert.equal(o.method, "snapshot");
    assert.equal(
      o.why,
      "the state differs from the seed; not kept as a patch: state.db was compared by snapshots",
    );
    assert.ok(observer.states.get(o.digest)!.problems.length > 0);
  } finally {
    await observer.close();
    await Deno.remove(work, { recursive: true });
  }
});
