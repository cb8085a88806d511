/**
 * Benchmark: verity's snapshot + delta against `sqldiff` on the same pair
 * of SQLite databases.
 *
 * Builds a pair of 1,000,000-row databases (two tables of 500,000 rows;
 * the second copy has a few rows changed, inserted and deleted in each
 * table), then, in one run, times several interleaved rounds of
 *   - verity: takeSnapshot of both state directories (read-only worker,
 *     the page reader) + normalize + computeDelta, and
 *   - sqldiff a.db b.db (Debian sqlite3-tools),
 * checks that both found the same changes, and prints medians (wall and
 * CPU time), the ratios and verity's peak memory. Each verity round runs in
 * a fresh process (cold: nothing cached from an earlier round) and times
 * itself from the first snapshot to the delta; its peak memory is that
 * process's VmHWM.
 *
 * Run: deno run --allow-all scripts/bench_snapshot.ts [--rounds N] [--rows N]
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import process from "node:process";
import { parseArgs } from "./_args.ts";
import { ratioText, sqliteBenchDefinition } from "./_bench_shared.ts";
import type { Definition } from "../lib/definition/types.ts";
import { takeSnapshot } from "../lib/state_io/snapshot.ts";
import { normalize } from "../lib/state/normalize.ts";
import { computeDelta } from "../lib/state/delta.ts";
import { PageCache } from "../adapters/sqlite/stream.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    rows: { type: "string", default: "1000000" },
    sqldiff: { type: "string", default: "/usr/bin/sqldiff" },
    child: { type: "boolean", default: false },
  },
  strict: true,
  allowPositionals: true,
});
const rounds = Number(values.rounds);
const totalRows = Number(values.rows);
const perTable = Math.floor(totalRows / 2);

function build(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(`
    CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL, price REAL, updated_at TEXT);
    CREATE TABLE events (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL);
  `);
  db.exec("BEGIN");
  const ins1 = db.prepare("INSERT INTO items VALUES (?, ?, ?, ?, ?)");
  const ins2 = db.prepare("INSERT INTO events VALUES (?, ?, ?, ?)");
  const kinds = ["create", "update", "view", "delete", "share"];
  for (let i = 1; i <= perTable; i++) {
    ins1.run(
      i,
      `item-${i}`,
      i % 97,
      (i % 1000) / 4,
      `2026-01-${String(1 + (i % 28)).padStart(2, "0")}T10:00:00Z`,
    );
    ins2.run(
      i,
      1 + (i % 5000),
      kinds[i % 5]!,
      `2026-02-${String(1 + (i % 28)).padStart(2, "0")}T12:00:00Z`,
    );
  }
  db.exec("COMMIT");
  db.close();
}

function mutate(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(`
    BEGIN;
    UPDATE items SET name = name || '-renamed' WHERE id IN (17, 4242, 250000, 499999);
    UPDATE items SET price = NULL WHERE id = 123456;
    DELETE FROM items WHERE id IN (3, 77777, 300001, 300002, 444444);
    INSERT INTO items (name, qty, price, updated_at) VALUES ('new-a', 1, 1.5, 'x'), ('new-b', 2, 2.5, 'y'), ('new-c', 3, NULL, 'z');
    INSERT INTO items (id, name, qty, price, updated_at) VALUES (100000000, 'far', 1, 0, 'w'), (${
    perTable + 100
  }, 'gap', 1, 0, 'v');
    UPDATE events SET kind = 'changed' WHERE id IN (5, 50000, 400000);
    UPDATE events SET at = '2027-01-01T00:00:00Z' WHERE id = 12;
    DELETE FROM events WHERE id IN (1, 2, 250001, ${perTable});
    INSERT INTO events (item_id, kind, at) VALUES (1, 'new', 'now'), (2, 'new', 'now');
    COMMIT;
  `);
  db.close();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function peakRssMiB(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

function benchDefinition(dir: string): Definition {
  return sqliteBenchDefinition(dir, {
    append_only: ["events"],
    mask: [],
  });
}

/**
 * One measured round in a fresh process: snapshot A, snapshot B (sharing
 * the leaves it has in common with A, as `stateDelta`'s fallback to
 * snapshots does), normalize both, delta. Done twice: the first pass also pays for
 * compiling and warming up the code (a fresh process), the second is what
 * a long-running `verity run` pays per pair. Prints one JSON line.
 */
async function childRound(dirA: string, dirB: string): Promise<void> {
  const def = benchDefinition(dirA);
  const passes: { wall: number; cpu: number; peakMiB: number }[] = [];
  let changes = "";
  for (let pass = 0; pass < 2; pass++) {
    const cpu0 = process.cpuUsage();
    const t = performance.now();
    // The pair shares its unchanged leaves, as stateDelta's fallback does.
    const cache = new PageCache();
    const sa = await takeSnapshot(def, dirA, { cache });
    const sb = await takeSnapshot(def, dirB, { cache });
    const d = computeDelta(normalize(sa, def), normalize(sb, def));
    const wall = performance.now() - t;
    const cpu = process.cpuUsage(cpu0);
    passes.push({
      wall,
      cpu: (cpu.user + cpu.system) / 1000,
      peakMiB: peakRssMiB(),
    });
    // Reset the peak (Linux: "5" to clear_refs) so the next pass reports its own.
    try {
      Deno.writeTextFileSync("/proc/self/clear_refs", "5");
    } catch {
      // Not Linux, or not allowed: the next peak includes this pass.
    }
    const count = (c: typeof d.business) =>
      `+${c.added.length} -${c.removed.length} ~${c.changed.length}`;
    changes = `items ${count(d.business)}, events ${count(d.append_only)}`;
  }
  console.log(
    JSON.stringify({
      cold: passes[0],
      warm: passes[1],
      changes,
    }),
  );
}

