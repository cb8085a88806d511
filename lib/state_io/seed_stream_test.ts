/**
 * Differential test: `streamSeed` (the seed's digest and patched digests
 * streamed from pages) equals `snapshotDigest` of the full normalized
 * snapshot and of `applyPatch(seed, patch)`, over random databases (rowid,
 * INTEGER PRIMARY KEY, TEXT/composite/INT/DESC primary keys, WITHOUT ROWID
 * with integer, text, blob, composite, mixed-type, NOCASE and RTRIM+DESC
 * keys; NULLs, blobs, reals, big integers, overflow pages, WAL frames,
 * VACUUM, masks) beside json and fs adapters, and random patches (taken
 * from edited copies, and synthetic: new regions, drops, puts, malformed).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { Definition } from "../definition/types.ts";
import { adapterDef, bareDefinition } from "../../tests/_definition.ts";
import { snapshotDigest } from "../state/delta.ts";
import { normalize } from "../state/normalize.ts";
import type { Snapshot, StateRecord } from "../state/types.ts";
import {
  applyPatch,
  diffSnapshot,
  type SnapshotPatch,
} from "../report/pack.ts";
import { takeSnapshot } from "./snapshot.ts";
import { createPrng } from "../reality/prng.ts";
import { streamSeed } from "./seed_stream.ts";

/** A small deterministic PRNG: the project's mulberry32 (lib/reality/prng.ts). */
const prng = (seed: number): () => number => createPrng(seed).next;

const SCHEMA = `
  CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL, data BLOB, note TEXT, updated TEXT);
  CREATE TABLE events (item INTEGER, kind TEXT, at TEXT);
  CREATE TABLE empty_one (a TEXT, b INTEGER);
  CREATE TABLE r_text (k TEXT PRIMARY KEY, v TEXT, body TEXT);
  CREATE TABLE r_comp (a TEXT, b INTEGER, v TEXT, PRIMARY KEY (b, a));
  CREATE TABLE r_desc (id INTEGER PRIMARY KEY DESC, v TEXT);
  CREATE TABLE kv_int (k INTEGER PRIMARY KEY, v TEXT, n INTEGER) WITHOUT ROWID;
  CREATE TABLE kv_text (k TEXT PRIMARY KEY, v TEXT, body TEXT) WITHOUT ROWID;
  CREATE TABLE kv_blob (k BLOB PRIMARY KEY, v INTEGER) WITHOUT ROWID;
  CREATE TABLE kv_any (k PRIMARY KEY, v) WITHOUT ROWID;
  CREATE TABLE kv_nocase (k TEXT COLLATE NOCASE PRIMARY KEY, v TEXT) WITHOUT ROWID;
  CREATE TABLE kv_desc (a INTEGER, b TEXT COLLATE RTRIM, v TEXT, PRIMARY KEY (a DESC, b)) WITHOUT ROWID;
  CREATE INDEX items_name ON items(name);
`;

function anyKey(i: number): string | number | bigint | Uint8Array {
  switch (i % 4) {
    case 0:
      return i % 8 === 0 ? (BigInt(i % 4096) << 50n) + 1n : i;
    case 1:
      return i % 9 === 0 ? (i % 4096) * 2 ** 50 : i + 0.5;
    case 2:
      return `t${i} é`;
    default:
      return new Uint8Array([i >> 8, i & 255, 0]);
  }
}

