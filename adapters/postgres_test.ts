/**
 * The postgres adapter on a real PostgreSQL (Debian's `postgresql`): typed
 * values, keys, sequences, refusal of unkeyed tables, and the isolation of
 * session roles.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { loadDefinition } from "../lib/definition/load.ts";
import { DefinitionError } from "../lib/errors.ts";
import {
  clusterFor,
  type PostgresCluster,
  templateName,
} from "../lib/state_io/postgres_cluster.ts";
import { resetState } from "../lib/state_io/reset.ts";
import { takeSnapshot } from "../lib/state_io/snapshot.ts";
import { computeDelta } from "../lib/state/delta.ts";
import { canonicalStateJson } from "../lib/state/keys.ts";
import { sha256Hex } from "../lib/evidence/canonical.ts";

async function definition(seed: string, adapterExtra = "") {
  const dir = await Deno.makeTempDir({ prefix: "verity-pg-def-" });
  await Deno.writeTextFile(`${dir}/seed.sql`, seed);
  await Deno.writeTextFile(
    `${dir}/fixture.toml`,
    `[fixture]
name = "pg"
command = ["{deno}", "run", "server.ts", "{postgres_url}"]
[state]
locations = ["postgres:app"]
[[adapters]]
kind = "postgres"
label = "app"
seed = "seed.sql"
${adapterExtra}
`,
  );
  return { dir, def: await loadDefinition(dir) };
}

type Client = {
  connect(): Promise<void>;
  query(t: string): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
};
function client(url: string): Client {
  const C = (pg as unknown as { Client: new (c: unknown) => Client }).Client;
  return new C({ connectionString: url });
}

const SEED = `
CREATE TABLE items (
  name text PRIMARY KEY,
  qty int8,
  price numeric(8, 3),
  seen timestamptz,
  doc json,
  grid int4[],
  raw bytea
);
INSERT INTO items VALUES
  ('b', 9223372036854775807, 1.500, '2026-03-01 12:00:00+02', '{"z": 1, "a": [true]}', '{{1,2},{3,NULL}}', '\\x0001'),
  ('B', 1, NULL, NULL, NULL, '{}', NULL),
  ('é', -1, 0.000, '2026-03-01 00:00:00.5+00', '"s"', NULL, '\\x');
CREATE SCHEMA ledger;
CREATE TABLE ledger.entries (id bigserial PRIMARY KEY, note text);
INSERT INTO ledger.entries (note) VALUES ('opening');
CREATE TABLE tags (item text, tag text);
INSERT INTO tags VALUES ('b', 'x'), ('b', 'x'), ('B', 'y');
`;

Deno.test("postgres: a session database is the seed, typed, keyed and sorted", async () => {
  const { dir, def } = await definition(
    SEED,
    `business = ["public.items", "ledger.entries"]
key = { "public.tags" = ["item", "tag"] }`,
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  let cluster: PostgresCluster | null = null;
  try {
    cluster = await clusterFor(def, `${work}/postgres`);
    assert.ok(cluster);
    const state = `${work}/s1/state`;
    await resetState(def, state, { postgres: cluster });
    const snap = await takeSnapshot(def, state, { postgres: cluster });
    const names = snap.regions.map((r) => `${r.name}:${r.category}`);
    assert.deepEqual(names, [
      "@database:unclassified",
      "ledger.@catalog:unclassified",
      "ledger.entries:business",
      "ledger.entries_id_seq:unclassified",
      "public.@catalog:unclassified",
      "public.items:business",
      "public.tags:unclassified",
    ]);
    const items = snap.regions.find((r) => r.name === "public.items")!;
    // Text keys sort by code point ("B" < "b" < "é"), as compareKeys does.
    assert.deepEqual(items.records.map((r) => r.key), [
      '["B"]',
      '["b"]',
      '["é"]',
    ]);
    assert.deepEqual(items.records[1]!.value, {
      name: "b",
      qty: { $int: "9223372036854775807" },
      price: { $numeric: "1.500" },
      seen: "2026-03-01 10:00:00+00",
      doc: { z: 1, a: [true] },
      grid: [[1, 2], [3, null]],
      raw: { $bytes: "AAE=" },
    });
    assert.deepEqual(items.records[2]!.value.raw, { $bytes: "" });
    assert.equal(items.records[2]!.value.seen, "2026-03-01 00:00:00.5+00");
    const seq = snap.regions.find((r) => r.name === "ledger.entries_id_seq")!;
    assert.deepEqual(seq.records, [{
      key: '["sequence"]',
      value: { last_value: 1, is_called: true },
    }]);
    // A declared key that is not unique: the duplicate shows, not vanishes.
    const tags = snap.regions.find((r) => r.name === "public.tags")!;
    assert.deepEqual(tags.records.map((r) => r.key), [
      '["B","y"]',
      '["b","x"]',
      '["b","x",{"dup":2}]',
    ]);
    assert.deepEqual(snap.problems, []);

    // The server's role writes; the next snapshot sees it; a new table
    // without a key is observed keyed by its whole row, with a problem line.
    const conn = cluster.connection(state, def.adapters[0]!);
    const c = client(conn.url);
    await c.connect();
    await c.query("UPDATE items SET qty = 2 WHERE name = 'B'");
    await c.query(
      "CREATE TABLE scratch (v int); INSERT INTO scratch VALUES (7)",
    );
    await c.end();
    const after = await takeSnapshot(def, state, { postgres: cluster });
    const b = after.regions.find((r) => r.name === "public.items")!.records[0]!;
    assert.equal(b.value.qty, 2);
    assert.ok(after.regions.some((r) => r.name === "public.scratch"));
    assert.match(
      after.problems.join("\n"),
      /public\.scratch has no primary key/,
    );

    // A second reset is the seed again, and dropping removes the database.
    const state2 = `${work}/s2/state`;
    await resetState(def, state2, { postgres: cluster });
    const again = await takeSnapshot(def, state2, { postgres: cluster });
    assert.deepEqual(again.regions, snap.regions);
    await cluster.dropSession(state, def.adapters[0]!);
    await assert.rejects(
      takeSnapshot(def, state, { postgres: cluster }),
      /does not exist/,
    );
  } finally {
    await cluster?.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
  if (cluster) {
    await assert.rejects(Deno.stat(cluster.root), Deno.errors.NotFound);
  }
});

Deno.test("postgres: a session role cannot escape its database", async () => {
  const { dir, def } = await definition(
    "CREATE TABLE t (id int PRIMARY KEY);",
    'business = ["public.t"]',
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  const cluster = (await clusterFor(def, `${work}/postgres`))!;
  try {
    const a = def.adapters[0]!;
    await resetState(def, `${work}/a/state`, { postgres: cluster });
    await resetState(def, `${work}/b/state`, { postgres: cluster });
    const ca = cluster.connection(`${work}/a/state`, a);
    const cb = cluster.connection(`${work}/b/state`, a);
    const c = client(ca.url);
    await c.connect();
    await c.query("INSERT INTO t VALUES (1)");
    await assert.rejects(
      c.query("COPY t TO PROGRAM 'id'"),
      /permission denied|must be superuser|pg_execute_server_program/,
    );
    await assert.rejects(
      c.query("SELECT pg_read_file('PG_VERSION')"),
      /permission denied/,
    );
    await c.end();
    // Another session's database, with this session's role.
    const other = client(ca.url.replace(`/${ca.db}?`, `/${cb.db}?`));
    await assert.rejects(other.connect(), /permission denied/);
    // Another role on the same socket: verity's superuser, its observer, or
    // another session's role with this session's password.
    for (const role of ["verity", "verity_observer", cb.user]) {
      const as = client(
        ca.url.replace(`//${ca.user}:`, `//${role}:`).replace(
          `/${ca.db}?`,
          "/postgres?",
        ),
      );
      await assert.rejects(as.connect(), /password authentication failed/);
    }
    const bare = client(
      `postgresql://verity@localhost/postgres?host=${
        encodeURIComponent(cluster.socketDir)
      }&port=5432`,
    );
    await assert.rejects(bare.connect(), /password|SASL/);
  } finally {
    await cluster.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("postgres: listen = \"tcp\": sessions connect to 127.0.0.1 on the cluster's free port with their own password; verity's roles cannot log in over TCP", async () => {
  const { dir, def } = await definition(
    "CREATE TABLE t (id int PRIMARY KEY);",
    'listen = "tcp"\nbusiness = ["public.t"]',
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  const cluster = (await clusterFor(def, `${work}/postgres`))!;
  try {
    assert.equal(cluster.tcp, true);
    assert.notEqual(cluster.port, 5432);
    const a = def.adapters[0]!;
    assert.equal(a.listen, "tcp");
    await resetState(def, `${work}/a/state`, { postgres: cluster });
    const ca = cluster.connection(`${work}/a/state`, a);
    assert.equal(ca.host, "127.0.0.1");
    assert.equal(ca.port, String(cluster.port));
    assert.equal(ca.socket, null);
    assert.equal(ca.tcpPort, cluster.port);
    assert.match(ca.password, /^[0-9a-f]{32}$/);
    assert.equal(
      ca.url,
      `postgresql://${ca.user}:${ca.password}@127.0.0.1:${cluster.port}/${ca.db}`,
    );
    const c = client(ca.url);
    await c.connect();
    await c.query("INSERT INTO t VALUES (1)");
    await c.end();
    // A wrong password, and the superuser without its password, are refused.
    const wrong = client(ca.url.replace(ca.password, "0".repeat(32)));
    await assert.rejects(wrong.connect(), /password authentication failed/);
    const admin = client(
      `postgresql://verity@127.0.0.1:${cluster.port}/postgres`,
    );
    await assert.rejects(admin.connect(), /password|SASL/);
  } finally {
    await cluster.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test('postgres: listen accepts only "socket" or "tcp", naming the key', async () => {
  await assert.rejects(
    definition("SELECT 1;", 'listen = "udp"'),
    /adapters\[0\]\.listen: expected "socket" \(the default: a Unix socket\) or "tcp"/,
  );
});

Deno.test("postgres: the schema catalog is state: creating a view, replacing a function, disabling a trigger or dropping a function changes the catalog region (classifiable like a table)", async () => {
  const seed = `
CREATE TABLE t (id int PRIMARY KEY, n int);
CREATE VIEW big AS SELECT id FROM t WHERE n > 10;
CREATE FUNCTION bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.n := NEW.n + 1; RETURN NEW; END $$;
CREATE TRIGGER t_bump BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION bump();
CREATE SCHEMA other;
CREATE FUNCTION other.twice(x int) RETURNS int LANGUAGE sql AS 'SELECT x * 2';
`;
  const { dir, def } = await definition(
    seed,
    'business = ["public.t", "public.@catalog"]',
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  const cluster = (await clusterFor(def, `${work}/postgres`))!;
  try {
    const a = def.adapters[0]!;
    const state = `${work}/s/state`;
    await resetState(def, state, { postgres: cluster });
    const catalog = async () => {
      const snap = await takeSnapshot(def, state, { postgres: cluster });
      return Object.fromEntries(
        snap.regions.filter((r) => r.name.endsWith(".@catalog")).map((r) => [
          `${r.name}:${r.category}`,
          Object.fromEntries(
            r.records.map((x) => [
              x.key,
              String((x.value as { definition: string }).definition),
            ]),
          ),
        ]),
      );
    };
    const before = await catalog();
    assert.deepEqual(Object.keys(before), [
      "other.@catalog:unclassified",
      "public.@catalog:business",
    ]);
    assert.deepEqual(Object.keys(before["public.@catalog:business"]!), [
      '["function","bump()"]',
      '["index","t_pkey"]',
      '["trigger","t.t_bump"]',
      '["view","big"]',
    ]);
    assert.match(
      before["public.@catalog:business"]!['["view","big"]']!,
      /n > 10/,
    );
    assert.deepEqual(Object.keys(before["other.@catalog:unclassified"]!), [
      '["function","twice(x integer)"]',
    ]);
    const c = client(cluster.connection(state, a).url);
    await c.connect();
    await c.query("CREATE VIEW small AS SELECT id FROM t WHERE n < 3");
    await c.query(
      "CREATE OR REPLACE FUNCTION bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.n := 0; RETURN NEW; END $$",
    );
    await c.query("ALTER TABLE t DISABLE TRIGGER t_bump");
    await c.query("DROP FUNCTION other.twice(int)");
    await c.end();
    const after = await catalog();
    const pub = after["public.@catalog:business"]!;
    assert.deepEqual(Object.keys(pub), [
      '["function","bump()"]',
      '["index","t_pkey"]',
      '["trigger","t.t_bump"]',
      '["view","big"]',
      '["view","small"]',
    ]);
    assert.match(pub['["function","bump()"]']!, /NEW\.n := 0/);
    assert.match(pub['["trigger","t.t_bump"]']!, /\(DISABLED\)$/);
    assert.deepEqual(after["other.@catalog:unclassified"], {});
  } finally {
    await cluster.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("postgres: a server cannot hide a write from the observer: rows behind a FORCEd row-level security policy, policies, comments, indexes, large objects, casts and its database's settings are observed; the template and other databases refuse it (issue 32)", async () => {
  const { dir, def } = await definition(
    `CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE notes (id int PRIMARY KEY, title text NOT NULL, m mood);
INSERT INTO notes VALUES (1, 'bolts', 'ok');`,
    'business = ["public.notes"]',
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  const cluster = (await clusterFor(def, `${work}/postgres`))!;
  try {
    const a = def.adapters[0]!;
    const state = `${work}/s/state`;
    const other = `${work}/o/state`;
    await resetState(def, state, { postgres: cluster });
    await resetState(def, other, { postgres: cluster });
    const seed = await takeSnapshot(def, state, { postgres: cluster });
    const conn = cluster.connection(state, a);
    const c = client(conn.url);
    await c.connect();
    // The observer reads through every policy, and cannot write.
    assert.deepEqual(
      (await c.query(
        "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'verity_observer'",
      )).rows,
      [{ rolsuper: false, rolbypassrls: true }],
    );
    for (
      const sql of [
        "ALTER TABLE notes ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE notes FORCE ROW LEVEL SECURITY",
        "CREATE POLICY seen ON notes TO verity_observer USING (id <= 1)",
        "CREATE POLICY mine ON notes TO CURRENT_USER USING (true) WITH CHECK (true)",
        "INSERT INTO notes VALUES (2, 'hidden', 'sad')",
        "COMMENT ON TABLE notes IS 'reviewed'",
        "COMMENT ON COLUMN notes.title IS 'the title'",
        `COMMENT ON DATABASE ${conn.db} IS 'mine'`,
        "CREATE INDEX notes_title ON notes (title)",
        "SELECT lo_from_bytea(0, '\\x736563726574'::bytea)",
        `ALTER DATABASE ${conn.db} SET work_mem = '8MB'`,
        // A search path that would let the server's functions shadow the
        // catalog functions snapshots call, and one such function.
        `ALTER DATABASE ${conn.db} SET search_path = public, pg_catalog`,
        "CREATE FUNCTION public.pg_get_indexdef(oid) RETURNS text LANGUAGE sql AS 'SELECT ''x''::text'",
        "CREATE FUNCTION calm(mood) RETURNS text LANGUAGE sql AS 'SELECT ''ok''::text'",
        "CREATE CAST (mood AS text) WITH FUNCTION calm(mood)",
      ]
    ) await c.query(sql);
    // The template, the maintenance databases and another session's
    // database refuse it.
    const tpl = templateName("app");
    const otherDb = cluster.connection(other, a).db;
    try {
      for (
        const sql of [
          `ALTER DATABASE ${tpl} SET work_mem = '8MB'`,
          `ALTER DATABASE ${tpl} WITH ALLOW_CONNECTIONS true`,
          `ALTER DATABASE ${tpl} RENAME TO stolen`,
          `ALTER DATABASE ${otherDb} SET work_mem = '8MB'`,
          `COMMENT ON DATABASE ${otherDb} IS 'x'`,
        ]
      ) await assert.rejects(c.query(sql), /must be owner/, sql);
    } finally {
      await c.end();
    }
    for (const db of [tpl, otherDb, "postgres", "template1"]) {
      const elsewhere = client(conn.url.replace(`/${conn.db}?`, `/${db}?`));
      const refusal = await elsewhere.connect().then(
        () => elsewhere.end().then(() => "connected"),
        (e: Error) => e.message,
      );
      assert.match(
        refusal,
        /permission denied|not currently accepting connections/,
        db,
      );
    }
    const after = await takeSnapshot(def, state, { postgres: cluster });
    const region = (name: string) =>
      Object.fromEntries(
        after.regions.find((r) => r.name === name)!.records.map((x) => [
          x.key,
          (x.value as { definition?: string }).definition ?? x.value,
        ]),
      );
    assert.deepEqual(Object.keys(region("public.notes")), ["[1]", "[2]"]);
    const cat = region("public.@catalog");
    assert.equal(cat['["row_security","notes"]'], "enabled, forced");
    assert.equal(
      cat['["policy","notes.seen"]'],
      "AS PERMISSIVE FOR ALL TO verity_observer USING ((id <= 1))",
    );
    assert.equal(
      cat['["policy","notes.mine"]'],
      "AS PERMISSIVE FOR ALL TO <database owner> USING (true) WITH CHECK (true)",
    );
    assert.equal(cat['["comment","table public.notes"]'], "reviewed");
    assert.equal(
      cat['["comment","table column public.notes.title"]'],
      "the title",
    );
    assert.equal(
      cat['["index","notes_title"]'],
      "CREATE INDEX notes_title ON public.notes USING btree (title)",
    );
    const db = region("@database");
    assert.equal(db['["comment","database"]'], "mine");
    assert.equal(db['["setting","database","work_mem"]'], "8MB");
    assert.equal(
      db['["setting","database","search_path"]'],
      "public, pg_catalog",
    );
    assert.equal(
      db['["cast","public.mood AS text"]'],
      "WITH FUNCTION public.calm(public.mood)",
    );
    const lo = Object.entries(db).filter(([k]) =>
      k.startsWith('["large_object",')
    );
    assert.deepEqual(lo.map(([, v]) => v), [
      `size 6 sha256 ${
        // sha256 of the page number (int4, big-endian 0) and "secret"
        sha256Hex(
          new Uint8Array([0, 0, 0, 0, ...new TextEncoder().encode("secret")]),
        )}`,
    ]);
    // Every one of those is a change from the seed; a new session is the
    // seed again (the template did not change).
    const d = computeDelta(seed, after);
    assert.deepEqual(d.business.added, [{
      region: "app:public.notes",
      key: "[2]",
    }]);
    assert.deepEqual(
      [...new Set(d.unclassified.added.map((x) => x.region))].sort(),
      ["app:@database", "app:public.@catalog"],
    );
    const fresh = `${work}/f/state`;
    await resetState(def, fresh, { postgres: cluster });
    const again = await takeSnapshot(def, fresh, { postgres: cluster });
    assert.deepEqual(again.regions, seed.regions);
  } finally {
    await cluster.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("postgres: a seeded table without a primary or declared key is refused", async () => {
  const { dir, def } = await definition("CREATE TABLE log (line text);");
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  try {
    await assert.rejects(
      clusterFor(def, `${work}/postgres`),
      (e: unknown) =>
        e instanceof DefinitionError && e.keyPath === "adapters[0].key" &&
        /public\.log has no primary key/.test(e.message),
    );
    // The failed start left no cluster behind.
    await assert.rejects(Deno.stat(`${work}/postgres`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("postgres: a failing seed names the adapter's seed", async () => {
  const { dir, def } = await definition("CREATE TABLE broken (;");
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  try {
    await assert.rejects(
      clusterFor(def, `${work}/postgres`),
      (e: unknown) =>
        e instanceof DefinitionError && e.keyPath === "adapters[0].seed" &&
        /syntax error/.test(e.message),
    );
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "postgres: as root, a cluster under a closed directory that is not verity's moves to /tmp and leaves its permissions alone",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const { PostgresCluster } = await import(
      "../lib/state_io/postgres_cluster.ts"
    );
    const closed = await Deno.makeTempDir({ prefix: "closed-" });
    await Deno.chmod(closed, 0o700);
    const cluster = await PostgresCluster.start(`${closed}/pg`);
    try {
      assert.ok(cluster.root.startsWith("/tmp/verity-pg-"), cluster.root);
      assert.equal((await Deno.stat(closed)).mode! & 0o777, 0o700);
    } finally {
      await cluster.stop();
      await Deno.remove(closed, { recursive: true });
    }
    await assert.rejects(Deno.stat(cluster.root), Deno.errors.NotFound);
  },
});

const EVERY_TYPE = `
CREATE DOMAIN positive AS int4 CHECK (VALUE > 0);
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE every (
  id int8 PRIMARY KEY,
  i2 int2, i4 int4, d positive, o oid,
  f4 float4, f8 float8, num numeric, money_v money,
  b bool, t text, vc varchar(20), ch char(4), nm name,
  by bytea, j json, jb jsonb,
  ts timestamp, tz timestamptz, dt date, tm time, tt timetz, iv interval,
  u uuid, ip inet, cidr_v cidr, mac macaddr, bits bit varying(8),
  pt point, bx box, rng int4range, mo mood, x xml, tsv tsvector,
  ai int4[], at text[], ab bool[], aj jsonb[], an numeric[], af float8[],
  abx box[], aby bytea[], lb int4[]
);
INSERT INTO every VALUES
  (1, -32768, 2147483647, 5, 4294967295,
   'NaN', '-0', 123456789012345678901234567890.1234567890, '-12.34',
   true, E'tab\\there\\nnew\\rline\\\\back\\\\N', 'vc', 'ab', 'nm',
   '\\x00ff5c0a09', '{"b": 1, "a": [1.0, 12345678901234567891, "x\\\\y\\ty"]}',
   '{"n": 12345678901234567.891, "s": "tab\\tnl\\n\\\\"}',
   '2026-01-01 00:00:00.123456', '2026-06-01 12:00:00+05:30', '2026-02-28', '23:59:59.999999', '10:00+02', '1 year 2 mons -3 days 04:05:06.7',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '10.0.0.1', '10.0.0.0/8', '08:00:2b:01:02:03', B'1011',
   '(1.5,-2)', '((0,0),(1,1))', '[1,10)', 'ok', '<a>x</a>', 'a fat cat',
   '{{1,2},{3,NULL}}', ARRAY['a,b', 'say "hi"', NULL, 'NULL', E'tab\\there', E'back\\\\slash', ''], '{t,f,NULL}',
   ARRAY['{"k": 1e400}'::jsonb, NULL], '{1.50,NaN,-Infinity}', '{-0,Infinity,1e-300}',
   ARRAY['((0,0),(1,1))'::box, '((2,2),(3,3))'::box], ARRAY['\\x01'::bytea, '\\x'::bytea, NULL],
   '[0:1]={7,8}'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, '', NULL, NULL, NULL,
   '\\x', 'null', '"\\\\N"', NULL, '-infinity', 'infinity', NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'empty', NULL, NULL, NULL,
   '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', NULL),
  (9223372036854775807, 0, 0, 1, 0, 1.5, 0.1, 0.0, 0, NULL, E'\\\\N', E'\\t', ' ', '',
   NULL, '1', '[]', NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE keyed_text (k text PRIMARY KEY, v int);
INSERT INTO keyed_text SELECT 'k' || g, g FROM generate_series(1, 3000) g;
INSERT INTO keyed_text VALUES ('Z', 0), ('é', 1), ('', 2), (E'a\\tb', 3);
CREATE TABLE proto (id int PRIMARY KEY, "__proto__" jsonb, "constructor" text);
INSERT INTO proto VALUES (1, '{"a": 1}', 'c');
CREATE TABLE nokey_nullable (a int, b text);
INSERT INTO nokey_nullable VALUES (NULL, 'x'), (2, NULL), (1, 'y'), (10, 'z');
`;

Deno.test("postgres: the reader observes every type exactly (NULLs, arrays, bytea, timestamptz, numeric, json/jsonb, escapes)", async () => {
  const { dir, def } = await definition(
    EVERY_TYPE,
    'key = { "public.nokey_nullable" = ["a"] }',
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  let cluster: PostgresCluster | null = null;
  try {
    cluster = await clusterFor(def, `${work}/postgres`);
    assert.ok(cluster);
    const a = def.adapters[0]!;
    const state = `${work}/s/state`;
    await resetState(def, state, { postgres: cluster });
    const conn = cluster.connection(state, a);
    const c = client(conn.url);
    await c.connect();
    // A table without columns (and so without a key): one empty row each.
    await c.query(
      "CREATE TABLE empty_cols (); INSERT INTO empty_cols DEFAULT VALUES; INSERT INTO empty_cols DEFAULT VALUES",
    );
    await c.end();
    const db = conn.db;
    const seen = await cluster.observe(db, a);
    const every = seen.tables.find((t) => t.name === "public.every")!;
    assert.deepEqual(every.records.map((r) => r.key), [
      "[1]",
      "[2]",
      '[{"$int":"9223372036854775807"}]',
    ]);
    const one = every.records[0]!.value;
    assert.equal(one.t, "tab\there\nnew\rline\\back\\N");
    assert.deepEqual(one.by, { $bytes: "AP9cCgk=" });
    assert.deepEqual(one.num, {
      $numeric: "123456789012345678901234567890.1234567890",
    });
    assert.deepEqual(one.f8, { $real: "-0" });
    assert.equal(one.b, true);
    assert.deepEqual(one.jb, {
      n: { $numeric: "12345678901234567.891" },
      s: "tab\tnl\n\\",
    });
    assert.deepEqual(one.j, {
      b: 1,
      a: [1, { $int: "12345678901234567891" }, "x\\y\ty"],
    });
    assert.equal(one.tz, "2026-06-01 06:30:00+00");
    assert.deepEqual(one.at, [
      "a,b",
      'say "hi"',
      null,
      "NULL",
      "tab\there",
      "back\\slash",
      "",
    ]);
    assert.deepEqual(one.aj, [{ k: { $int: `1${"0".repeat(400)}` } }, null]);
    assert.deepEqual(one.af, [{ $real: "-0" }, { $real: "Infinity" }, 1e-300]);
    assert.equal(one.lb, "[0:1]={7,8}");
    const two = every.records[1]!.value;
    assert.equal(two.b, false);
    assert.equal(two.jb, "\\N");
    assert.equal(two.j, null);
    assert.equal(two.i2, null);
    assert.equal(every.records[2]!.value.t, "\\N");
    assert.equal(every.records[2]!.value.vc, "\t");
    const text = seen.tables.find((t) => t.name === "public.keyed_text")!;
    assert.equal(text.records.length, 3004);
    assert.deepEqual(text.records.slice(0, 3).map((r) => r.key), [
      '[""]',
      '["Z"]',
      '["a\\tb"]',
    ]);
    // A column named __proto__ is a field like any other (Deno has no
    // Object.prototype.__proto__ setter).
    const proto = seen.tables.find((t) => t.name === "public.proto")!;
    assert.equal(
      canonicalStateJson(proto.records[0]!.value),
      '{"__proto__":{"a":1},"constructor":"c","id":1}',
    );
    const nokey = seen.tables.find((t) => t.name === "public.nokey_nullable")!;
    assert.deepEqual(nokey.records.map((r) => r.key), [
      "[null]",
      "[1]",
      "[2]",
      "[10]",
    ]);
    const empty = seen.tables.find((t) => t.name === "public.empty_cols")!;
    assert.deepEqual(empty.records.map((r) => r.key), ["[]", '[{"dup":2}]']);
    assert.deepEqual(seen.problems, [
      "app: table public.empty_cols has no primary key and no declared key; rows are keyed by their whole value",
    ]);
  } finally {
    await cluster?.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("postgres: values are exact: a change in a jsonb number's 17th significant digit, an int8 near 2^63, a 40-digit numeric, -0 or a bool is a change", async () => {
  const { dir, def } = await definition(
    `CREATE TABLE v (id int PRIMARY KEY, doc jsonb, big int8, num numeric, f float8, flag bool);
INSERT INTO v VALUES (1, '{"n": 1234567890123456789, "r": 0.12345678901234566}', 9223372036854775806,
  1234567890123456789012345678901234567890, 0, false);`,
    'business = ["public.v"]',
  );
  const work = await Deno.makeTempDir({ prefix: "verity-pg-test-" });
  let cluster: PostgresCluster | null = null;
  try {
    cluster = await clusterFor(def, `${work}/postgres`);
    assert.ok(cluster);
    const state = `${work}/s/state`;
    await resetState(def, state, { postgres: cluster });
    const c = client(cluster.connection(state, def.adapters[0]!).url);
    await c.connect();
    const changes: [string, string][] = [
      [`doc = '{"n": 1234567890123456788, "r": 0.12345678901234566}'`, "doc"],
      [`doc = '{"n": 1234567890123456788, "r": 0.12345678901234567}'`, "doc"],
      ["big = 9223372036854775807", "big"],
      ["num = 1234567890123456789012345678901234567891", "num"],
      ["f = '-0'", "f"],
      ["flag = true", "flag"],
    ];
    let before = await takeSnapshot(def, state, { postgres: cluster });
    for (const [set, field] of changes) {
      await c.query(`UPDATE v SET ${set} WHERE id = 1`);
      const after = await takeSnapshot(def, state, { postgres: cluster });
      const d = computeDelta(before, after);
      assert.deepEqual(
        d.business.changed.map((ch) =>
          ch.fields.map((f) => f.field.split(/[.[]/)[0])
        ),
        [[field]],
        `UPDATE v SET ${set}`,
      );
      before = after;
    }
    await c.end();
  } finally {
    await cluster?.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
