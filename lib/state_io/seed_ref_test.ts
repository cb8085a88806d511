import assert from "node:assert/strict";
import { snapshotDigest } from "../state/delta.ts";
import { loadDefinition } from "../definition/load.ts";
import { rebuiltSeed, seedNotReproducible } from "./seed_ref.ts";
import { verifyReset } from "./verify_reset.ts";

const fixture = (name: string) =>
  new URL(`../../fixtures/${name}`, import.meta.url).pathname;

Deno.test("a seed calling random or a clock is never kept by reference", async () => {
  const def = await loadDefinition(fixture("unstable-seed"));
  const why = await seedNotReproducible(def);
  assert.match(why ?? "", /calls a clock or random function/);
  await assert.rejects(
    () => rebuiltSeed(def),
    /seed not rebuildable/,
  );
});

Deno.test("the seed rebuilt has the digest a verified reset gives", async () => {
  const def = await loadDefinition(fixture("liar-concurrent"));
  assert.equal(await seedNotReproducible(def), null);
  const v = await verifyReset(def);
  assert.ok(v.verified);
  assert.equal(snapshotDigest(await rebuiltSeed(def)), v.digests[0]);
});