function seedDb(path: string, rows: number, rnd: () => number): void {
  const db = new DatabaseSync(path);
  db.exec(SCHEMA);
  db.exec("BEGIN");
  const p = (sql: string) => db.prepare(sql);
  const items = p("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?)");
  const events = p("INSERT INTO events VALUES (?, ?, ?)");
  const rText = p("INSERT INTO r_text VALUES (?, ?, ?)");
  const rComp = p("INSERT INTO r_comp VALUES (?, ?, ?)");
  const rDesc = p("INSERT INTO r_desc VALUES (?, ?)");
  const kvInt = p("INSERT INTO kv_int VALUES (?, ?, ?)");
  const kvText = p("INSERT INTO kv_text VALUES (?, ?, ?)");
  const kvBlob = p("INSERT INTO kv_blob VALUES (?, ?)");
  const kvAny = p("INSERT INTO kv_any VALUES (?, ?)");
  const kvNocase = p("INSERT INTO kv_nocase VALUES (?, ?)");
  const kvDesc = p("INSERT INTO kv_desc VALUES (?, ?, ?)");
  for (let i = 1; i <= rows; i++) {
    const j = (i * 7919) % (rows + 1);
    items.run(
      i,
      `item-${i}`,
      i % 7 === 0 ? null : i % 13 === 0 ? 2n ** 60n + BigInt(i) : i * 3,
      i % 5 === 0 ? null : i % 17 === 0 ? -0.1 * i : i / 8,
      i % 11 === 0 ? new Uint8Array([i & 255, 0, 255]) : null,
      i % 97 === 0
        ? "long ".repeat(1200 + Math.floor(rnd() * 900)) + i
        : `n${i} é ☃ 😀`,
      `2026-01-01T00:00:${String(i % 60).padStart(2, "0")}Z`,
    );
    events.run(i, i % 2 ? "create" : "view", i % 3 ? `t${i}` : null);
    rText.run(
      j % 53 === 0 ? `long-${j}-` + "k".repeat(1500 + j) : `key-${j}`,
      `v${i}`,
      i % 61 === 0 ? "body ".repeat(1000) : `b${i}`,
    );
    rComp.run(`a${j}`, j % 101, `v${i}`);
    rDesc.run(j * 5, `v${i}`);
    kvInt.run(i * 3 - 2000, `v${i}`, i % 7 ? i : null);
    kvText.run(
      i % 53 === 0 ? `long-${i}-` + "k".repeat(1500 + i) : `key-${i}`,
      `v${i % 10}`,
      i % 61 === 0 ? "body ".repeat(1000) : `b${i}`,
    );
    kvBlob.run(new Uint8Array([i >> 8, i & 255, (i * 7) & 255, 0]), i);
    kvAny.run(anyKey(i), i);
    kvNocase.run(i % 2 ? `Name${i}` : `name${i}`, `v${i}`);
    kvDesc.run(i % 50, `b${i}` + " ".repeat(i % 3), `v${i}`);
  }
  db.exec("COMMIT");
  db.close();
}

/** Random edits of every table (a session's changes). */
function edit(db: DatabaseSync, rnd: () => number, rows: number): void {
  const pick = () => 1 + Math.floor(rnd() * rows * 1.1);
  const run = (sql: string, ...args: (string | number | null)[]) =>
    db.prepare(sql).run(...args);
  const n = 1 + Math.floor(rnd() * 8);
  for (let k = 0; k < n; k++) {
    switch (Math.floor(rnd() * 10)) {
      case 0:
        run("UPDATE items SET qty = ?, price = NULL WHERE id = ?", k, pick());
        run("UPDATE items SET updated = 'x' WHERE id = ?", pick());
        break;
      case 1:
        run("DELETE FROM items WHERE id BETWEEN ? AND ?", pick(), pick());
        run("DELETE FROM events WHERE rowid % ? = 0", 7 + k);
        break;
      case 2:
        for (let i = 0; i < 50; i++) {
          run(
            "INSERT INTO items (name, note) VALUES (?, ?)",
            `new${i}`,
            "y".repeat(i * 50),
          );
        }
        break;
      case 3:
        run(
          "INSERT OR REPLACE INTO r_text VALUES (?, 'r', 'x')",
          `key-${pick()}`,
        );
        run("DELETE FROM r_comp WHERE b = ?", pick() % 101);
        break;
      case 4:
        run("UPDATE kv_int SET k = k + 1 WHERE k = ?", pick() * 3 - 2000);
        run(
          "INSERT OR REPLACE INTO kv_text VALUES (?, 'n', ?)",
          `zz${k}`,
          null,
        );
        break;
      case 5:
        run(
          "UPDATE kv_nocase SET k = upper(k) WHERE k = ?",
          `name${pick() & ~1}`,
        );
        run("INSERT OR REPLACE INTO kv_any VALUES (?, 'i')", pick() * 4);
        break;
      case 6:
        run("UPDATE kv_desc SET b = b || ' ' WHERE a = ?", pick() % 50);
        run("INSERT OR REPLACE INTO r_desc VALUES (?, 'd')", pick() * 5 + 1);
        break;
      case 7:
        run("INSERT INTO empty_one VALUES ('a', 1)");
        run(
          "UPDATE items SET note = ? WHERE id = ?",
          "big ".repeat(2000),
          pick(),
        );
        break;
      case 8:
        run("DELETE FROM kv_blob WHERE v % ? = 0", 5 + k);
        break;
      default:
        run("UPDATE events SET kind = NULL WHERE rowid % 13 = ?", k);
    }
  }
}

