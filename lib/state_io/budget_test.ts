import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { AdapterDef, Definition } from "../definition/types.ts";
import { adapterDef, bareDefinition } from "../../tests/_definition.ts";
import { takeSnapshot } from "./snapshot.ts";
import {
  checkStateBudget,
  DEFAULT_STATE_BUDGET,
  overBudget,
  seedBudget,
  StateBudgetError,
} from "./budget.ts";

const fsAdapter: AdapterDef = adapterDef("fs", ".");

function definition(): Definition {
  return bareDefinition("/x", [fsAdapter], {
    name: "t",
    command: ["x"],
    timeouts: { start_s: 1, call_s: 1 },
  });
}

Deno.test("state budget: a 3 GiB sparse file is refused from metadata, before any read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-budget-" });
  try {
    using f = await Deno.open(`${dir}/sparse.bin`, {
      write: true,
      create: true,
    });
    await f.truncate(3 * 1024 * 1024 * 1024);
    const t0 = performance.now();
    await assert.rejects(
      () => takeSnapshot(definition(), dir),
      (e: unknown) =>
        e instanceof StateBudgetError &&
        /state budget exceeded: more than 1\.0 GiB \(3\.0 GiB seen so far\)/
          .test(e.message),
    );
    // Metadata only: nowhere near the 97 s a whole read took.
    assert.ok(performance.now() - t0 < 10_000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("state budget: too many entries is its own named reason", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-budget-" });
  try {
    for (let i = 0; i < 30; i++) await Deno.writeTextFile(`${dir}/f${i}`, "x");
    await assert.rejects(
      () => checkStateBudget(dir, { maxEntries: 20 }),
      /more than 20 files and directories/,
    );
    assert.deepEqual(await checkStateBudget(dir, { maxEntries: 30 }), {
      bytes: 30,
      entries: 30,
    });
    assert.equal(overBudget({ bytes: 30, entries: 30 }), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("snapshots hash a file larger than the streaming threshold chunk by chunk, to the same digest", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-budget-" });
  try {
    const bytes = new Uint8Array(20 * 1024 * 1024 + 13);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i & 0xff;
    await Deno.writeFile(`${dir}/big.bin`, bytes);
    const snap = await takeSnapshot(definition(), dir);
    const rec = snap.regions.flatMap((r) => r.records).find((r) =>
      JSON.stringify(r).includes("big.bin")
    );
    const want = createHash("sha256").update(bytes).digest("hex");
    assert.ok(rec, "the big file is observed");
    assert.match(JSON.stringify(rec), new RegExp(want));
    assert.match(JSON.stringify(rec), /"size":20971533/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("state budget: relative to the seed, a 1.5 GiB seed is within it and a server that adds more than 1 GiB is not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-budget-seed-" });
  const sparse = async (path: string, bytes: number) => {
    using f = await Deno.open(path, { write: true, create: true });
    await f.truncate(bytes);
  };
  try {
    const GiB = 1024 * 1024 * 1024;
    await Deno.mkdir(`${dir}/seed/sub`, { recursive: true });
    await sparse(`${dir}/seed/store.db`, 1.5 * GiB);
    await Deno.writeTextFile(`${dir}/seed/sub/a.txt`, "abc");
    const budget = await seedBudget(`${dir}/seed`);
    assert.deepEqual(budget, {
      maxBytes: DEFAULT_STATE_BUDGET.maxBytes + 1.5 * GiB + 3,
      maxEntries: DEFAULT_STATE_BUDGET.maxEntries + 3,
    });
    // The seed alone is over the default budget, within its own.
    await assert.rejects(
      () => checkStateBudget(`${dir}/seed`),
      StateBudgetError,
    );
    await checkStateBudget(`${dir}/seed`, budget);
    // A session that added 0.9 GiB is within it; 1.1 GiB is not.
    await sparse(`${dir}/seed/added.bin`, 0.9 * GiB);
    await checkStateBudget(`${dir}/seed`, budget);
    await sparse(`${dir}/seed/added.bin`, 1.1 * GiB);
    await assert.rejects(
      () => checkStateBudget(`${dir}/seed`, budget),
      /state budget exceeded: more than 2\.5 GiB \(2\.6 GiB seen so far\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
