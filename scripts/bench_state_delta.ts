/**
 * Benchmark: the page-by-page state delta (`stateDelta`) against native
 * `sqldiff` on the same SQLite pairs, side by side, and against the full
 * snapshot path (`takeSnapshot` x2 + `computeDelta`, what verity did
 * before).
 *
 * Pairs (built with the `sqlite3` CLI under the system temp directory;
 * tables `items` and `events`, half the rows each, like
 * scripts/bench_snapshot.ts):
 *   - one-row:  the copy changes one row (a session that changed one row
 *               of its seed: the incremental case);
 *   - spread:   1% of the rows changed, spread over the whole table;
 *   - every:    every row of both tables changed;
 *   - vacuum:   a few rows changed, deleted and inserted, then VACUUM
 *               (every page moved).
 * Each round runs verity in a fresh process (first pass: cold, loads the
 * engine and walks the seed; second pass: warm, the seed's trees known, what
 * a long `verity run` would pay per session after the first)
 * and `sqldiff` under /usr/bin/time, interleaved; it prints medians of CPU
 * and wall time, the ratios and the peak memory (VmHWM) of both. For
 * `text-pk` it also times `sqldiff --primarykey`, which matches rows by
 * the declared key as verity does (plain sqldiff matches a rowid table's
 * rows by rowid), and prints the ratios against it too.
 *
 * Kinds of tables (`--kinds`, each with its own seed, one after the
 * other in the run): `rowid` (`INTEGER PRIMARY KEY` tables);
 * `without-rowid` (both tables `WITHOUT ROWID`, index b-trees: `items`
 * keyed by a text `sku`, `events` by an integer pair `(item_id, seq)`; the
 * same pairs edit them the same way); `text-pk` (the same tables as rowid
 * tables with those primary keys: stored by rowid, identified by the key).
 * `--random-keys` makes each keyed kind's `sku` 32 random hex digits, so
 * rows are stored in another order than their keys' (the pairs then pick
 * rows by name).
 *
 * Run: deno run -A scripts/bench_state_delta.ts [--rows N] [--rounds N]
 *        [--pairs one-row,spread,every,vacuum] [--kinds rowid,without-rowid,text-pk]
 *        [--old] [--sql] [--random-keys]
 *
 * `--old` also times the full snapshot path in each child (skip it for
 * 10M rows: it needs several GiB); `--sql` times the keyed kinds' tables
 * diffed by SQLite itself (`_sql_keyed_diff.ts`), checked to find as many
 * changes. Every pair's delta is checked against sqldiff's count of
 * changed rows.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "./_args.ts";
import { ratioText, sqliteBenchDefinition } from "./_bench_shared.ts";
import type { Definition } from "../lib/definition/types.ts";
import { stateDelta } from "../lib/state_io/state_delta.ts";
import { takeSnapshot } from "../lib/state_io/snapshot.ts";
import { normalize } from "../lib/state/normalize.ts";
import { computeDelta, type Delta } from "../lib/state/delta.ts";
import { sqlKeyedDiff } from "./_sql_keyed_diff.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    rows: { type: "string", default: "1000000" },
    pairs: { type: "string", default: "one-row,spread,every,vacuum" },
    sqldiff: { type: "string", default: "/usr/bin/sqldiff" },
    old: { type: "boolean", default: false },
    sql: { type: "boolean", default: false },
    kinds: { type: "string", default: "rowid" },
    "random-keys": { type: "boolean", default: false },
    child: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
  strict: true,
  allowPositionals: true,
});

function benchDefinition(dir: string): Definition {
  return sqliteBenchDefinition(dir, {
    append_only: ["events"],
    mask: [],
  });
}

function peakMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(
    Deno.readTextFileSync("/proc/self/status"),
  );
  return m ? Number(m[1]) / 1024 : NaN;
}

function resetPeak(): void {
  try {
    Deno.writeTextFileSync("/proc/self/clear_refs", "5");
  } catch {
    // Not Linux: the next peak includes this pass.
  }
}

function count(d: Delta): number {
  let n = 0;
  for (const c of ["business", "append_only", "unclassified"] as const) {
    n += d[c].added.length + d[c].removed.length + d[c].changed.length;
  }
  return n;
}

interface Pass {
  wall: number;
  cpu: number;
  peakMiB: number;
  changes: number;
}

/** One child: two passes of stateDelta (and of the old path with --old, the SQL diff with --sql). */
async function child(
  a: string,
  b: string,
  old: boolean,
  sql: boolean,
): Promise<void> {
  const def = benchDefinition(a);
  const out: Record<string, Pass[]> = { new: [] };
  if (old) out.old = [];
  if (sql) out.sql = [];
  // The new path's passes first, so its peak is not the old path's.
  let found: Delta | null = null;
  for (let pass = 0; pass < 2; pass++) {
    resetPeak();
    const cpu0 = process.cpuUsage();
    const t = performance.now();
    const r = await stateDelta(def, a, b);
    const cpu = process.cpuUsage(cpu0);
    out.new!.push({
      wall: performance.now() - t,
      cpu: (cpu.user + cpu.system) / 1000,
      peakMiB: peakMiB(),
      changes: count(r.delta),
    });
    if (r.methods[0]?.method !== "pages") {
      throw new Error(`snapshots used: ${r.methods[0]?.why}`);
    }
    found = r.delta;
  }
  for (let pass = 0; sql && pass < 2; pass++) {
    resetPeak();
    const cpu0 = process.cpuUsage();
    const t = performance.now();
    const diffs = sqlKeyedDiff(`${a}/state.db`, `${b}/state.db`);
    const cpu = process.cpuUsage(cpu0);
    let changes = 0;
    for (const d of diffs) {
      changes += d.added.length + d.removed.length + d.changed.length;
    }
    out.sql!.push({
      wall: performance.now() - t,
      cpu: (cpu.user + cpu.system) / 1000,
      peakMiB: peakMiB(),
      changes,
    });
    if (changes !== count(found!)) {
      throw new Error(
        `the SQL diff found ${changes} changes, pages ${count(found!)}`,
      );
    }
  }
  for (let pass = 0; old && pass < 2; pass++) {
    resetPeak();
    const cpu0 = process.cpuUsage();
    const t = performance.now();
    const d = computeDelta(
      normalize(await takeSnapshot(def, a), def),
      normalize(await takeSnapshot(def, b), def),
    );
    const cpu = process.cpuUsage(cpu0);
    out.old!.push({
      wall: performance.now() - t,
      cpu: (cpu.user + cpu.system) / 1000,
      peakMiB: peakMiB(),
      changes: count(d),
    });
    if (JSON.stringify(d) !== JSON.stringify(found)) {
      throw new Error("the two paths found different deltas");
    }
  }
  console.log(JSON.stringify(out));
}

