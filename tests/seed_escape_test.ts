/**
 * A seed is data (issue 32, "Escapes" 2): it runs with no shell escape, no
 * program and no file outside the scratch state. Each attack an adversarial
 * run made is a seed here; `verity run` must refuse it with one line, exit
 * 2, naming the seed file and line, and no file may appear.
 */
import assert from "node:assert/strict";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const PG_SERVER =
  new URL("../fixtures/pg-honest-readonly/server.ts", import.meta.url)
    .pathname;
const SQLITE_SERVER = new URL(
  "../fixtures/honest-readonly/server.ts",
  import.meta.url,
).pathname;

const PG_TABLE = "CREATE TABLE notes (id int PRIMARY KEY, body text);";
const SQLITE_TABLE = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);";

/**
 * Run `verity run` on a definition whose only adapter is seeded by `seed`,
 * from a fresh working directory; `{out}` in the seed is a path in that
 * directory. Returns what verity said and the files that appeared.
 */
async function runSeed(
  kind: "postgres" | "sqlite",
  seed: string,
): Promise<{ code: number; stderr: string; appeared: string[] }> {
  const cwd = await Deno.makeTempDir({ prefix: "verity-seed-escape-" });
  const def = `${cwd}/def`;
  await Deno.mkdir(def);
  try {
    await Deno.chmod(cwd, 0o777);
    await Deno.writeTextFile(
      `${def}/seed.sql`,
      seed.replaceAll("{out}", `${cwd}/f`),
    );
    await Deno.writeTextFile(
      `${def}/fixture.toml`,
      kind === "postgres"
        ? `[fixture]
name = "seed-escape"
command = ["{deno}", "run", ${JSON.stringify(PG_SERVER)}, "{postgres_url}"]
[state]
locations = ["postgres:app"]
[[adapters]]
kind = "postgres"
label = "app"
seed = "seed.sql"
business = ["public.notes"]
[[tools]]
name = "get_note"
arguments = { id = 1 }
`
        : `[fixture]
name = "seed-escape"
command = ["{deno}", "run", ${JSON.stringify(SQLITE_SERVER)}]
[state]
locations = ["sqlite:state.db"]
[[adapters]]
kind = "sqlite"
label = "state.db"
seed = "seed.sql"
business = ["items"]
[[tools]]
name = "get_item"
arguments = { id = 1 }
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "run", "def", "--runs-dir", `${cwd}/runs`],
      cwd,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const appeared = [...Deno.readDirSync(cwd), ...Deno.readDirSync(def)]
      .map((e) => e.name)
      .filter((n) => !["def", "runs", "seed.sql", "fixture.toml"].includes(n));
    return {
      code: out.code,
      stderr: new TextDecoder().decode(out.stderr),
      appeared,
    };
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

/** The last line of stderr, and that it is the only line that is not progress. */
function errorLine(stderr: string): string {
  const lines = stderr.trim().split("\n").filter((l) =>
    !/^verity: (postgres|reset|sessions|listing|starting)/.test(l)
  );
  assert.equal(lines.length, 1, stderr);
  return lines[0]!;
}

const PG_ATTACKS: [string, string, RegExp][] = [
  [
    "\\! id > f",
    `${PG_TABLE}\n\\! id > {out}\n`,
    /^def\/seed\.sql:2: psql meta-command \\! is not allowed in a seed/,
  ],
  [
    "\\o |cmd",
    `${PG_TABLE}\n-- a comment first\n  \\o |id > {out}\nSELECT 1;\n`,
    /^def\/seed\.sql:3: psql meta-command \\o is not allowed in a seed/,
  ],
  [
    "\\copy",
    `${PG_TABLE} \\copy notes TO '{out}'\n`,
    /^def\/seed\.sql:1: psql meta-command \\copy is not allowed in a seed/,
  ],
  [
    "RESET ROLE; COPY … TO PROGRAM",
    `${PG_TABLE}\nRESET ROLE;\ncopy (select 1) TO PROGRAM 'id > {out}';\n`,
    /^def\/seed\.sql:3: COPY is not allowed in a seed/,
  ],
];

for (const [name, seed, message] of PG_ATTACKS) {
  Deno.test(`seed escape (postgres): ${name} is refused, one line, exit 2, and runs nothing`, async () => {
    const r = await runSeed("postgres", seed);
    assert.equal(r.code, 2, r.stderr);
    assert.match(errorLine(r.stderr), message);
    assert.deepEqual(r.appeared, []);
  });
}

Deno.test("seed escape (postgres): a seed runs as a role that is no superuser: RESET ROLE, then COPY … PROGRAM from a DO block, is refused by PostgreSQL", async () => {
  const r = await runSeed(
    "postgres",
    `${PG_TABLE}\nRESET ROLE;\nDO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''id > {out}'''; END $$;\n`,
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    errorLine(r.stderr),
    /adapters\[0\]\.seed: SQL seed seed\.sql failed in PostgreSQL: .*(superuser|pg_execute_server_program)/,
  );
  assert.deepEqual(r.appeared, []);
  const su = await runSeed("postgres", `${PG_TABLE}\nSET ROLE verity;\n`);
  assert.equal(su.code, 2, su.stderr);
  assert.match(errorLine(su.stderr), /permission denied to set role "verity"/);
});

const SQLITE_ATTACKS: [string, string, RegExp][] = [
  [
    "ATTACH",
    `${SQLITE_TABLE}\nATTACH DATABASE 'x.db' AS x;\nCREATE TABLE x.t (a);\n`,
    /^def\/seed\.sql:2: ATTACH is not allowed in a seed$/,
  ],
  [
    "attach in mixed case after comments",
    `${SQLITE_TABLE}\n-- one\n/* two */ aTtAcH 'x.db' aS x;\n`,
    /^def\/seed\.sql:3: ATTACH is not allowed in a seed$/,
  ],
  [
    "VACUUM INTO",
    `${SQLITE_TABLE}\nVacuum /* here */ INTO '{out}';\n`,
    /^def\/seed\.sql:2: VACUUM INTO is not allowed in a seed$/,
  ],
  [
    "load_extension",
    `${SQLITE_TABLE}\nSELECT Load_Extension('{out}');\n`,
    /^def\/seed\.sql:2: load_extension is not allowed in a seed$/,
  ],
];

for (const [name, seed, message] of SQLITE_ATTACKS) {
  Deno.test(`seed escape (sqlite): ${name} is refused, one line, exit 2, and creates no file`, async () => {
    const r = await runSeed("sqlite", seed);
    assert.equal(r.code, 2, r.stderr);
    assert.match(errorLine(r.stderr), message);
    assert.deepEqual(r.appeared, []);
  });
}
