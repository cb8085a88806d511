import assert from "node:assert/strict";
import { loadDefinition } from "../definition/load.ts";
import { seedNotReproducible, streamRebuiltSeed } from "./seed_ref.ts";
import { verifyReset } from "./verify_reset.ts";

const fixture = (name: string) =>
  new URL(`../../fixtures/${name}`, import.meta.url).pathname;

Deno.test("a seed calling random or a clock is never kept by reference", async () => {
  const def = await loadDefinition(fixture("unstable-seed"));
  const why = await seedNotReproducible(def);
  assert.match(why ?? "", /calls a clock or random function/);
  await assert.rejects(
    () => streamRebuiltSeed(def, new Map()),
    /seed not rebuildable/,
  );
});

Deno.test("the seed rebuilt and streamed has the digest a verified reset gives", async () => {
  const def = await loadDefinition(fixture("liar-concurrent"));
  assert.equal(await seedNotReproducible(def), null);
  const v = await verifyReset(def);
  assert.ok(v.verified);
  const { header } = await streamRebuiltSeed(def, new Map());
  assert.equal(header.digest, v.digests[0]);
});
