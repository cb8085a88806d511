import assert from "node:assert/strict";
import { inShard, parseShardSpec, shardOf } from "./shard.ts";
import { InputError } from "../errors.ts";

const IDS = Array.from(
  { length: 200 },
  (_, i) => ({ id: `pkg-${i}@1.0.${i}` }),
);

Deno.test("shards partition the list whatever its order", () => {
  const n = 7;
  const forward = Array.from(
    { length: n },
    (_, k) => inShard(IDS, { k: k + 1, n }),
  );
  const reversed = [...IDS].reverse();
  const back = Array.from(
    { length: n },
    (_, k) => inShard(reversed, { k: k + 1, n }),
  );
  const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();
  for (let k = 0; k < n; k++) {
    assert.deepEqual(ids(back[k]!), ids(forward[k]!), `shard ${k + 1}`);
    assert.ok(forward[k]!.length > 0, `shard ${k + 1} of 7 holds some of 200`);
  }
  // every server in exactly one shard
  assert.equal(forward.flat().length, IDS.length);
  assert.equal(new Set(forward.flat().map((x) => x.id)).size, IDS.length);
  // a server's shard does not depend on the others
  assert.equal(
    shardOf("pkg-3@1.0.3", n),
    forward.findIndex((s) => s.some((x) => x.id === "pkg-3@1.0.3")) + 1,
  );
});

Deno.test("parseShardSpec: k/N with 1 <= k <= N, else a CensusError naming the value", () => {
  assert.deepEqual(parseShardSpec("1/1", "--shard"), { k: 1, n: 1 });
  assert.deepEqual(parseShardSpec("4/4", "--shard"), { k: 4, n: 4 });
  for (
    const bad of ["0/4", "5/4", "x", "1/0", "-1/4", "1/4/2", "01/4", " 1/4"]
  ) {
    assert.throws(
      () => parseShardSpec(bad, "--shard"),
      (e: unknown) =>
        e instanceof InputError && e.message.includes(JSON.stringify(bad)),
      bad,
    );
  }
});
