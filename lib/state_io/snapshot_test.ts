import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { AdapterDef, Definition } from "../definition/types.ts";
import { adapterDef, bareDefinition } from "../../tests/_definition.ts";
import { readOnlyWorkerOptions, takeSnapshot } from "./snapshot.ts";

function definition(adapters: AdapterDef[]): Definition {
  return bareDefinition("/x", adapters, {
    name: "t",
    command: ["x"],
    timeouts: { start_s: 1, call_s: 1 },
  });
}
const adapter = adapterDef;

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "verity-snap-" });
  for (const [p, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${p}`.replace(/\/[^/]*$/, ""), {
      recursive: true,
    });
    await Deno.writeTextFile(`${dir}/${p}`, text);
  }
  return dir;
}

async function fileState(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile) {
      out[e.name] = Array.from(await Deno.readFile(`${dir}/${e.name}`)).join(
        ",",
      );
    }
  }
  return out;
}

Deno.test("snapshot: fs records paths, kinds, sizes, hashes and modes; other adapters' files excluded", async () => {
  const dir = await tree({
    "notes/a.txt": "hello",
    "top.txt": "x",
    "store.json": "{}",
    "state.db": "",
    "state.db-wal": "",
  });
  try {
    await Deno.chmod(`${dir}/top.txt`, 0o600);
    await Deno.symlink("/etc/passwd", `${dir}/link`);
    const def = definition([
      adapter("fs", ".", { business: ["notes"] }),
      adapter("json", "store.json"),
      adapter("sqlite", "state.db"),
    ]);
    const snap = await takeSnapshot(def, dir);
    const fs = snap.regions.filter((r) => r.kind === "fs");
    assert.deepEqual(fs.map((r) => [r.name, r.category]), [[
      ".",
      "unclassified",
    ], ["notes", "business"]]);
    assert.deepEqual(fs[0]?.records, [
      {
        key: '["link"]',
        value: { kind: "symlink", mode: "0777", target: "/etc/passwd" },
      },
      {
        key: '["top.txt"]',
        value: {
          kind: "file",
          mode: "0600",
          size: 1,
          sha256:
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
        },
      },
    ]);
    assert.deepEqual(
      fs[1]?.records.map((r) => [r.key, r.value.kind, r.value.size]),
      [
        ['["notes"]', "dir", undefined],
        ['["notes/a.txt"]', "file", 5],
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("snapshot: a WAL database is read with its committed frames and left exactly as it was", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-snap-" });
  const db = new DatabaseSync(`${dir}/state.db`);
  try {
    db.exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;");
    db.exec(
      "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'only in the wal');",
    );
    const before = await fileState(dir);
    assert.ok(Object.keys(before).includes("state.db-wal"));
    const snap = await takeSnapshot(
      definition([adapter("sqlite", "state.db", { business: ["t"] })]),
      dir,
    );
    const t = snap.regions.find((r) => r.name === "t");
    assert.deepEqual(t?.records, [{
      key: "[1]",
      value: { id: 1, v: "only in the wal" },
    }]);
    assert.equal(t?.category, "business");
    assert.deepEqual(
      await fileState(dir),
      before,
      "observing changed nothing: no checkpoint, no new file",
    );
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("snapshot: the reader cannot see outside the state directory, and never blocks on a FIFO", async () => {
  const outside = await tree({ "secret.json": '{"secret":1}' });
  const dir = await tree({});
  try {
    await Deno.symlink(`${outside}/secret.json`, `${dir}/store.json`);
    const mk = await new Deno.Command("mkfifo", { args: [`${dir}/pipe.jsonl`] })
      .output();
    assert.ok(mk.success);
    const snap = await takeSnapshot(
      definition([
        adapter("json", "store.json"),
        adapter("json", "pipe.jsonl"),
      ]),
      dir,
    );
    assert.deepEqual(
      snap.regions,
      [],
      "nothing read through the link or from the pipe",
    );
    assert.match(
      snap.problems.join("\n"),
      /store.json: leads outside the state directory/,
    );
    assert.match(snap.problems.join("\n"), /pipe.jsonl: not a regular file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("snapshot: the worker's permissions allow reading the state directory and nothing else", async () => {
  const dir = await tree({ "a.txt": "a" });
  const code = `self.onmessage = async (e) => {
    const r = {};
    const t = async (k, f) => { try { await f(); r[k] = "ok"; } catch (x) { r[k] = x.name; } };
    await t("read", () => Deno.readTextFile(e.data + "/a.txt"));
    await t("write", () => Deno.writeTextFile(e.data + "/b.txt", "b"));
    await t("readOutside", () => Deno.readTextFile("/etc/hostname"));
    await t("env", () => Deno.env.get("HOME"));
    await t("net", () => Deno.connect({ hostname: "127.0.0.1", port: 65001 }));
    await t("nodeCrypto", async () => (await import("node:crypto")).createHash("sha256").update("a").digest("hex"));
    self.postMessage(r);
  };`;
  const url = URL.createObjectURL(
    new Blob([code], { type: "application/javascript" }),
  );
  const w = new Worker(url, readOnlyWorkerOptions(dir));
  try {
    const result = await new Promise<Record<string, string>>((resolve) => {
      w.onmessage = (e) => resolve(e.data);
      w.postMessage(dir);
    });
    assert.deepEqual(result, {
      read: "ok",
      write: "NotCapable",
      readOutside: "NotCapable",
      env: "NotCapable",
      net: "NotCapable",
      // The fs adapter hashes a large file with node:crypto in the worker.
      nodeCrypto: "ok",
    });
    assert.deepEqual(Object.keys(await fileState(dir)), ["a.txt"]);
  } finally {
    w.terminate();
    URL.revokeObjectURL(url);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("snapshot: a missing label has no records; json and sqlite regions get their category", async () => {
  const dir = await tree({
    "m.jsonl": '{"type":"entity","name":"a"}\n{"type":"event","n":1}',
  });
  try {
    const def = definition([
      adapter("json", "m.jsonl", {
        region_by: "type",
        business: ["entity"],
        append_only: ["event"],
      }),
      adapter("sqlite", "absent.db"),
    ]);
    const snap = await takeSnapshot(def, dir);
    assert.deepEqual(
      snap.regions.map((r) => [r.name, r.category, r.records.length]),
      [
        ["entity", "business", 1],
        ["event", "append_only", 1],
      ],
    );
    assert.deepEqual(snap.problems, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("snapshot: one long-lived reader serves many state dirs, confined to each", async () => {
  const { SnapshotReader } = await import("./snapshot.ts");
  const root = await Deno.realPath(await Deno.makeTempDir());
  const a = `${root}/a`;
  const b = `${root}/b`;
  await Deno.mkdir(a);
  await Deno.mkdir(b);
  await Deno.writeTextFile(`${a}/store.json`, '{"x":1}');
  await Deno.writeTextFile(`${b}/store.json`, '{"x":2}');
  // A link from b's store to a's is refused, not followed.
  await Deno.remove(`${b}/store.json`);
  await Deno.symlink(`${a}/store.json`, `${b}/store.json`);
  const reader = new SnapshotReader(root);
  try {
    const items = [{ kind: "json" as const, label: "store.json" }];
    const [ra, rb] = await Promise.all([
      reader.read(a, items, 10_000),
      reader.read(b, items, 10_000),
    ]);
    assert.equal(ra.ok, true);
    assert.equal(rb.ok, true);
    const bytes = (r: typeof ra) =>
      r.ok && r.results[0]?.kind === "json" ? r.results[0].bytes : null;
    assert.equal(new TextDecoder().decode(bytes(ra)!), '{"x":1}');
    assert.equal(bytes(rb), null);
    assert.match(rb.problems.join("\n"), /leads outside the state directory/);
    await assert.rejects(
      () => reader.read("/etc", items, 1000),
      /outside the reader's root/,
    );
  } finally {
    reader.close();
    await Deno.remove(root, { recursive: true });
  }
});
