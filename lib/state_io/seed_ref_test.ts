import assert from "node:assert/strict";
import { loadDefinition } from "../definition/load.ts";
import { rebuildSeed, seedNotReproducible } from "./seed_ref.ts";
import { verifyReset } from "./verify_reset.ts";

const fixture = (name: string) =>
  new URL(`../../fixtures/${name}`, import.meta.url).pathname;

Deno.test("a seed calling random or a clock is never kept by reference", async () => {
  const def = await loadDefinition(fixture("unstable-seed"));
  const why = await seedNotReproducible(def);
  assert.match(why ?? "", /calls a clock or random function/);
  await assert.rejects(() => rebuildSeed(def), /seed not rebuildable/);
});

Deno.test("rebuildSeed gives the snapshot a verified reset gives", async () => {
  const def = await loadDefinition(fixture("liar-concurrent"));
  assert.equal(await seedNotReproducible(def), null);
  const v = await verifyReset(def);
  assert.ok(v.verified);
  const { digest, snapshot } = await rebuildSeed(def);
  assert.equal(digest, v.digests[0]);
  assert.deepEqual(snapshot, v.seeded);
});
