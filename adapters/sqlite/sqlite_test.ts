import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { readSchema } from "./btree.ts";
import { imagePageSource, type PageSource } from "./format.ts";
import { planSchema } from "./plan.ts";
import { readSqlite } from "./read.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { PageCache, streamTables } from "./stream.ts";
import { compareKeys } from "../../lib/state/keys.ts";
import { sortByKey } from "./compare.ts";

/** The image of a database built by a SQL script. */
function buildSqliteImage(script: string): Uint8Array {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec(script);
    return db.serialize();
  } finally {
    db.close();
  }
}

function table(obs: ReturnType<typeof readSqlite>, name: string) {
  const t = obs.tables.find((x) => x.name === name);
  assert.ok(t, `table ${name} observed`);
  return t;
}

Deno.test("sqlite: every table, typed values, rows keyed by primary key or rowid", () => {
  const image = buildSqliteImage(
    `CREATE TABLE items (key TEXT PRIMARY KEY, qty INTEGER, price REAL, data BLOB, note TEXT);
     INSERT INTO items VALUES ('b', 2, 2.5, x'00ff10', NULL), ('a', 9007199254740993, 1e999, NULL, 'é😀');
     CREATE TABLE log (msg TEXT);
     INSERT INTO log VALUES ('second'), ('first');
     CREATE TABLE pair (x INTEGER, y TEXT, v TEXT, PRIMARY KEY (y, x)) WITHOUT ROWID;
     INSERT INTO pair VALUES (2, 'a', 'p'), (1, 'b', 'q'), (1, 'a', 'r');
     CREATE TABLE counters (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER);
     INSERT INTO counters (n) VALUES (10);`,
  );
  const obs = readSqlite(image);
  assert.deepEqual(obs.problems, []);
  assert.deepEqual(obs.tables.map((t) => t.name), [
    "counters",
    "items",
    "log",
    "pair",
    "sqlite_schema",
    "sqlite_sequence",
  ], "SQLite's own state beside the tables");
  const items = table(obs, "items");
  assert.deepEqual(items.identity, ["key"]);
  assert.deepEqual(items.records, [
    {
      key: '["a"]',
      value: {
        key: "a",
        qty: { $int: "9007199254740993" },
        price: { $real: "Infinity" },
        data: null,
        note: "é😀",
      },
    },
    {
      key: '["b"]',
      value: {
        key: "b",
        qty: 2,
        price: 2.5,
        data: { $bytes: "AP8Q" },
        note: null,
      },
    },
  ]);
  const log = table(obs, "log");
  assert.deepEqual(log.identity, ["rowid"]);
  assert.deepEqual(log.records, [{ key: "[1]", value: { msg: "second" } }, {
    key: "[2]",
    value: { msg: "first" },
  }]);
  assert.deepEqual(table(obs, "pair").records.map((r) => r.key), [
    '["a",1]',
    '["a",2]',
    '["b",1]',
  ]);
  assert.deepEqual(table(obs, "counters").records, [{
    key: "[1]",
    value: { id: 1, n: 10 },
  }]);
  // Internal tables are observed, by rowid.
  assert.deepEqual(table(obs, "sqlite_sequence").records, [
    { key: "[1]", value: { name: "counters", seq: 1 } },
  ]);
  assert.deepEqual(table(obs, "sqlite_schema").records, [
    { key: '["header","application_id"]', value: { value: 0 } },
    { key: '["header","user_version"]', value: { value: 0 } },
    { key: '["index","sqlite_autoindex_items_1"]', value: { sql: null } },
  ]);
});

