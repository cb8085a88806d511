import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { loadDefinition } from "../definition/load.ts";
import { isSqliteImage, resetState, sqliteSeedImage } from "./reset.ts";
import { takeSnapshot } from "./snapshot.ts";

const ITEMS = new URL("../../tests/data/items", import.meta.url).pathname;

Deno.test("reset: materialises every seed at its label", async () => {
  const def = await loadDefinition(ITEMS);
  const state = `${await Deno.makeTempDir()}/state`;
  try {
    await resetState(def, state);
    const db = await Deno.readFile(`${state}/state.db`);
    assert.ok(isSqliteImage(db), "the SQL seed became a database image");
    assert.deepEqual(
      await Deno.readFile(`${state}/memory.jsonl`),
      await Deno.readFile(`${ITEMS}/memory.jsonl`),
    );
    assert.equal(await Deno.readTextFile(`${state}/notes/a.txt`), "hello\n");
    assert.equal(await Deno.readTextFile(`${state}/readme.txt`), "top\n");
    const snap = await takeSnapshot(def, state);
    const items = snap.regions.find((r) => r.name === "items");
    assert.deepEqual(items?.records.map((r) => r.key), ['["a"]', '["b"]']);
    const leftovers = [...Deno.readDirSync(state)].map((e) => e.name).filter((
      n,
    ) => n.includes("verity-tmp"));
    assert.deepEqual(leftovers, [], "no temporary files left behind");
  } finally {
    await Deno.remove(state.replace(/\/state$/, ""), { recursive: true });
  }
});

Deno.test("reset: two resets give byte-identical state", async () => {
  const def = await loadDefinition(ITEMS);
  const root = await Deno.makeTempDir();
  try {
    await resetState(def, `${root}/a`);
    await resetState(def, `${root}/b`);
    for (const f of ["state.db", "memory.jsonl", "notes/a.txt", "readme.txt"]) {
      assert.deepEqual(
        await Deno.readFile(`${root}/a/${f}`),
        await Deno.readFile(`${root}/b/${f}`),
        f,
      );
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("reset: a non-empty state directory is refused", async () => {
  const def = await loadDefinition(ITEMS);
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/old`, "x");
    await assert.rejects(
      resetState(def, dir),
      (e) => e instanceof UsageError && /is not empty/.test(e.message),
    );
    await Deno.remove(`${dir}/old`);
    await resetState(def, dir);
    assert.ok(
      (await Deno.stat(`${dir}/state.db`)).isFile,
      "an empty directory is fine",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reset: fs seeds keep permission bits and symbolic links", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/def/tree/ro`, { recursive: true });
    await Deno.writeTextFile(`${root}/def/tree/ro/f.txt`, "f");
    await Deno.writeTextFile(`${root}/def/tree/run.sh`, "#!/bin/sh\n");
    await Deno.chmod(`${root}/def/tree/run.sh`, 0o755);
    await Deno.chmod(`${root}/def/tree/ro`, 0o555);
    await Deno.symlink("run.sh", `${root}/def/tree/link`);
    await Deno.writeTextFile(
      `${root}/def/fixture.toml`,
      `[fixture]\nname = "t"\ncommand = ["x"]\n[state]\nlocations = ["fs:."]\n[[adapters]]\nkind = "fs"\nlabel = "."\nseed = "tree"\n`,
    );
    const def = await loadDefinition(`${root}/def`);
    await resetState(def, `${root}/state`);
    assert.equal(
      (await Deno.stat(`${root}/state/run.sh`)).mode! & 0o777,
      0o755,
    );
    assert.equal((await Deno.stat(`${root}/state/ro`)).mode! & 0o777, 0o555);
    assert.equal(await Deno.readLink(`${root}/state/link`), "run.sh");
    assert.equal(await Deno.readTextFile(`${root}/state/ro/f.txt`), "f");
    await Deno.chmod(`${root}/state/ro`, 0o755);
  } finally {
    await Deno.chmod(`${root}/def/tree/ro`, 0o755);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("reset: a stable SQL seed's image is reused after two equal builds; a random seed is rebuilt every time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-seed-cache-" });
  try {
    const def = {
      dir,
      file: `${dir}/fixture.toml`,
      adapters: [],
    };
    const stable = {
      kind: "sqlite",
      label: "a.db",
      seed: "stable.sql",
    } as unknown as Parameters<typeof sqliteSeedImage>[1];
    const random = { ...stable, seed: "random.sql" };
    await Deno.writeTextFile(
      `${dir}/stable.sql`,
      "CREATE TABLE t (x); INSERT INTO t VALUES (1);",
    );
    await Deno.writeTextFile(
      `${dir}/random.sql`,
      "CREATE TABLE t (x); INSERT INTO t VALUES (hex(randomblob(16)));",
    );
    const s1 = await sqliteSeedImage(def, stable, 0);
    const s2 = await sqliteSeedImage(def, stable, 0);
    const s3 = await sqliteSeedImage(def, stable, 0);
    assert.deepEqual(s1, s2);
    assert.notEqual(s2, s1, "the second build is a build");
    // The first build is remembered by its digest only (two images of a
    // large seed are never held at once): the second one is kept.
    assert.equal(s3, s2, "the third reset reuses the second image");
    const r = [];
    for (let i = 0; i < 4; i++) r.push(await sqliteSeedImage(def, random, 0));
    assert.equal(new Set(r.map((b) => b.join())).size, 4);
    // An edited seed is a new seed.
    await Deno.writeTextFile(
      `${dir}/stable.sql`,
      "CREATE TABLE t (x); INSERT INTO t VALUES (2);",
    );
    const e = await sqliteSeedImage(def, stable, 0);
    assert.notDeepEqual(e, s1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
