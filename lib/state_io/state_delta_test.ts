/**
 * Differential test: the page-by-page delta (`stateDelta`) equals the delta
 * of two full snapshots, over random edits of a seeded database (inserts,
 * updates, deletes, overflowing values, bulk inserts that split pages,
 * VACUUM, WAL mode with frames still in the `-wal`), with masks, in both
 * directions.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { AdapterDef, Definition } from "../definition/types.ts";
import { computeDelta } from "../state/delta.ts";
import { normalize } from "../state/normalize.ts";
import { stateDelta } from "./state_delta.ts";
import { takeSnapshot } from "./snapshot.ts";

function def(dir: string, adapter: Partial<AdapterDef> = {}): Definition {
  return {
    kind: "fixture",
    file: `${dir}/fixture.toml`,
    dir,
    digest: "",
    name: "diff",
    command: ["true"],
    env: {},
    timeouts: { start_s: 30, call_s: 30 },
    sandbox: null,
    read: [],
    cwd: null,
    allow: { sys: [], run: [] },
    locations: ["sqlite:state.db"],
    adapters: [{
      kind: "sqlite",
      label: "state.db",
      seed: null,
      business: ["items"],
      append_only: ["events"],
      mask: [{ region: "items", column: "updated", kind: "timestamp" }],
      key: {},
      ...adapter,
    }],
    tools: [],
    source: null,
  } as Definition;
}

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SCHEMA = `
  CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL, data BLOB, note TEXT, updated TEXT);
  CREATE TABLE events (item INTEGER, kind TEXT, at TEXT);
  CREATE INDEX items_name ON items(name);
  CREATE TABLE empty_one (a TEXT, b INTEGER);
`;

function seed(path: string, rows: number): void {
  const db = new DatabaseSync(path);
  db.exec(SCHEMA);
  db.exec("BEGIN");
  const ins = db.prepare("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?)");
  const ev = db.prepare("INSERT INTO events VALUES (?, ?, ?)");
  for (let i = 1; i <= rows; i++) {
    ins.run(
      i,
      `item-${i}`,
      i % 7 === 0 ? null : i * 3,
      i % 5 === 0 ? null : i / 8,
      i % 11 === 0 ? new Uint8Array([i & 255, 0, 255]) : null,
      i % 97 === 0 ? "long ".repeat(1200) + i : `n${i} é`,
      `2026-01-01T00:00:${String(i % 60).padStart(2, "0")}Z`,
    );
    ev.run(i, i % 2 ? "create" : "view", `t${i}`);
  }
  db.exec("COMMIT");
  db.close();
}

function edit(db: DatabaseSync, rnd: () => number, rows: number): string[] {
  const done: string[] = [];
  const pick = () => 1 + Math.floor(rnd() * rows * 1.1);
  const n = 1 + Math.floor(rnd() * 6);
  for (let k = 0; k < n; k++) {
    const r = rnd();
    if (r < 0.25) {
      db.prepare("UPDATE items SET qty = ?, price = NULL WHERE id = ?").run(
        Math.floor(rnd() * 1e6),
        pick(),
      );
      done.push("update");
    } else if (r < 0.35) {
      db.prepare("UPDATE items SET updated = ? WHERE id = ?").run(
        "2027-05-05T00:00:00Z",
        pick(),
      );
      done.push("update masked column");
    } else if (r < 0.45) {
      db.prepare("UPDATE items SET note = ? WHERE id = ?").run(
        "big ".repeat(2000 + Math.floor(rnd() * 500)),
        pick(),
      );
      done.push("overflow");
    } else if (r < 0.6) {
      db.prepare("DELETE FROM items WHERE id BETWEEN ? AND ?").run(
        pick(),
        pick() % 40 + pick(),
      );
      done.push("delete range");
    } else if (r < 0.7) {
      db.prepare("DELETE FROM events WHERE rowid % ? = 0").run(
        7 + Math.floor(rnd() * 50),
      );
      done.push("delete events");
    } else if (r < 0.82) {
      db.exec("BEGIN");
      const ins = db.prepare(
        "INSERT INTO items (name, qty, note) VALUES (?, ?, ?)",
      );
      const m = 1 + Math.floor(rnd() * 400);
      for (let i = 0; i < m; i++) ins.run(`new-${k}-${i}`, i, "x".repeat(i));
      db.exec("COMMIT");
      done.push("bulk insert");
    } else if (r < 0.9) {
      db.prepare("INSERT OR REPLACE INTO items (id, name) VALUES (?, ?)").run(
        pick(),
        "replaced",
      );
      done.push("replace");
    } else if (r < 0.95) {
      db.exec("INSERT INTO empty_one VALUES ('a', 1)");
      done.push("fill empty table");
    } else {
      db.exec("UPDATE events SET kind = 'changed' WHERE rowid % 13 = 1");
      done.push("update events");
    }
  }
  return done;
}

async function expectSame(
  d: Definition,
  a: string,
  b: string,
  why: string,
): Promise<boolean> {
  const full = computeDelta(
    normalize(await takeSnapshot(d, a), d),
    normalize(await takeSnapshot(d, b), d),
  );
  const fast = await stateDelta(d, a, b);
  assert.equal(
    fast.methods[0]?.method,
    "pages",
    `${why}: ${fast.methods[0]?.why}`,
  );
  assert.deepEqual(fast.delta, full, why);
  return !full.empty;
}

Deno.test("stateDelta equals the full snapshots' delta over random edits", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/seed`);
    const rows = 3000;
    seed(`${work}/seed/state.db`, rows);
    const d = def(work);
    const rnd = prng(19);
    let skipped = 0;
    let walFrames = 0;
    let nonEmpty = 0;
    for (let trial = 0; trial < 24; trial++) {
      const dir = `${work}/s${trial}`;
      await Deno.mkdir(dir);
      await Deno.copyFile(`${work}/seed/state.db`, `${dir}/state.db`);
      const db = new DatabaseSync(`${dir}/state.db`);
      const wal = trial % 3 === 1;
      if (wal) db.exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;");
      const done = edit(db, rnd, rows);
      if (trial % 5 === 4) {
        db.exec("VACUUM");
        done.push("VACUUM");
      }
      const why = `trial ${trial} (${wal ? "WAL, " : ""}${done.join(", ")})`;
      // WAL databases are compared while the connection is open: the
      // frames are still in the -wal.
      if (wal && (await Deno.stat(`${dir}/state.db-wal`)).size > 0) {
        walFrames++;
      }
      if (await expectSame(d, `${work}/seed`, dir, why)) nonEmpty++;
      await expectSame(d, dir, `${work}/seed`, why + ", reversed");
      const fast = await stateDelta(d, `${work}/seed`, dir);
      skipped += fast.methods[0]?.stats?.leavesSkipped ?? 0;
      db.close();
    }
    // The incremental path was really taken: unchanged leaves were skipped.
    assert.ok(skipped > 0);
    // Nearly every trial changed something (a delete range may be empty).
    assert.ok(nonEmpty >= 20, `${nonEmpty} trials with changes`);
    // And some sessions had their changes still in the WAL.
    assert.ok(walFrames >= 4, `${walFrames} WAL sessions with frames`);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: a one-row change decodes only the changed pages", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/a`);
    await Deno.mkdir(`${work}/b`);
    seed(`${work}/a/state.db`, 5000);
    await Deno.copyFile(`${work}/a/state.db`, `${work}/b/state.db`);
    const db = new DatabaseSync(`${work}/b/state.db`);
    db.exec("UPDATE items SET qty = 1 WHERE id = 2500");
    db.close();
    const d = def(work);
    const r = await stateDelta(d, `${work}/a`, `${work}/b`);
    const s = r.methods[0]!.stats!;
    assert.equal(r.delta.business.changed.length, 1);
    assert.equal(r.delta.business.changed[0]!.key, "[2500]");
    assert.equal(s.leavesRead, 2);
    assert.equal(s.rowsDecoded, 2);
    assert.ok(s.leavesSkipped > 50);
    assert.ok(s.pagesChanged <= 4, `${s.pagesChanged} pages changed`);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: tables not in rowid order fall back to snapshots, same delta", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/a`);
    await Deno.mkdir(`${work}/b`);
    const mk = (p: string, extra: string) => {
      const db = new DatabaseSync(p);
      db.exec(
        "CREATE TABLE tags (name TEXT PRIMARY KEY, n INTEGER); INSERT INTO tags VALUES ('b', 1), ('a', 2);" +
          extra,
      );
      db.close();
    };
    mk(`${work}/a/state.db`, "");
    mk(`${work}/b/state.db`, "UPDATE tags SET n = 3 WHERE name = 'a';");
    const d = def(work, { business: ["tags"], mask: [] });
    const fast = await stateDelta(d, `${work}/a`, `${work}/b`);
    assert.equal(fast.methods[0]?.method, "snapshots");
    assert.match(fast.methods[0]?.why ?? "", /not read in rowid order/);
    const full = computeDelta(
      normalize(await takeSnapshot(d, `${work}/a`), d),
      normalize(await takeSnapshot(d, `${work}/b`), d),
    );
    assert.deepEqual(fast.delta, full);
    assert.equal(full.business.changed.length, 1);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: a database on one side only, tables created and dropped", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/a`);
    await Deno.mkdir(`${work}/b`);
    seed(`${work}/b/state.db`, 200);
    const d = def(work);
    await expectSame(d, `${work}/a`, `${work}/b`, "created");
    await expectSame(d, `${work}/b`, `${work}/a`, "removed");
    await Deno.mkdir(`${work}/c`);
    await Deno.copyFile(`${work}/b/state.db`, `${work}/c/state.db`);
    const db = new DatabaseSync(`${work}/c/state.db`);
    db.exec(
      "DROP TABLE events; CREATE TABLE later (x INTEGER PRIMARY KEY, y TEXT); INSERT INTO later VALUES (1, 'y'); ALTER TABLE items ADD COLUMN extra TEXT",
    );
    db.close();
    await expectSame(d, `${work}/b`, `${work}/c`, "dropped, created, altered");
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: a change only in overflow pages, numeric column names", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/a`);
    await Deno.mkdir(`${work}/b`);
    const db = new DatabaseSync(`${work}/a/state.db`);
    db.exec(
      `CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT);
       CREATE TABLE odd ("10" TEXT, "2" INTEGER, x TEXT);
       INSERT INTO odd VALUES ('a', 1, 'x'), ('b', 2, 'y');`,
    );
    const ins = db.prepare("INSERT INTO items VALUES (?, ?)");
    for (let i = 1; i <= 50; i++) ins.run(i, "a".repeat(10000));
    db.close();
    await Deno.copyFile(`${work}/a/state.db`, `${work}/b/state.db`);
    const b = new DatabaseSync(`${work}/b/state.db`);
    // Same length, same local prefix: only the overflow pages change.
    b.exec(`UPDATE items SET body = '${"a".repeat(9999)}b' WHERE id = 20`);
    b.exec(`UPDATE odd SET "2" = 5, x = 'z' WHERE "10" = 'b'`);
    b.close();
    const d = def(work, { business: ["items", "odd"], mask: [] });
    await expectSame(d, `${work}/a`, `${work}/b`, "overflow only");
    const r = await stateDelta(d, `${work}/a`, `${work}/b`);
    assert.deepEqual(r.delta.business.changed.map((c) => c.key), [
      "[20]",
      "[2]",
    ]);
    // Field order as computeDelta gives it (integer-like names first).
    assert.deepEqual(r.delta.business.changed[1]!.fields.map((f) => f.field), [
      "2",
      "x",
    ]);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: a 20 MiB value read through a chain longer than the page memory", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/a`);
    await Deno.mkdir(`${work}/b`);
    const big = new Uint8Array(20 << 20).fill(7);
    const db = new DatabaseSync(`${work}/a/state.db`);
    db.exec(
      "CREATE TABLE items (id INTEGER PRIMARY KEY, body BLOB, n INTEGER)",
    );
    const ins = db.prepare("INSERT INTO items VALUES (?, ?, ?)");
    ins.run(1, "small", 1);
    ins.run(2, big, 2);
    ins.run(3, "after", 3);
    db.close();
    await Deno.copyFile(`${work}/a/state.db`, `${work}/b/state.db`);
    const b = new DatabaseSync(`${work}/b/state.db`);
    big[big.length - 1] = 8;
    b.prepare("UPDATE items SET body = ? WHERE id = 2").run(big);
    b.exec("UPDATE items SET n = 30 WHERE id = 3");
    b.close();
    const d = def(work, { business: ["items"], mask: [] });
    await expectSame(d, `${work}/a`, `${work}/b`, "long chain");
    const r = await stateDelta(d, `${work}/a`, `${work}/b`);
    assert.deepEqual(r.delta.business.changed.map((c) => c.key), [
      "[2]",
      "[3]",
    ]);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: json and fs by digest equal the full snapshots' delta", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    const d = {
      ...def(work),
      locations: ["json:memory.jsonl", "fs:files"],
      adapters: [{
        kind: "json",
        label: "memory.jsonl",
        seed: null,
        business: ["entity", "relation"],
        append_only: [],
        mask: [{ region: "entity", column: "meta.at", kind: "timestamp" }],
        key: { entity: ["name"] },
        region_by: "type",
      }, {
        kind: "fs",
        label: "files",
        seed: null,
        business: ["files"],
        append_only: [],
        mask: [],
        key: {},
      }],
    } as Definition;
    const rnd = prng(7);
    const lines = (n: number, salt: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        out.push(JSON.stringify({
          type: "entity",
          name: `e${i}`,
          observations: [`o${i}`, ...(i % 5 === salt % 5 ? ["extra"] : [])],
          meta: { at: `t${salt}` },
        }));
        if (i % 3 === 0) {
          out.push(JSON.stringify({
            type: "relation",
            from: `e${i}`,
            to: `e${(i + salt) % n}`,
            relationType: "knows",
          }));
        }
      }
      return out.join("\n") + "\n";
    };
    await Deno.mkdir(`${work}/seed/files`, { recursive: true });
    await Deno.writeTextFile(`${work}/seed/memory.jsonl`, lines(200, 0));
    await Deno.writeTextFile(`${work}/seed/files/a.txt`, "a");
    // Older than a second: the seed's parse is kept between comparisons.
    await new Promise((r) => setTimeout(r, 1100));
    let unparsed = 0;
    let reused = 0;
    for (let trial = 0; trial < 8; trial++) {
      const dir = `${work}/s${trial}`;
      await Deno.mkdir(`${dir}/files`, { recursive: true });
      const k = Math.floor(rnd() * 4);
      await Deno.writeTextFile(
        `${dir}/memory.jsonl`,
        k === 0 ? lines(200, 0) : k === 1 ? lines(190, 0) : lines(200, trial),
      );
      await Deno.writeTextFile(`${dir}/files/a.txt`, trial % 2 ? "a" : "b");
      if (trial % 3 === 0) await Deno.writeTextFile(`${dir}/files/n.txt`, "n");
      for (const [x, y] of [[`${work}/seed`, dir], [dir, `${work}/seed`]]) {
        const full = computeDelta(
          normalize(await takeSnapshot(d, x!), d),
          normalize(await takeSnapshot(d, y!), d),
        );
        const fast = await stateDelta(d, x!, y!);
        assert.deepEqual(
          fast.methods.map((m) => m.method),
          ["digest", "digest"],
        );
        reused += fast.methods[1]?.filesReused ?? 0;
        assert.deepEqual(fast.delta, full, `trial ${trial} (${k})`);
        if (k === 0 && full.empty && x === `${work}/seed`) unparsed++;
      }
    }
    assert.ok(unparsed >= 1, "some session left the document as seeded");
    // The seed's files were hashed once, then known by identity.
    assert.ok(reused >= 8, `${reused} files not read again`);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stateDelta: a malformed database is left to the snapshots, same delta", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-delta-" });
  try {
    await Deno.mkdir(`${work}/a`);
    await Deno.mkdir(`${work}/b`);
    seed(`${work}/a/state.db`, 100);
    const junk = new Uint8Array(8192).fill(0xee);
    junk.set(new TextEncoder().encode("SQLite format 3\0"));
    junk[16] = 0x10;
    junk[17] = 0;
    await Deno.writeFile(`${work}/b/state.db`, junk);
    const d = def(work);
    const full = computeDelta(
      normalize(await takeSnapshot(d, `${work}/a`), d),
      normalize(await takeSnapshot(d, `${work}/b`), d),
    );
    const fast = await stateDelta(d, `${work}/a`, `${work}/b`);
    assert.equal(fast.methods[0]?.method, "snapshots");
    assert.ok((fast.methods[0]?.why ?? "").length > 0);
    assert.deepEqual(fast.delta, full);
    assert.ok(fast.problems.after.length > 0, "the snapshot's problem is kept");
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