Deno.test("sqlite: header fields, schema objects and statistics are state", () => {
  const base =
    `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');`;
  const meta = (sql: string) =>
    table(readSqlite(buildSqliteImage(base + sql)), "sqlite_schema")
      .records;
  assert.deepEqual(
    meta("PRAGMA user_version = 7;").find((r) =>
      r.key === '["header","user_version"]'
    )?.value,
    { value: 7 },
  );
  assert.deepEqual(
    meta("PRAGMA application_id = 42;").find((r) =>
      r.key === '["header","application_id"]'
    )?.value,
    { value: 42 },
  );
  assert.deepEqual(
    meta(
      "CREATE INDEX t_v ON t (v); CREATE VIEW w AS SELECT v FROM t; CREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT 1; END;",
    )
      .map((r) => r.key).slice(2),
    ['["index","t_v"]', '["trigger","g"]', '["view","w"]'],
  );
  const analyzed = readSqlite(
    buildSqliteImage(base + "CREATE INDEX t_v ON t (v); ANALYZE;"),
  );
  assert.deepEqual(
    table(analyzed, "sqlite_stat1").records.map((r) => r.value),
    [
      { tbl: "t", idx: "t_v", stat: "1 1" },
    ],
  );
});

Deno.test("sqlite: text keys sort by code point, as SQLite's BINARY collation does", () => {
  const image = buildSqliteImage(
    `CREATE TABLE t (k TEXT PRIMARY KEY); INSERT INTO t VALUES ('b'), ('a'), ('B'), ('é'), ('😀'), ('\uFF5E'), ('10'), ('9');`,
  );
  const keys = table(readSqlite(image), "t").records.map((r) => r.key);
  const sorted = [...keys].sort(compareKeys);
  assert.deepEqual(keys, sorted);
  assert.deepEqual(keys.map((k) => JSON.parse(k)[0]), [
    "10",
    "9",
    "B",
    "a",
    "b",
    "é",
    "\uFF5E",
    "😀",
  ]);
});

Deno.test("sqlite: a database the page reader cannot read is not observed, and the error says why", () => {
  for (
    const [script, why] of [
      [
        "CREATE TABLE t (a TEXT PRIMARY KEY, b); INSERT INTO t VALUES (NULL, 1), ('x', 3);",
        "a NULL primary key",
      ],
      [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, twice INTEGER GENERATED ALWAYS AS (a * 2) STORED); INSERT INTO t (a) VALUES (1);",
        "table t has generated columns",
      ],
      [
        "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2); ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'dflt';",
        "short record with default",
      ],
      [
        "PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x');",
        "text encoding is not UTF-8",
      ],
    ] as const
  ) {
    const image = buildSqliteImage(script);
    assert.throws(
      () => readSqlite(image, { label: "s.db" }),
      (e: Error) =>
        e instanceof PageWalkError &&
        e.message.startsWith("s.db: not read: ") &&
        e.message.includes(why),
      script,
    );
  }
});

function variedImage(rows: number, extra = ""): Uint8Array {
  const big = "x".repeat(9000);
  return buildSqliteImage(
    `CREATE TABLE v (id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB);
     WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${rows})
     INSERT INTO v SELECT n,
       CASE n % 9 WHEN 0 THEN 0 WHEN 1 THEN 1 WHEN 2 THEN -127 WHEN 3 THEN 40000 WHEN 4 THEN -8388608
         WHEN 5 THEN 2147483648 WHEN 6 THEN 140737488355327 WHEN 7 THEN 9223372036854775807 ELSE -9223372036854775808 END,
       CASE n % 4 WHEN 0 THEN 0.1 * n WHEN 1 THEN -1e300 WHEN 2 THEN 2.0 ELSE NULL END,
       CASE n % 5 WHEN 0 THEN 'ascii ' || n WHEN 1 THEN 'ünïcødé ' || n WHEN 2 THEN '' WHEN 3 THEN '${big}' || n ELSE NULL END,
       CASE n % 3 WHEN 0 THEN randomblob(0) WHEN 1 THEN zeroblob(5000) ELSE x'deadbeef' END
     FROM c;
     CREATE TABLE nopk (a, b);
     INSERT INTO nopk SELECT i, t FROM v;
     ${extra}`,
  );
}

