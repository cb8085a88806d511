/**
 * Benchmark: the seed's digest streamed from its pages (`streamSeed`)
 * against the whole snapshot (`takeSnapshot` + `normalize` +
 * `snapshotDigest`, and `applyPatch` + `snapshotDigest` for each patched
 * state), each in its own process under /usr/bin/time: wall time and peak
 * RSS side by side, rounds interleaved, medians, ratios stream / whole.
 * Both must give the same digests (checked every round). Both run with a
 * 16 GiB V8 heap limit (the whole snapshot of 10M rows needs over 4 GiB).
 *
 * The seed: a SQLite database of `--rows` rows (a comma list runs each
 * size; default 1,000,000) in `items (id INTEGER PRIMARY KEY, name TEXT,
 * qty INTEGER, price REAL, updated TEXT)` (updated masked), or with
 * `--without-rowid` the same table `WITHOUT ROWID` keyed by a TEXT column,
 * or with `--text-pk` a rowid table keyed by a TEXT column (stored in rowid
 * order, streamed through its primary-key index);
 * `--patches N` (default 2) one-row patches hashed in the same pass.
 *
 * Run: deno run -A scripts/bench_seed_stream.ts [--rows 1000000[,10000000]]
 *      [--rounds 3] [--patches 2] [--without-rowid | --text-pk]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { sqliteBenchDefinition } from "./_bench_shared.ts";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Definition } from "../lib/definition/types.ts";
import { snapshotDigest } from "../lib/state/delta.ts";
import { normalize } from "../lib/state/normalize.ts";
import type { SnapshotPatch } from "../lib/state/patched.ts";
import { applyPatch } from "../lib/report/pack.ts";
import { takeSnapshot } from "../lib/state_io/snapshot.ts";
import { streamSeed } from "../lib/state_io/seed_stream.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "1" },
    patches: { type: "string", default: "2" },
    "without-rowid": { type: "boolean", default: false },
    "text-pk": { type: "boolean", default: false },
    child: { type: "string" },
    dir: { type: "string" },
  },
  strict: true,
});

function definition(dir: string): Definition {
  return sqliteBenchDefinition(dir, {
    append_only: [],
    mask: [{ region: "items", column: "updated", kind: "timestamp" }],
  });
}

/** `n` one-row patches: row k*step renamed. */
function patches(n: number, rows: number, keyed: boolean): SnapshotPatch[] {
  return Array.from({ length: n }, (_, k) => {
    const id = 1 + Math.floor(((k + 1) * rows) / (n + 1));
    return {
      base: "",
      problems: [],
      regions: [{
        adapter: "state.db",
        kind: "sqlite" as const,
        name: "items",
        category: "business" as const,
        columns: ["id", "name", "qty", "price", "updated"],
        put: [{
          key: keyed ? JSON.stringify([`k${id}`]) : `[${id}]`,
          value: {
            id: keyed ? `k${id}` : id,
            name: `renamed-${k}`,
            qty: id * 3,
            price: id / 8,
            updated: "<timestamp>",
          },
        }],
        drop: [],
      }],
    };
  });
}

if (values.child !== undefined) {
  const dir = values.dir!;
  const d = definition(dir);
  const [rows, n, keyed] = JSON.parse(values.child) as [
    number,
    number,
    boolean,
  ];
  const ps = patches(n, rows, keyed);
  const t0 = performance.now();
  let out: string[];
  if (Deno.env.get("BENCH_MODE") === "stream") {
    const r = await streamSeed(d, dir, { patches: ps });
    out = [r.header.digest, ...r.digests.map(String)];
  } else {
    const snap = normalize(await takeSnapshot(d, dir), d);
    out = [
      snapshotDigest(snap),
      ...ps.map((p) => snapshotDigest(applyPatch(snap, p))),
    ];
  }
  console.log(JSON.stringify({ ms: performance.now() - t0, digests: out }));
  Deno.exit(0);
}

function build(path: string, rows: number, keyed: boolean): void {
  const db = new DatabaseSync(path);
  db.exec(
    keyed
      ? `CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL, updated TEXT)${
        values["text-pk"] ? "" : " WITHOUT ROWID"
      }`
      : "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL, updated TEXT)",
  );
  db.exec(
    `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows})
    INSERT INTO items SELECT ${
      keyed ? "'k' || x" : "x"
    }, 'item-' || x, x * 3, x / 8.0, '2026-01-01T00:00:' || (x % 60) FROM c`,
  );
  db.close();
}

async function run(
  mode: "whole" | "stream",
  dir: string,
  arg: string,
): Promise<{ wall: number; kb: number; digests: string[] }> {
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "%e %M",
      Deno.execPath(),
      "run",
      "-A",
      "--unstable-worker-options",
      "--quiet",
      // The whole snapshot of 10M rows needs more than V8's default heap.
      "--v8-flags=--max-old-space-size=16384",
      new URL(import.meta.url).pathname,
      "--child",
      arg,
      "--dir",
      dir,
    ],
    env: { BENCH_MODE: mode },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  if (out.code !== 0) {
    throw new Error(`${mode}: exit ${out.code}: ${err.join("\n")}`);
  }
  const [wall, kb] = err.at(-1)!.split(" ").map(Number);
  const r = JSON.parse(new TextDecoder().decode(out.stdout));
  return { wall: wall!, kb: kb!, digests: r.digests };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const keyed = values["without-rowid"] || values["text-pk"];
const rounds = Number(values.rounds);
const nPatches = Number(values.patches);
console.log(
  `seed digest + ${nPatches} patched digests: whole snapshot vs streamed from pages (${
    values["text-pk"]
      ? "rowid table, TEXT PRIMARY KEY"
      : keyed
      ? "WITHOUT ROWID, TEXT key"
      : "INTEGER PRIMARY KEY"
  }; ${rounds} round(s), medians; load ${Deno.loadavg()[0]!.toFixed(1)})`,
);
console.log(
  "        rows   whole wall   whole peak  stream wall  stream peak  wall ratio  peak ratio",
);
for (const rows of values.rows.split(",").map(Number)) {
  const work = await Deno.makeTempDir({ prefix: "verity-bench-seed-" });
  try {
    build(join(work, "state.db"), rows, keyed);
    const arg = JSON.stringify([rows, nPatches, keyed]);
    const w: { wall: number; kb: number }[] = [];
    const s: { wall: number; kb: number }[] = [];
    for (let i = 0; i < rounds; i++) {
      const a = await run("whole", work, arg);
      const b = await run("stream", work, arg);
      if (JSON.stringify(a.digests) !== JSON.stringify(b.digests)) {
        throw new Error(`digests differ: ${a.digests} vs ${b.digests}`);
      }
      w.push(a);
      s.push(b);
    }
    const ww = median(w.map((x) => x.wall));
    const wk = median(w.map((x) => x.kb));
    const sw = median(s.map((x) => x.wall));
    const sk = median(s.map((x) => x.kb));
    console.log(
      `${rows.toLocaleString("en").padStart(12)} ${
        (ww.toFixed(1) + " s").padStart(12)
      } ${((wk / 1024).toFixed(0) + " MiB").padStart(12)} ${
        (sw.toFixed(1) + " s").padStart(12)
      } ${((sk / 1024).toFixed(0) + " MiB").padStart(12)} ${
        (sw / ww).toFixed(2).padStart(10)
      }x ${(sk / wk).toFixed(3).padStart(10)}x`,
    );
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