function definition(dir: string): Definition {
  return bareDefinition(dir, [
    adapterDef("sqlite", "state.db", {
      business: ["items", "kv_int", "r_text"],
      append_only: ["events"],
      mask: [
        { region: "items", column: "updated", kind: "timestamp" },
        { region: "kv_text", column: "body", kind: "uuid" },
      ],
    }),
    adapterDef("json", "data.json"),
    adapterDef("sqlite", "other.db"),
  ], { name: "stream" });
}

/** Synthetic patches over a snapshot: new regions, drops, puts, and malformed ones. */
function randomPatches(
  base: Snapshot,
  digest: string,
  rnd: () => number,
): SnapshotPatch[] {
  const out: SnapshotPatch[] = [];
  for (let t = 0; t < 6; t++) {
    const regions = base.regions.filter(() => rnd() < 0.8).map((r) => {
      const put: StateRecord[] = [];
      const drop: string[] = [];
      for (const rec of r.records) {
        const x = rnd();
        if (x < 0.01) drop.push(rec.key);
        else if (x < 0.02) {
          put.push({ key: rec.key, value: { ...rec.value, extra: t } });
        }
      }
      if (r.kind === "sqlite" && rnd() < 0.5) {
        put.push({ key: "[999999999]", value: { added: true } });
      }
      return {
        adapter: r.adapter,
        kind: r.kind,
        name: r.name,
        category: r.category,
        ...(r.columns ? { columns: r.columns } : {}),
        put,
        drop,
      };
    });
    if (rnd() < 0.5) {
      regions.push({
        adapter: "zzz",
        kind: "sqlite",
        name: "new",
        category: "business",
        put: [{ key: "[1]", value: { a: null } }],
        drop: [],
      });
    }
    if (t === 5) regions.reverse();
    out.push({ base: digest, problems: t % 2 ? ["p"] : [], regions });
  }
  // Malformed: a drop the base lacks, keys out of order.
  const r0 = base.regions.find((r) => r.records.length > 2)!;
  const head = {
    adapter: r0.adapter,
    kind: r0.kind,
    name: r0.name,
    category: r0.category,
  };
  out.push({
    base: digest,
    problems: [],
    regions: [{ ...head, put: [], drop: ['["nope"]'] }],
  });
  out.push({
    base: digest,
    problems: [],
    regions: [{
      ...head,
      put: [r0.records[1]!, r0.records[0]!],
      drop: [],
    }],
  });
  return out;
}

/** The seed's records at a patch's put and drop keys, per region (what `was` must be). */
function expectedWas(base: Snapshot, patch: SnapshotPatch): StateRecord[][] {
  return patch.regions.map((p) => {
    const r = base.regions.find((x) =>
      x.adapter === p.adapter && x.kind === p.kind && x.name === p.name
    );
    if (!r) return [];
    const keys = new Set([...p.put.map((x) => x.key), ...p.drop]);
    return r.records.filter((x) => keys.has(x.key));
  });
}

const stats = { patches: 0, refused: 0, was: 0, gone: 0 };

async function check(
  d: Definition,
  seedDir: string,
  patches: SnapshotPatch[],
  why: string,
): Promise<void> {
  const full = normalize(await takeSnapshot(d, seedDir), d);
  const got = await streamSeed(d, seedDir, { patches });
  assert.equal(got.header.digest, snapshotDigest(full), `${why}: seed digest`);
  // Every table of the main database streamed from its pages (none declined).
  assert.equal(
    got.methods.find((m) => m.label === "state.db")?.method,
    "pages",
    `${why}: ${JSON.stringify(got.methods)}`,
  );
  assert.deepEqual(got.header.problems, full.problems, why);
  assert.deepEqual(
    got.header.regions,
    full.regions.map(({ records, ...h }) => ({ ...h, count: records.length })),
    why,
  );
  patches.forEach((p, i) => {
    let want: string | null = null;
    let error: string | null = null;
    try {
      want = snapshotDigest(applyPatch(full, p));
    } catch (e) {
      error = (e as Error).message;
    }
    assert.equal(got.digests[i], want, `${why}: patch ${i} (${error})`);
    assert.equal(got.patchErrors[i] !== null, error !== null, `${why}: ${i}`);
    stats.patches++;
    if (error !== null) stats.refused++;
    stats.was += got.was[i]?.flat().length ?? 0;
    stats.gone += got.gone[i]?.length ?? 0;
    if (want !== null) {
      assert.deepEqual(got.was[i], expectedWas(full, p), `${why}: was ${i}`);
      const listed = new Set(
        p.regions.map((r) => `${r.adapter}:${r.kind}:${r.name}`),
      );
      assert.deepEqual(
        got.gone[i],
        full.regions.filter((r) =>
          !listed.has(`${r.adapter}:${r.kind}:${r.name}`)
        )
          .map(({ records, ...rest }) => ({ ...rest, was: records })),
        `${why}: gone ${i}`,
      );
      const st = got.patched[i]!;
      assert.deepEqual(st.regions.map((r) => r.was), got.was[i]);
      assert.equal(st.base, p.base);
    }
  });
}