/** Every row of every table as SQL reads it, values as a snapshot holds them, sorted. */
function rowsBySql(image: Uint8Array): Record<string, string[]> {
  const db = new DatabaseSync(":memory:");
  db.deserialize(image);
  const encode = (v: unknown): unknown =>
    typeof v === "number" && !Number.isFinite(v)
      ? { $real: String(v) }
      : typeof v === "bigint"
      ? Number.isSafeInteger(Number(v)) ? Number(v) : { $int: String(v) }
      : v instanceof Uint8Array
      ? { $bytes: v.toBase64() }
      : v;
  const out: Record<string, string[]> = {};
  const names = db.prepare(
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  ).all().map((r) => String(r.name));
  for (const name of names) {
    const st = db.prepare(`SELECT * FROM "${name}"`);
    st.setReadBigInts(true);
    out[name] = st.all().map((r) =>
      JSON.stringify(
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, encode(v)])),
      )
    ).sort();
  }
  db.close();
  return out;
}

Deno.test("sqlite: the page-level reader gives exactly what SQL gives", () => {
  const image = variedImage(
    3000,
    `ALTER TABLE nopk ADD COLUMN c TEXT;
     INSERT INTO nopk VALUES (1, 'new', 'own');
     CREATE TABLE desck (id INTEGER PRIMARY KEY DESC, v TEXT); INSERT INTO desck VALUES (5, 'a'), (3, 'b');
     CREATE TABLE wr (k TEXT COLLATE NOCASE, n INTEGER, v, PRIMARY KEY (k, n DESC)) WITHOUT ROWID;
     INSERT INTO wr SELECT 'Key-' || (id % 300), id, t FROM v;
     CREATE TABLE wb (k PRIMARY KEY, v) WITHOUT ROWID;
     INSERT INTO wb SELECT CASE id % 4 WHEN 0 THEN id WHEN 1 THEN id + 0.5 WHEN 2 THEN 'k' || id ELSE CAST(id AS BLOB) END, b FROM v;
     CREATE TABLE tp (k TEXT PRIMARY KEY, v TEXT);
     INSERT INTO tp SELECT 'k' || ((id * 7919) % 3001) || substr(t, 1, 40), r FROM v WHERE t IS NOT NULL;
     CREATE TABLE tr (a TEXT COLLATE RTRIM, b INTEGER, PRIMARY KEY (b, a));
     INSERT INTO tr SELECT 'x' || (id % 10) || substr('   ', 1, id % 3), id / 10 FROM v;`,
  );
  const paged = readSqlite(image);
  assert.deepEqual(paged.problems, []);
  const sql = rowsBySql(image);
  const mine = paged.tables.filter((t) => !t.name.startsWith("sqlite_"));
  assert.deepEqual(mine.map((t) => t.name).sort(), Object.keys(sql).sort());
  for (const t of mine) {
    assert.deepEqual(
      t.records.map((r) => JSON.stringify(r.value)).sort(),
      sql[t.name],
      t.name,
    );
    const keys = t.records.map((r) => r.key);
    assert.deepEqual(
      keys,
      [...keys].sort(compareKeys),
      `${t.name} in key order`,
    );
  }
  const nopk = table(paged, "nopk").records;
  assert.equal(nopk.length, 3001);
  assert.equal(nopk[0]?.value.c, null, "rows from before ADD COLUMN read NULL");
  const v = table(paged, "v").records;
  assert.deepEqual(v[6]?.value.i, { $int: "9223372036854775807" });
  assert.deepEqual(v[7]?.value.i, { $int: "-9223372036854775808" });
  assert.equal(
    (v[2]?.value.t as string).length,
    9001,
    "overflowing text is read whole",
  );
});