if (values.child) {
  await child(positionals[0]!, positionals[1]!, values.old, values.sql);
  Deno.exit(0);
}

const rows = Number(values.rows);
const rounds = Number(values.rounds);
const half = Math.floor(rows / 2);

async function sqlite3(db: string, sql: string): Promise<void> {
  const out = await new Deno.Command("sqlite3", {
    args: [db],
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const w = out.stdin.getWriter();
  await w.write(new TextEncoder().encode(sql));
  await w.close();
  const r = await out.output();
  if (!r.success) {
    throw new Error(`sqlite3 failed: ${new TextDecoder().decode(r.stderr)}`);
  }
}

const BUILD = `
PRAGMA page_size = 4096;
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL, price REAL, updated_at TEXT);
CREATE TABLE events (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL);
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${half})
INSERT INTO items SELECT i, 'item-' || i, i % 97, (i % 1000) / 4.0,
  '2026-01-' || printf('%02d', 1 + i % 28) || 'T10:00:00Z' FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${half})
INSERT INTO events SELECT i, 1 + i % 5000, CASE i % 5 WHEN 0 THEN 'create' WHEN 1 THEN 'update' WHEN 2 THEN 'view' WHEN 3 THEN 'delete' ELSE 'share' END,
  '2026-02-' || printf('%02d', 1 + i % 28) || 'T12:00:00Z' FROM c;
COMMIT;
`;

/** The `--without-rowid` tables: a text key, and a composite integer key. */
const BUILD_KEYED = `
PRAGMA page_size = 4096;
CREATE TABLE items (sku TEXT PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL, price REAL, updated_at TEXT) WITHOUT ROWID;
CREATE TABLE events (item_id INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (item_id, seq)) WITHOUT ROWID;
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${half})
INSERT INTO items SELECT 'sku-' || printf('%08d', i), 'item-' || i, i % 97, (i % 1000) / 4.0,
  '2026-01-' || printf('%02d', 1 + i % 28) || 'T10:00:00Z' FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${half})
INSERT INTO events SELECT 1 + i % 5000, i, CASE i % 5 WHEN 0 THEN 'create' WHEN 1 THEN 'update' WHEN 2 THEN 'view' WHEN 3 THEN 'delete' ELSE 'share' END,
  '2026-02-' || printf('%02d', 1 + i % 28) || 'T12:00:00Z' FROM c;
COMMIT;
`;

const sku = (i: number) => `'sku-${String(i).padStart(8, "0")}'`;

const MUTATE_KEYED: Record<string, string> = {
  "one-row": `UPDATE items SET qty = qty + 1 WHERE sku = ${
    sku(Math.floor(half / 2))
  };`,
  spread:
    `UPDATE items SET qty = qty + 1 WHERE CAST(substr(sku, 5) AS INTEGER) % 100 = 7; UPDATE events SET kind = 'x' WHERE seq % 100 = 7;`,
  every:
    `UPDATE items SET qty = qty + 1; UPDATE events SET kind = kind || '!';`,
  vacuum: `
UPDATE items SET name = name || '-renamed' WHERE sku IN (${sku(17)}, ${
    sku(4242)
  }, ${sku(Math.floor(half / 2))});
DELETE FROM items WHERE sku IN (${sku(3)}, ${sku(77)}, ${sku(half - 1)});
DELETE FROM events WHERE seq % 1000 = 1;
INSERT INTO items VALUES ('sku-new-a', 'new-a', 1, 1.5, 'x');
VACUUM;`,
};

const MUTATE_ROWID: Record<string, string> = {
  "one-row": `UPDATE items SET qty = qty + 1 WHERE id = ${
    Math.floor(half / 2)
  };`,
  spread:
    `UPDATE items SET qty = qty + 1 WHERE id % 100 = 7; UPDATE events SET kind = 'x' WHERE id % 100 = 7;`,
  every:
    `UPDATE items SET qty = qty + 1; UPDATE events SET kind = kind || '!';`,
  vacuum: `
UPDATE items SET name = name || '-renamed' WHERE id IN (17, 4242, ${
    Math.floor(half / 2)
  });
DELETE FROM items WHERE id IN (3, 77, ${half - 1});
DELETE FROM events WHERE id % 1000 = 1;
INSERT INTO items (name, qty, price, updated_at) VALUES ('new-a', 1, 1.5, 'x');
VACUUM;`,
};

const randomKeys = values["random-keys"];
const KINDS = ["rowid", "without-rowid", "text-pk"];
const kinds = values.kinds.split(",");
for (const k of kinds) {
  if (!KINDS.includes(k)) {
    console.error(
      `bench_state_delta: --kinds: unknown kind ${JSON.stringify(k)} (${
        KINDS.join(", ")
      })`,
    );
    Deno.exit(2);
  }
}
/** The script building a kind's seed. */
function build(kind: string): string {
  if (kind === "rowid") return BUILD;
  return (kind === "text-pk"
    ? BUILD_KEYED.replaceAll(" WITHOUT ROWID;", ";")
    : BUILD_KEYED).replace(
      "SELECT 'sku-' || printf('%08d', i),",
      randomKeys ? "SELECT lower(hex(randomblob(16)))," : "$&",
    );
}
function kindName(kind: string): string {
  if (kind === "rowid") return "INTEGER PRIMARY KEY";
  return (kind === "text-pk" ? "TEXT PRIMARY KEY" : "WITHOUT ROWID") +
    (randomKeys ? ", random keys" : "");
}
/** `--random-keys`: the keyed pairs pick rows by name ('item-N'), not by key. */
const itemName = (i: number) => `'item-${i}'`;
const MUTATE_RANDOM: Record<string, string> = {
  "one-row": `UPDATE items SET qty = qty + 1 WHERE name = ${
    itemName(Math.floor(half / 2))
  };`,
  spread:
    `UPDATE items SET qty = qty + 1 WHERE CAST(substr(name, 6) AS INTEGER) % 100 = 7; UPDATE events SET kind = 'x' WHERE seq % 100 = 7;`,
  every: MUTATE_KEYED.every!,
  vacuum: `
UPDATE items SET name = name || '-renamed' WHERE name IN (${itemName(17)}, ${
    itemName(4242)
  }, ${itemName(Math.floor(half / 2))});
DELETE FROM items WHERE name IN (${itemName(3)}, ${itemName(77)}, ${
    itemName(half - 1)
  });
DELETE FROM events WHERE seq % 1000 = 1;
INSERT INTO items VALUES ('sku-new-a', 'new-a', 1, 1.5, 'x');
VACUUM;`,
};
function mutations(kind: string): Record<string, string> {
  if (kind === "rowid") return MUTATE_ROWID;
  return randomKeys ? MUTATE_RANDOM : MUTATE_KEYED;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

for (const tool of ["sqlite3", values.sqldiff, "/usr/bin/time"]) {
  const ok = await new Deno.Command("sh", {
    args: ["-c", 'command -v "$1" >/dev/null', "sh", tool],
  }).output().then((o) => o.success, () => false);
  if (!ok) {
    console.error(
      `bench_state_delta: ${tool} not found (Debian: apt-get install sqlite3 sqlite3-tools time)`,
    );
    Deno.exit(2);
  }
}
for (const [k, v] of [["rows", rows], ["rounds", rounds]] as const) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`bench_state_delta: --${k} must be a positive integer`);
    Deno.exit(2);
  }
}

