/**
 * Benchmark: the postgres adapter on a real PostgreSQL.
 *
 * 1. Snapshot + delta of a 1,000,000-row pair against `pg_dump --data-only`
 *    of the same two databases. A private cluster is started (as for a
 *    run); a template with two tables of 500,000 rows each (`items`:
 *    integer key, text, integer, numeric, timestamptz; `events`: bigint
 *    key, integer, text, jsonb) is seeded; database A and database B are
 *    created from it, and B gets 5 rows changed, 5 inserted and 5 deleted
 *    in each table. Each round times, interleaved:
 *      - verity: observe A, observe B (read-only transaction, one query
 *        per table, typed values), normalize, computeDelta;
 *      - pg_dump --data-only of A and of B (to /dev/null).
 *    The delta must find exactly the planted changes.
 * 2. Per-session overhead on a fixture-sized template (the pg-liar-readonly
 *    seed) and on the 1M-row template: create the session's role and
 *    database from the template, snapshot it, drop it.
 *
 * Prints medians side by side and the ratios.
 *
 * Run: deno run --allow-all scripts/bench_postgres.ts [--rounds N] [--rows N] [--sessions N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import type { AdapterDef, Definition } from "../lib/definition/types.ts";
import { PostgresCluster } from "../lib/state_io/postgres_cluster.ts";
import { postgresRegions } from "../lib/state_io/snapshot.ts";
import { normalize } from "../lib/state/normalize.ts";
import { computeDelta } from "../lib/state/delta.ts";
import type { Snapshot } from "../lib/state/types.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    rows: { type: "string", default: "1000000" },
    sessions: { type: "string", default: "20" },
  },
  strict: true,
});
const rounds = Number(values.rounds);
const perTable = Math.floor(Number(values.rows) / 2);
const sessions = Number(values.sessions);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const work = await Deno.makeTempDir({ prefix: "verity-bench-pg-" });
const ROOT = new URL("..", import.meta.url).pathname;

function adapter(label: string, seed: string, business: string[]): AdapterDef {
  return {
    kind: "postgres",
    label,
    seed,
    business,
    append_only: [],
    mask: [],
    key: {},
  };
}

const bigSeed = `
CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, qty integer NOT NULL, price numeric(10,2), updated_at timestamptz NOT NULL);
CREATE TABLE events (id bigint PRIMARY KEY, item_id integer NOT NULL, kind text NOT NULL, meta jsonb);
INSERT INTO items SELECT g, 'item-' || g, g % 97, (g % 1000) / 4.0, timestamptz '2026-01-01' + g * interval '1 second' FROM generate_series(1, ${perTable}) g;
INSERT INTO events SELECT g, g % ${perTable} + 1, (ARRAY['create','update','view','delete','share'])[g % 5 + 1], jsonb_build_object('n', g % 13) FROM generate_series(1, ${perTable}) g;
`;
await Deno.writeTextFile(`${work}/big.sql`, bigSeed);
const big = adapter("big", "big.sql", ["public.items", "public.events"]);
const small = adapter(
  "small",
  `${ROOT}fixtures/pg-liar-readonly/seed.sql`,
  ["public.notes"],
);
const def: Pick<Definition, "file" | "dir" | "adapters"> = {
  file: `${work}/bench.toml`,
  dir: work,
  adapters: [big, small],
};

const cluster = await PostgresCluster.start(`${work}/postgres`);
try {
  let t = performance.now();
  await cluster.seedTemplate(def, 0);
  await cluster.seedTemplate(def, 1);
  console.log(
    `templates seeded: ${perTable * 2} rows + fixture seed in ${
      Math.round(performance.now() - t)
    } ms`,
  );

  const a = await cluster.createSession(`${work}/a`, big);
  const b = await cluster.createSession(`${work}/b`, big);
  await psql(
    b.db,
    `UPDATE items SET qty = qty + 1 WHERE id IN (10, 20, 30, 40, 50);
     INSERT INTO items SELECT g, 'new-' || g, 1, 1.00, now() FROM generate_series(${
      perTable + 1
    }, ${perTable + 5}) g;
     DELETE FROM items WHERE id IN (100, 200, 300, 400, 500);
     UPDATE events SET meta = '{"n": -1}' WHERE id IN (11, 21, 31, 41, 51);
     INSERT INTO events SELECT g, 1, 'view', NULL FROM generate_series(${
      perTable + 1
    }, ${perTable + 5}) g;
     DELETE FROM events WHERE id IN (101, 201, 301, 401, 501);`,
  );

  const snap = async (db: string): Promise<Snapshot> => {
    const obs = await cluster.observe(db, big);
    return normalize(
      { regions: postgresRegions(big, obs), problems: obs.problems },
      { adapters: [big] },
    );
  };
  const verityMs: number[] = [];
  const dumpMs: number[] = [];
  let found = "";
  for (let r = 0; r < rounds; r++) {
    t = performance.now();
    const d = computeDelta(await snap(a.db), await snap(b.db));
    verityMs.push(performance.now() - t);
    const bz = d.business;
    found = `+${bz.added.length} -${bz.removed.length} ~${bz.changed.length}`;
    t = performance.now();
    await pgDump(a.db);
    await pgDump(b.db);
    dumpMs.push(performance.now() - t);
  }
  if (found !== "+10 -10 ~10") {
    throw new Error(`the delta found ${found}, expected +10 -10 ~10`);
  }
  const rss = Math.round(Deno.memoryUsage().rss / 2 ** 20);
  console.log(
    `\nsnapshot+delta of a ${
      perTable * 2
    }-row pair vs pg_dump --data-only of both (${rounds} rounds)`,
  );
  console.log(`  verity found (business): ${found} (planted: +10 -10 ~10)`);
  console.log(
    `  median verity snapshot A + B + delta: ${
      Math.round(median(verityMs))
    } ms`,
  );
  console.log(
    `  median pg_dump --data-only A + B:     ${Math.round(median(dumpMs))} ms`,
  );
  console.log(
    `  ratio verity/pg_dump:                 ${
      (median(verityMs) / median(dumpMs)).toFixed(2)
    }x wall`,
  );
  console.log(
    `  verity process RSS after the rounds:  ${rss} MiB`,
  );

  for (
    const [name, ad] of [["fixture-sized", small], ["1M-row", big]] as const
  ) {
    const create: number[] = [];
    const observe: number[] = [];
    const drop: number[] = [];
    const n = ad === big ? Math.min(sessions, 5) : sessions;
    for (let i = 0; i < n; i++) {
      const dir = `${work}/s-${name}-${i}`;
      t = performance.now();
      const c = await cluster.createSession(dir, ad);
      create.push(performance.now() - t);
      t = performance.now();
      await cluster.observe(c.db, ad);
      observe.push(performance.now() - t);
      t = performance.now();
      await cluster.dropSession(dir, ad);
      drop.push(performance.now() - t);
    }
    const m = [median(create), median(observe), median(drop)];
    console.log(
      `\nper-session overhead, ${name} template (${n} sessions, medians)`,
    );
    console.log(
      `  create role + database from template: ${m[0]!.toFixed(1)} ms`,
    );
    console.log(
      `  snapshot (read-only transaction):     ${m[1]!.toFixed(1)} ms`,
    );
    console.log(
      `  drop database + role:                 ${m[2]!.toFixed(1)} ms`,
    );
    console.log(
      `  total:                                ${
        (m[0]! + m[1]! + m[2]!).toFixed(1)
      } ms`,
    );
  }
} finally {
  await cluster.stop();
  await Deno.remove(work, { recursive: true }).catch(() => {});
}

async function psql(db: string, sql: string): Promise<void> {
  const r = await new Deno.Command(`${cluster.bin}/psql`, {
    args: [
      "-X",
      "-q",
      "-v",
      "ON_ERROR_STOP=1",
      "-h",
      cluster.socketDir,
      "-U",
      "verity",
      "-d",
      db,
      "-c",
      sql,
    ],
    env: cluster.adminEnv(),
    stdout: "null",
    stderr: "piped",
  }).output();
  if (r.code !== 0) throw new Error(new TextDecoder().decode(r.stderr));
}

async function pgDump(db: string): Promise<void> {
  const r = await new Deno.Command(`${cluster.bin}/pg_dump`, {
    args: [
      "--data-only",
      "-h",
      cluster.socketDir,
      "-U",
      "verity",
      "-d",
      db,
      "-f",
      "/dev/null",
    ],
    env: cluster.adminEnv(),
    stdout: "null",
    stderr: "piped",
  }).output();
  if (r.code !== 0) throw new Error(new TextDecoder().decode(r.stderr));
}
