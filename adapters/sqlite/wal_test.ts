import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { mergeWal } from "./wal.ts";
import { readSqlite } from "./read.ts";

/**
 * A database written by native SQLite in WAL mode with checkpoints off:
 * the schema and rows live only in the -wal. Two transactions: the first
 * inserts 'first'; the second inserts 300 rows (several frames).
 */
async function walPair(): Promise<{ image: Uint8Array; wal: Uint8Array }> {
  const dir = await Deno.makeTempDir({ prefix: "verity-wal-" });
  const path = `${dir}/state.db`;
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    db.exec("INSERT INTO t VALUES (1, 'first')");
    db.exec("BEGIN");
    const ins = db.prepare("INSERT INTO t (v) VALUES (?)");
    for (let i = 0; i < 300; i++) ins.run("row " + "y".repeat(60) + i);
    db.exec("COMMIT");
    // Copy while the connection is open: closing would checkpoint the WAL.
    return {
      image: await Deno.readFile(path),
      wal: await Deno.readFile(`${path}-wal`),
    };
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function flip(b: Uint8Array, at: number, mask: number): void {
  b[at] = b[at]! ^ mask;
}

function rows(image: Uint8Array, wal: Uint8Array | null) {
  const obs = readSqlite(image, { wal });
  return {
    rows: obs.tables.find((t) => t.name === "t")?.records ?? [],
    problems: obs.problems,
  };
}

Deno.test("wal: committed frames in an un-checkpointed -wal are read", async () => {
  const { image, wal } = await walPair();
  assert.ok(wal.length > 32, "the -wal holds frames");
  assert.deepEqual(
    rows(image, null).rows,
    [],
    "without the WAL the rows are invisible",
  );
  const r = rows(image, wal);
  assert.deepEqual(r.problems, []);
  assert.equal(r.rows.length, 301);
  assert.deepEqual(r.rows[0], { key: "[1]", value: { id: 1, v: "first" } });
  const m = mergeWal(image, wal);
  assert.ok(m.framesApplied >= 3);
  assert.equal(m.framesUncommitted, 0);
  assert.equal(
    m.image[18],
    1,
    "merged image is marked as a rollback-journal database",
  );
});

Deno.test("wal: a frame with a bad checksum ends the log; later transactions are not applied", async () => {
  const { image, wal } = await walPair();
  const bad = wal.slice();
  const pageSize = new DataView(wal.buffer, wal.byteOffset).getUint32(8);
  const frames = (wal.length - 32) / (24 + pageSize);
  // Corrupt the page data of the last frame (the second transaction's commit frame).
  flip(bad, 32 + (frames - 1) * (24 + pageSize) + 24 + 100, 0xff);
  const r = rows(image, bad);
  assert.deepEqual(
    r.rows.map((x) => x.value.v),
    ["first"],
    "only the first transaction survives",
  );
  assert.match(r.problems.join("\n"), /after the last commit ignored/);
});

Deno.test("wal: frames with another salt (an older log generation) are ignored", async () => {
  const { image, wal } = await walPair();
  const pageSize = new DataView(wal.buffer, wal.byteOffset).getUint32(8);
  const frames = (wal.length - 32) / (24 + pageSize);
  const bad = wal.slice();
  flip(bad, 32 + (frames - 1) * (24 + pageSize) + 8, 0x01); // salt-1 of the last frame
  assert.deepEqual(rows(image, bad).rows.map((x) => x.value.v), ["first"]);
});

Deno.test("wal: a torn final transaction is ignored, with a problem naming it", async () => {
  const { image, wal } = await walPair();
  const pageSize = new DataView(wal.buffer, wal.byteOffset).getUint32(8);
  const torn = wal.slice(0, wal.length - (24 + pageSize)); // drop the commit frame
  const m = mergeWal(image, torn);
  assert.ok(m.framesUncommitted >= 1);
  const r = rows(image, torn);
  assert.deepEqual(r.rows.map((x) => x.value.v), ["first"]);
  assert.match(r.problems.join("\n"), /uncommitted transaction/);
});

Deno.test("wal: a damaged header means the WAL is not used at all", async () => {
  const { image, wal } = await walPair();
  const bad = wal.slice();
  flip(bad, 25, 0xff);
  const r = rows(image, bad);
  assert.deepEqual(r.rows, []);
  assert.match(r.problems.join("\n"), /header checksum does not verify/);
  assert.match(
    mergeWal(image, new Uint8Array(10)).problems.join(),
    /shorter than a WAL header/,
  );
  assert.match(
    mergeWal(image, new Uint8Array(64)).problems.join(),
    /no WAL magic/,
  );
});