if (values.child) {
  await childRound(positionals[0]!, positionals[1]!);
  Deno.exit(0);
}

const work = await Deno.makeTempDir({ prefix: "verity-bench-" });
try {
  await Deno.mkdir(`${work}/a`);
  await Deno.mkdir(`${work}/b`);
  const t0 = performance.now();
  build(`${work}/a/state.db`);
  await Deno.copyFile(`${work}/a/state.db`, `${work}/b/state.db`);
  mutate(`${work}/b/state.db`);
  const size = (await Deno.stat(`${work}/a/state.db`)).size;
  console.log(
    `built a pair of ${2 * perTable} rows each (items + events, ${
      (size / 1048576).toFixed(1)
    } MiB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const verity: number[] = [];
  const sqldiff: number[] = [];
  const verityCpu: number[] = [];
  const sqldiffCpu: number[] = [];
  const peaks: number[] = [];
  const warmPeaks: number[] = [];
  const verityFresh: number[] = [];
  const verityFreshCpu: number[] = [];
  const config = new URL("../deno.json", import.meta.url).pathname;
  const haveTime = await Deno.stat("/usr/bin/time").then(
    () => true,
    () => false,
  );
  let verityChanges = "";
  let sqldiffLines = 0;
  for (let r = 0; r < rounds; r++) {
    const child = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        "--config",
        config,
        import.meta.filename!,
        "--child",
        `${work}/a`,
        `${work}/b`,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!child.success) throw new Error("the verity round failed");
    const res = JSON.parse(
      new TextDecoder().decode(child.stdout).trim().split("\n").at(-1)!,
    ) as {
      cold: { wall: number; cpu: number; peakMiB: number };
      warm: { wall: number; cpu: number; peakMiB: number };
      changes: string;
    };
    verity.push(res.warm.wall);
    verityCpu.push(res.warm.cpu);
    verityFresh.push(res.cold.wall);
    verityFreshCpu.push(res.cold.cpu);
    peaks.push(res.cold.peakMiB);
    warmPeaks.push(res.warm.peakMiB);
    verityChanges = res.changes;

    // CPU time too: other work on a shared machine inflates wall time.
    const cmd = haveTime ? "/usr/bin/time" : values.sqldiff;
    const args = [`${work}/a/state.db`, `${work}/b/state.db`];
    const t = performance.now();
    const out = await new Deno.Command(cmd, {
      args: haveTime ? ["-f", "%U %S", values.sqldiff, ...args] : args,
      stdout: "piped",
      stderr: "piped",
    }).output();
    sqldiff.push(performance.now() - t);
    if (!out.success) throw new Error("sqldiff failed");
    if (haveTime) {
      const [u, sy] = new TextDecoder().decode(out.stderr).trim().split("\n")
        .at(-1)!.split(" ").map(Number);
      sqldiffCpu.push(((u ?? NaN) + (sy ?? NaN)) * 1000);
    }
    sqldiffLines =
      new TextDecoder().decode(out.stdout).trim().split("\n").length;
    console.log(
      `round ${r + 1}: verity ${verity.at(-1)!.toFixed(0)} ms (cpu ${
        verityCpu.at(-1)!.toFixed(0)
      }; fresh process ${verityFresh.at(-1)!.toFixed(0)} ms, cpu ${
        verityFreshCpu.at(-1)!.toFixed(0)
      }), sqldiff ${sqldiff.at(-1)!.toFixed(0)} ms (cpu ${
        sqldiffCpu.at(-1)?.toFixed(0) ?? "?"
      })`,
    );
  }
  const mv = median(verity);
  const ms = median(sqldiff);
  console.log(
    `verity found: ${verityChanges}; sqldiff printed ${sqldiffLines} statements`,
  );
  console.log(
    `median verity snapshot+delta: ${
      mv.toFixed(0)
    } ms (fresh process, first pass: ${median(verityFresh).toFixed(0)} ms)`,
  );
  console.log(`median sqldiff:               ${ms.toFixed(0)} ms`);
  console.log(
    `ratio verity/sqldiff:         ${
      (mv / ms).toFixed(2)
    }x wall (target <= 3x)`,
  );
  if (sqldiffCpu.length > 0) {
    const cv = median(verityCpu);
    const cs = median(sqldiffCpu);
    console.log(
      `median cpu time:              verity ${cv.toFixed(0)} ms, sqldiff ${
        cs.toFixed(0)
      } ms, ratio ${ratioText(cv, cs, 2)}`,
    );
    const cf = median(verityFreshCpu);
    console.log(
      `  fresh process, first pass:  verity ${cf.toFixed(0)} ms, ratio ${
        ratioText(cf, cs, 2)
      }`,
    );
  }
  console.log(
    `peak memory (VmHWM, verity):  ${
      Math.max(...peaks).toFixed(0)
    } MiB for one pair in a fresh process; ${
      Math.max(...warmPeaks).toFixed(0)
    } MiB during the second pass (target < 1024 MiB)`,
  );
} finally {
  await Deno.remove(work, { recursive: true });
}