Deno.test("streamSeed equals the full snapshot's digest and every patched digest over random databases", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-stream-" });
  try {
    const rnd = prng(7);
    const d = definition(work);
    let walFrames = 0;
    for (let trial = 0; trial < 6; trial++) {
      const seedDir = `${work}/seed${trial}`;
      await Deno.mkdir(seedDir);
      const rows = 300 + Math.floor(rnd() * 1500);
      seedDb(`${seedDir}/state.db`, rows, rnd);
      if (trial % 2 === 0) {
        await Deno.writeTextFile(
          `${seedDir}/data.json`,
          JSON.stringify({ a: [1, 2], b: { c: "d" } }),
        );
      }
      if (trial % 3 === 2) {
        const o = new DatabaseSync(`${seedDir}/other.db`);
        o.exec(
          "CREATE TABLE t (x, y); INSERT INTO t VALUES (1, 'a'), (NULL, x'00');",
        );
        o.close();
      }
      // The seed itself edited: WAL frames left in the -wal, or VACUUM.
      const db = new DatabaseSync(`${seedDir}/state.db`);
      if (trial % 2 === 1) {
        db.exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;");
      }
      edit(db, rnd, rows);
      if (trial === 4) db.exec("VACUUM");
      if (
        trial % 2 === 1 && (await Deno.stat(`${seedDir}/state.db-wal`)).size > 0
      ) walFrames++;
      const seedSnap = normalize(await takeSnapshot(d, seedDir), d);
      const seedDigest = snapshotDigest(seedSnap);
      // Patches from edited copies (what a session's state would be).
      const patches: SnapshotPatch[] = [];
      for (let s = 0; s < 3; s++) {
        const dir = `${work}/s${trial}-${s}`;
        await Deno.mkdir(dir);
        for (const f of ["state.db", "state.db-wal", "data.json", "other.db"]) {
          await Deno.copyFile(`${seedDir}/${f}`, `${dir}/${f}`).catch(() => {});
        }
        const e = new DatabaseSync(`${dir}/state.db`);
        edit(e, rnd, rows);
        e.close();
        const after = normalize(await takeSnapshot(d, dir), d);
        patches.push(diffSnapshot(seedDigest, seedSnap, after));
      }
      patches.push(...randomPatches(seedSnap, seedDigest, rnd));
      await check(d, seedDir, patches, `trial ${trial}`);
      db.close();
    }
    assert.ok(walFrames >= 2, `${walFrames} seeds with WAL frames`);
    // The patches really replaced, dropped and left out seed records, and
    // the malformed ones were refused.
    assert.ok(stats.patches >= 60, JSON.stringify(stats));
    assert.ok(stats.refused >= 12, JSON.stringify(stats));
    assert.ok(stats.was >= 500, JSON.stringify(stats));
    assert.ok(stats.gone >= 10, JSON.stringify(stats));
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("streamSeed: tables stored in another order are read whole and sorted, others from pages; methods say which", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-stream-" });
  try {
    await Deno.mkdir(`${work}/seed`);
    seedDb(`${work}/seed/state.db`, 200, prng(3));
    const d = definition(work);
    const got = await streamSeed(d, `${work}/seed`);
    const m = got.methods.find((x) => x.label === "state.db")!;
    assert.equal(m.method, "pages");
    assert.deepEqual(
      m.sorted?.map((s) => s.table),
      ["kv_desc", "kv_nocase", "r_desc"],
    );
    assert.equal(
      got.methods.find((x) => x.label === "data.json")?.method,
      "snapshot",
    );
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("streamSeed: a database the page reader cannot read is not observed", async () => {
  const work = await Deno.makeTempDir({ prefix: "verity-stream-" });
  try {
    await Deno.mkdir(`${work}/seed`);
    const db = new DatabaseSync(`${work}/seed/state.db`);
    db.exec(
      "CREATE TABLE g (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2)); INSERT INTO g (a) VALUES (1), (2);",
    );
    db.close();
    const d = definition(work);
    await assert.rejects(
      () => streamSeed(d, `${work}/seed`),
      /state\.db: not read: table g has generated columns/,
    );
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
