import assert from "node:assert/strict";
import { InputError } from "../errors.ts";
import { loadDefinition } from "../definition/load.ts";
import {
  isSqliteImage,
  resetState,
  seedCacheDirectory,
  sqliteSeedImage,
  writeSqliteSeed,
} from "./reset.ts";
import { takeSnapshot } from "./snapshot.ts";
import { parseOwner, selfOwner } from "../common/owner.ts";

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
      (e) => e instanceof InputError && /is not empty/.test(e.message),
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

Deno.test("reset: a stable SQL seed's database is copied after two equal builds; a random seed is rebuilt every time", async () => {
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
    } as unknown as Parameters<typeof writeSqliteSeed>[1];
    const random = { ...stable, seed: "random.sql" };
    await Deno.writeTextFile(
      `${dir}/stable.sql`,
      "CREATE TABLE t (x); INSERT INTO t VALUES (1);",
    );
    await Deno.writeTextFile(
      `${dir}/random.sql`,
      "CREATE TABLE t (x); INSERT INTO t VALUES (hex(randomblob(16)));",
    );
    const out = (n: number) => `${dir}/out/${n}/a.db`;
    const how = [];
    for (let n = 0; n < 3; n++) {
      how.push(await writeSqliteSeed(def, stable, 0, out(n)));
    }
    assert.deepEqual(how, ["built", "built", "cached"]);
    // A cached build removed under the process is built again.
    const cache = seedCacheDirectory();
    assert.ok(cache !== null);
    // It names this process as its owner, so that it is removed after a
    // SIGKILL (cleanScratch).
    assert.deepEqual(
      parseOwner(Deno.readTextFileSync(`${cache}/.owner`)),
      selfOwner(),
    );
    const { createHash } = await import("node:crypto");
    const digest = createHash("sha256").update(Deno.readFileSync(out(1)))
      .digest("hex");
    Deno.removeSync(`${cache}/${digest}.db`);
    assert.equal(
      await writeSqliteSeed(def, stable, 0, `${dir}/out/x/a.db`),
      "built",
    );
    const [s1, s2, s3] = [0, 1, 2].map((n) => Deno.readFileSync(out(n)));
    assert.ok(isSqliteImage(s1!));
    assert.deepEqual(s1, s2);
    assert.deepEqual(s3, s2);
    const r = [];
    for (let n = 3; n < 7; n++) {
      assert.equal(await writeSqliteSeed(def, random, 0, out(n)), "built");
      r.push(Deno.readFileSync(out(n)).join());
    }
    assert.equal(new Set(r).size, 4);
    // An edited seed is a new seed.
    await Deno.writeTextFile(
      `${dir}/stable.sql`,
      "CREATE TABLE t (x); INSERT INTO t VALUES (2);",
    );
    assert.equal(await writeSqliteSeed(def, stable, 0, out(7)), "built");
    assert.notDeepEqual(Deno.readFileSync(out(7)), s1);
    assert.deepEqual(
      await sqliteSeedImage(def, stable, 0),
      Deno.readFileSync(out(7)),
    );
    // Nothing but the databases is left beside them.
    for (let n = 0; n < 8; n++) {
      assert.deepEqual(
        [...Deno.readDirSync(`${dir}/out/${n}`)].map((e) => e.name),
        ["a.db"],
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reset: a SQL seed gives a rollback-journal database of its tables (WAL is not kept)", async () => {
  const { readSqlite } = await import("../../adapters/sqlite/read.ts");
  const dir = await Deno.makeTempDir({ prefix: "verity-seed-engine-" });
  try {
    const def = { dir, file: `${dir}/fixture.toml`, adapters: [] };
    const scripts = [
      "CREATE TABLE t (x); INSERT INTO t VALUES (1);",
      "PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
      "PRAGMA page_size=1024; CREATE TABLE w (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID; CREATE INDEX i ON w (v);" +
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000) INSERT INTO w SELECT 'k' || x, zeroblob(x % 700) FROM c;",
      "PRAGMA user_version = 7; CREATE TABLE e (x); -- only a comment after",
      "",
      "-- a comment only\n",
      ...[
        "honest-readonly",
        "liar-destructive",
        "native-python",
        "liar-openworld",
      ].map((f) =>
        Deno.readTextFileSync(
          new URL(`../../fixtures/${f}/seed.sql`, import.meta.url),
        )
      ),
    ];
    let n = 0;
    for (const sql of scripts) {
      await Deno.writeTextFile(`${dir}/s${n}.sql`, sql);
      const a = {
        kind: "sqlite",
        label: "x.db",
        seed: `s${n}.sql`,
      } as unknown as Parameters<typeof writeSqliteSeed>[1];
      await writeSqliteSeed(def, a, 0, `${dir}/o${n}.db`);
      const mine = Deno.readFileSync(`${dir}/o${n}.db`);
      // At least one page (a script that wrote nothing: the header).
      assert.ok(mine.length >= 512, `script ${n}: ${mine.length} bytes`);
      const obs = readSqlite(mine);
      assert.deepEqual(obs.problems, [], `script ${n}`);
      const tables = [
        ...sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/gi),
      ]
        .map((m) => m[1]!);
      for (const t of tables) {
        assert.ok(obs.tables.some((x) => x.name === t), `script ${n}: ${t}`);
      }
      assert.equal(
        mine[18],
        1,
        `script ${n}: rollback journal (write version)`,
      );
      assert.equal(mine[19], 1, `script ${n}: rollback journal (read version)`);
      n++;
    }
    // A failing script is the seed's error, naming it.
    await Deno.writeTextFile(
      `${dir}/bad.sql`,
      "CREATE TABLE t (x); INSERT INTO nope VALUES (1);",
    );
    const bad = {
      kind: "sqlite",
      label: "x.db",
      seed: "bad.sql",
    } as unknown as Parameters<typeof writeSqliteSeed>[1];
    await assert.rejects(
      writeSqliteSeed(def, bad, 3, `${dir}/bad/x.db`),
      /adapters\[3\]\.seed: SQL seed bad\.sql failed: no such table: nope/,
    );
    assert.deepEqual(
      [...Deno.readDirSync(`${dir}/bad`)],
      [],
      "nothing left of a failed build",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