for (const pair of values.pairs.split(",")) {
  if (!(pair in MUTATE_ROWID)) {
    console.error(
      `bench_state_delta: --pairs: unknown pair ${
        JSON.stringify(pair)
      } (one-row, spread, every, vacuum)`,
    );
    Deno.exit(2);
  }
}

const tmp = await Deno.makeTempDir({ prefix: "verity-bench-delta-" });
const config = new URL("../deno.json", import.meta.url).pathname;
const summary: string[] = [];
/** Build the seed of one kind of tables and time every pair of it. */
/** The baselines: plain `sqldiff`, and for keyed rowid tables `--primarykey` too. */
const BASELINES: [string, string[]][] = [
  ["sqldiff", []],
  ["sqldiff --primarykey", ["--primarykey"]],
];

async function runKind(kind: string): Promise<void> {
  const MUTATE = mutations(kind);
  // The SQL diff is timed for keyed tables only.
  const sql = values.sql && kind !== "rowid";
  await Deno.mkdir(`${tmp}/${kind}/seed`, { recursive: true });
  let t0 = performance.now();
  await sqlite3(`${tmp}/${kind}/seed/state.db`, build(kind));
  const size = (await Deno.stat(`${tmp}/${kind}/seed/state.db`)).size;
  console.log(
    `\nseed: ${rows} rows (${kindName(kind)}) (${
      (size / 1048576).toFixed(1)
    } MiB) built in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  for (const pair of values.pairs.split(",")) {
    const mut = MUTATE[pair];
    if (mut === undefined) throw new Error(`unknown pair ${pair}`);
    const byKey = kind === "text-pk";
    const dir = `${tmp}/${kind}/${pair}`;
    await Deno.mkdir(dir);
    t0 = performance.now();
    await Deno.copyFile(`${tmp}/${kind}/seed/state.db`, `${dir}/state.db`);
    await sqlite3(`${dir}/state.db`, mut);
    console.log(
      `\n== ${pair} (copy edited in ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s)`,
    );
    const m: Record<string, number[]> = {};
    const push = (k: string, v: number) => (m[k] ??= []).push(v);
    let changes = 0;
    let sqldiffLines = 0;
    for (let r = 0; r < rounds; r++) {
      const c = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--config",
          config,
          import.meta.filename!,
          "--child",
          ...(values.old ? ["--old"] : []),
          ...(sql ? ["--sql"] : []),
          `${tmp}/${kind}/seed`,
          dir,
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      if (!c.success) throw new Error("the verity child failed");
      const res = JSON.parse(
        new TextDecoder().decode(c.stdout).trim().split("\n").at(-1)!,
      ) as Record<string, Pass[]>;
      for (const [k, passes] of Object.entries(res)) {
        push(`${k} cold cpu`, passes[0]!.cpu);
        push(`${k} warm cpu`, passes[1]!.cpu);
        push(`${k} cold wall`, passes[0]!.wall);
        push(`${k} warm wall`, passes[1]!.wall);
        push(`${k} peak`, Math.max(passes[0]!.peakMiB, passes[1]!.peakMiB));
        changes = passes[1]!.changes;
      }
      // A rowid table with a declared key: plain sqldiff matches rows by
      // rowid; `--primarykey` by the key, as verity does. Both are timed.
      for (const [name, extra] of byKey ? BASELINES : BASELINES.slice(0, 1)) {
        const t = performance.now();
        const o = await new Deno.Command("/usr/bin/time", {
          args: [
            "-f",
            "%U %S %M",
            values.sqldiff,
            ...extra,
            `${tmp}/${kind}/seed/state.db`,
            `${dir}/state.db`,
          ],
          stdout: "piped",
          stderr: "piped",
        }).output();
        push(`${name} wall`, performance.now() - t);
        if (!o.success) throw new Error(`${name} failed`);
        const [u, s, kb] = new TextDecoder().decode(o.stderr).trim().split(
          "\n",
        ).at(-1)!.split(" ").map(Number);
        push(`${name} cpu`, ((u ?? NaN) + (s ?? NaN)) * 1000);
        push(`${name} peak`, (kb ?? NaN) / 1024);
        if (name === "sqldiff") {
          sqldiffLines = new TextDecoder().decode(o.stdout).trim().split("\n")
            .filter((l) => l !== "").length;
        }
      }
      console.log(
        `round ${r + 1}: verity warm cpu ${
          m["new warm cpu"]!.at(-1)!.toFixed(0)
        } ms, cold ${m["new cold cpu"]!.at(-1)!.toFixed(0)} ms${
          values.old
            ? `; old path warm ${m["old warm cpu"]!.at(-1)!.toFixed(0)} ms`
            : ""
        }; sqldiff cpu ${m["sqldiff cpu"]!.at(-1)!.toFixed(0)} ms`,
      );
    }
    const md = (k: string) => median(m[k]!);
    const sd = md("sqldiff cpu");
    const byKeyText = byKey
      ? `; against sqldiff --primarykey (${
        md("sqldiff --primarykey cpu").toFixed(0)
      } ms) warm ${
        ratioText(md("new warm cpu"), md("sqldiff --primarykey cpu"), 3)
      }, cold ${
        ratioText(md("new cold cpu"), md("sqldiff --primarykey cpu"), 3)
      }`
      : "";
    console.log(
      `verity found ${changes} changed records; sqldiff printed ${sqldiffLines} statements`,
    );
    const line = (k: string) =>
      `${k.padEnd(10)} cpu warm ${md(`${k} warm cpu`).toFixed(0)} ms (${
        ratioText(md(`${k} warm cpu`), sd, 3)
      } sqldiff), cold ${md(`${k} cold cpu`).toFixed(0)} ms (${
        ratioText(md(`${k} cold cpu`), sd, 3)
      }); wall warm ${md(`${k} warm wall`).toFixed(0)} ms (${
        (md(`${k} warm wall`) / md("sqldiff wall")).toFixed(3)
      }x); peak ${Math.max(...m[`${k} peak`]!).toFixed(0)} MiB`;
    console.log(
      `sqldiff    cpu ${sd.toFixed(0)} ms, wall ${
        md("sqldiff wall").toFixed(0)
      } ms, peak ${Math.max(...m["sqldiff peak"]!).toFixed(0)} MiB`,
    );
    console.log(line("new"));
    if (values.old) console.log(line("old"));
    if (sql) console.log(line("sql"));
    summary.push(
      `${pair.padEnd(8)} ${rows} rows${` ${
        kindName(kind)
      }`}: verity/sqldiff cpu warm ${
        ratioText(md("new warm cpu"), sd, 3)
      }, cold ${ratioText(md("new cold cpu"), sd, 3)}; peak ${
        Math.max(...m["new peak"]!).toFixed(0)
      } MiB (sqldiff ${
        Math.max(...m["sqldiff peak"]!).toFixed(0)
      } MiB)${byKeyText}${
        values.old
          ? `; before (full snapshots) warm ${
            ratioText(md("old warm cpu"), sd, 2)
          }, peak ${Math.max(...m["old peak"]!).toFixed(0)} MiB`
          : ""
      }${
        sql
          ? `; keyed tables diffed by SQLite warm ${
            ratioText(md("sql warm cpu"), sd, 2)
          }, cold ${ratioText(md("sql cold cpu"), sd, 2)}, peak ${
            Math.max(...m["sql peak"]!).toFixed(0)
          } MiB`
          : ""
      }`,
    );
    await Deno.remove(dir, { recursive: true });
  }
}

try {
  for (const kind of kinds) await runKind(kind);
  console.log("\nsummary (medians of " + rounds + " rounds):");
  for (const s of summary) console.log(s);
} finally {
  if (!values.keep) await Deno.remove(tmp, { recursive: true });
}
