import assert from "node:assert/strict";
import { adapterDef } from "../tests/_definition.ts";
import {
  type FsEntry,
  fsExclusions,
  fsRegions,
  STREAM_HASH_BYTES,
  walkFs,
} from "./fs.ts";
import { createHash } from "node:crypto";

const ad = adapterDef;

Deno.test("fs: an adapter on . skips what other adapters observe (databases with their -wal/-shm, json, nested fs)", () => {
  const root = ad("fs", ".");
  const adapters = [
    root,
    ad("sqlite", "data/state.db"),
    ad("json", "./store.json"),
    ad("fs", "logs/"),
  ];
  assert.deepEqual(fsExclusions(adapters, root), [
    "data/state.db",
    "data/state.db-wal",
    "data/state.db-shm",
    "data/state.db-journal",
    "store.json",
    "logs",
  ]);
});

Deno.test("fs: records are grouped by the longest listed path; listed paths are regions even when empty", () => {
  const entries: FsEntry[] = [
    { path: "a.txt", kind: "file", mode: "0644", size: 1, sha256: "x" },
    { path: "notes", kind: "dir", mode: "0755" },
    { path: "notes/archive", kind: "dir", mode: "0755" },
    {
      path: "notes/archive/old.txt",
      kind: "file",
      mode: "0644",
      size: 2,
      sha256: "y",
    },
    { path: "notes/new.txt", kind: "file", mode: "0644", size: 3, sha256: "z" },
  ];
  const regions = fsRegions(
    entries,
    ad("fs", ".", {
      business: ["notes"],
      append_only: ["notes/archive", "log"],
    }),
  );
  assert.deepEqual(
    regions.map((r) => [
      r.name,
      r.category,
      r.records.map((x) => JSON.parse(x.key)[0]),
    ]),
    [
      [".", "unclassified", ["a.txt"]],
      ["log", "append_only", []],
      ["notes", "business", ["notes", "notes/new.txt"]],
      ["notes/archive", "append_only", [
        "notes/archive",
        "notes/archive/old.txt",
      ]],
    ],
  );
});

Deno.test("fs: walking a missing label yields nothing; excluded paths are skipped", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.deepEqual(await walkFs(dir, "absent", []), {
      entries: [],
      problems: [],
    });
    await Deno.writeTextFile(`${dir}/keep`, "k");
    await Deno.writeTextFile(`${dir}/skip`, "s");
    const r = await walkFs(dir, ".", ["skip"]);
    assert.deepEqual(r.entries.map((e) => e.path), ["keep"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs: a file larger than STREAM_HASH_BYTES is hashed in chunks to the digest of its bytes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bytes = new Uint8Array(STREAM_HASH_BYTES + 12_345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff;
    await Deno.writeFile(`${dir}/big.bin`, bytes);
    const { entries } = await walkFs(dir, ".", []);
    const big = entries.find((e) => e.path === "big.bin");
    assert.deepEqual([big?.size, big?.sha256], [
      bytes.length,
      createHash("sha256").update(bytes).digest("hex"),
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
