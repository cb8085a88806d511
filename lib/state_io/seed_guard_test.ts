import assert from "node:assert/strict";
import { seedRefusal } from "./seed_guard.ts";

Deno.test("seed guard: psql meta-commands anywhere outside a literal are refused with their line", () => {
  const cases: [string, number, string][] = [
    ["CREATE TABLE t (id int PRIMARY KEY);\n\\! id > f\n", 2, "\\!"],
    ["-- a comment\n/* block\n */ \\o |id > f\nSELECT 1;", 3, "\\o"],
    ["SELECT 1; \\copy t TO 'f'", 1, "\\copy"],
    ["INSERT INTO t VALUES ('\\x00ff');\n\\i /etc/passwd", 2, "\\i"],
  ];
  for (const [sql, line, meta] of cases) {
    const r = seedRefusal(sql, "postgres");
    assert.equal(r?.line, line, sql);
    assert.match(
      r!.reason,
      new RegExp(`^psql meta-command \\${meta} is not allowed in a seed`),
    );
  }
});

Deno.test("seed guard: backslashes inside strings, E-strings, identifiers, comments and dollar-quoted bodies are data", () => {
  const sql = [
    "CREATE TABLE t (id int PRIMARY KEY, b bytea, s text);",
    "INSERT INTO t VALUES (1, '\\x00ff10', E'it\\'s \\\\ fine');",
    'CREATE TABLE "we\\ird" (id int PRIMARY KEY);',
    "-- \\! id > f",
    "/* \\! id /* nested \\o */ still comment */",
    "CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$",
    "BEGIN RETURN '\\! not a command; COPY x TO PROGRAM ''id'''; END",
    "$body$;",
    "DO $$ BEGIN PERFORM 1; END $$;",
    "SELECT a$b FROM (SELECT 1 AS a$b) q WHERE $1 IS NULL OR true;",
  ].join("\n");
  assert.equal(seedRefusal(sql, "postgres"), null);
});

Deno.test("seed guard: COPY in a PostgreSQL seed is refused (stdin data blocks, programs, files)", () => {
  for (
    const sql of [
      "RESET ROLE;\nCOPY (select 1) TO PROGRAM 'id > f';",
      "CREATE TABLE t (x int);\n  copy t FROM stdin;\n1\n\\.\n",
    ]
  ) {
    const r = seedRefusal(sql, "postgres");
    assert.equal(r?.line, 2, sql);
    assert.match(r!.reason, /^COPY is not allowed in a seed/);
  }
});

Deno.test("seed guard: SQLite ATTACH, VACUUM INTO and load_extension are refused in any case and after comments", () => {
  const cases: [string, number, RegExp][] = [
    ["ATTACH DATABASE 'x.db' AS x;", 1, /^ATTACH /],
    ["CREATE TABLE t (x);\n-- c\n/* c */ aTTaCh 'x.db' AS x;", 3, /^ATTACH /],
    ["CREATE TABLE t (x);\nexplain attach 'x.db' as y;", 2, /^ATTACH /],
    ["CREATE TABLE t (x);\n\nVacuum /* x */ Into 'x.db';", 3, /^VACUUM INTO /],
    ["SELECT\n  LOAD_EXTENSION('/tmp/evil');", 2, /^load_extension /],
  ];
  for (const [sql, line, reason] of cases) {
    const r = seedRefusal(sql, "sqlite");
    assert.equal(r?.line, line, sql);
    assert.match(r!.reason, reason);
  }
  assert.equal(
    seedRefusal(
      "CREATE TABLE attach_log (\"attach\" text, [vacuum into] int);\nINSERT INTO attach_log VALUES ('ATTACH x; load_extension(1)', 1);\nVACUUM;",
      "sqlite",
    ),
    null,
  );
});