Deno.test("sqlite: leaves seen before are shared between snapshots; a changed one is not", () => {
  const cache = new PageCache();
  const a = buildSqliteImage(
    `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
    WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5000) INSERT INTO t SELECT n, 'v' || n FROM c;`,
  );
  const first = table(readSqlite(a, { cache }), "t").records;
  const again = table(readSqlite(a, { cache }), "t").records;
  assert.ok(first.every((r, i) => r === again[i]), "every record shared");
  // Change one row in a copy: only its leaf is decoded again.
  const db = new DatabaseSync(":memory:");
  db.deserialize(a);
  db.exec("UPDATE t SET v = 'changed' WHERE id = 2500");
  const b = db.serialize();
  db.close();
  const changed = table(readSqlite(b, { cache }), "t").records;
  assert.deepEqual(changed, table(readSqlite(b), "t").records);
  assert.equal(changed[2499]?.value.v, "changed");
  assert.equal(first[2499]?.value.v, "v2500", "shared records never change");
  assert.ok(changed[0] === first[0], "an unchanged leaf is shared");
  assert.ok(
    changed.filter((r, i) => r !== first[i]).length < 500,
    "only the changed leaf's rows are new",
  );
});

Deno.test("sqlite: a bad image is a problem, not a crash", () => {
  const obs = readSqlite(
    new TextEncoder().encode(
      "this is not a database at all, not even close ".repeat(20),
    ),
  );
  assert.deepEqual(obs.tables, []);
  assert.match(
    obs.problems.join("\n"),
    /not a readable SQLite database|cannot open/,
  );
  assert.deepEqual(readSqlite(new Uint8Array()).tables, []);
});

Deno.test("sqlite diff: keys sorted as the snapshot orders them, whatever their shape", () => {
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  // Texts sharing prefixes, with characters below '"' (space, '!'), escapes
  // and non-ASCII; integers of every size (beyond 15 digits too), negative
  // ones, reals; one to three values a key.
  const text = () =>
    pick(["", "a", "ab", "ab ", "ab!", "abc", 'a"b', "a\\b", "é", "\t", "~"]) +
    pick(["", "x", " ", "!", "0"]);
  const int = () =>
    pick([
      0,
      1,
      -1,
      9,
      10,
      -10,
      2 ** 40,
      -(2 ** 40),
      123456789012345,
      1234567890123456,
      2 ** 53 - 1,
    ]);
  const value = (shape: string) =>
    shape === "t" ? text() : shape === "i" ? int() : pick([1.5, -0.25, 3]);
  for (const shapes of ["t", "i", "ii", "iii", "it", "r", "ir"]) {
    for (let round = 0; round < 20; round++) {
      const keys = new Set<string>();
      const n = 1 + Math.floor(rnd() * 60);
      for (let i = 0; i < n; i++) {
        keys.add(JSON.stringify([...shapes].map(value)));
      }
      const xs = [...keys].map((key) => ({ key }));
      const want = [...xs].sort((a, b) => compareKeys(a.key, b.key));
      assert.deepEqual(sortByKey(xs), want, shapes);
    }
  }
});

Deno.test("sqlite: streams over a page source that reuses its memory give the snapshot's records", () => {
  const image = variedImage(2000);
  const src = imagePageSource(image);
  const whole = readSqlite(image);
  // 64 pages of one buffer, reused in turn: the least a source promises;
  // then one page only, which a rowid table's stream needs (its text is
  // sliced from memory that changes under it at every page).
  for (const slots of [64, 1]) {
    const ring = new Uint8Array(src.pageSize * slots);
    let next = 0;
    const reusing: PageSource = {
      pageSize: src.pageSize,
      pageCount: src.pageCount,
      page(pgno) {
        const at = (next++ % slots) * src.pageSize;
        ring.set(src.page(pgno), at);
        return ring.subarray(at, at + src.pageSize);
      },
    };
    const schema = readSchema(reusing);
    const streams = streamTables(
      { src: reusing, schema, tables: planSchema(schema) },
    );
    assert.deepEqual(streams.map((s) => s.name), ["nopk", "v"]);
    for (const s of streams) {
      const got = s.records();
      const want = table(whole, s.name).records;
      assert.equal(got.length, want.length);
      got.forEach((r, i) =>
        assert.deepEqual(r, want[i], `${slots} slots: ${s.name} ${r.key}`)
      );
    }
  }
});
