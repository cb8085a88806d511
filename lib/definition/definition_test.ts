import assert from "node:assert/strict";
import { DefinitionError, InputError } from "../errors.ts";
import { loadDefinition } from "./load.ts";
import { parseDefinition } from "./parse.ts";
import { hasPlaceholder, substitute, substituteDeep } from "./placeholders.ts";
import { checkSeededState } from "../state_io/seeded.ts";

const GOOD = `
[fixture]
name = "t"
command = ["{deno}", "run", "server.ts"]

[state]
locations = ["sqlite:state.db"]

[[adapters]]
kind = "sqlite"
label = "state.db"
seed = "seed.sql"
business = ["items"]
append_only = ["audit"]
mask = [{ region = "audit", column = "at", kind = "timestamp" }]

[[tools]]
name = "put"
arguments = { key = "a" }

[tools.expected.read_only]
verdict = "NOT_APPLICABLE:PERMISSIVE_DECLARATION"
`;

const SEED = `CREATE TABLE items (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE audit (id INTEGER PRIMARY KEY, at TEXT);
INSERT INTO items VALUES ('a', 'x');
INSERT INTO audit (at) VALUES ('2026-01-01');`;

/** Write a definition directory and return its path. */
async function defDir(
  toml: string,
  files: Record<string, string> = { "seed.sql": SEED },
  name = "fixture.toml",
) {
  const dir = await Deno.makeTempDir({ prefix: "verity-def-" });
  await Deno.writeTextFile(`${dir}/${name}`, toml);
  for (const [f, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${f}`.replace(/\/[^/]*$/, ""), {
      recursive: true,
    });
    await Deno.writeTextFile(`${dir}/${f}`, text);
  }
  return dir;
}

/** Load and expect a DefinitionError at `keyPath` whose message matches. */
async function rejects(
  toml: string,
  keyPath: string,
  message: RegExp,
  files?: Record<string, string>,
  name?: string,
) {
  const dir = await defDir(toml, files, name);
  try {
    await checkSeededState(await loadDefinition(dir));
    assert.fail(`expected an error at ${keyPath}`);
  } catch (e) {
    if (!(e instanceof DefinitionError)) throw e;
    assert.equal(e.keyPath, keyPath, e.message);
    assert.match(e.message, message);
    assert.ok(
      e.message.startsWith(`${dir}/${name ?? "fixture.toml"}: `),
      `names the file: ${e.message}`,
    );
    assert.ok(e instanceof InputError, "maps to exit code 2");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a valid fixture loads with defaults, a digest and its expectations", async () => {
  const dir = await defDir(GOOD);
  try {
    const def = await loadDefinition(dir);
    assert.equal(def.kind, "fixture");
    assert.equal(def.name, "t");
    assert.equal(def.file, `${dir}/fixture.toml`);
    assert.equal(def.dir, dir);
    assert.deepEqual(def.command, ["{deno}", "run", "server.ts"]);
    assert.deepEqual(def.timeouts, { start_s: 30, call_s: 30 });
    assert.equal(def.sandbox, null);
    assert.deepEqual(def.adapters[0]?.mask, [{
      region: "audit",
      column: "at",
      kind: "timestamp",
    }]);
    assert.deepEqual(def.tools[0], {
      name: "put",
      variant: null,
      arguments: { key: "a" },
      probe: null,
      expected: {
        read_only: { verdict: "NOT_APPLICABLE:PERMISSIVE_DECLARATION" },
      },
    });
    assert.match(def.digest, /^sha256:[0-9a-f]{64}$/);
    // The digest covers the seed's bytes.
    await Deno.writeTextFile(`${dir}/seed.sql`, SEED + "\n-- changed");
    assert.notEqual((await loadDefinition(dir)).digest, def.digest);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bare names are looked up under fixtures/ then targets/", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/targets/mem`, { recursive: true });
    await Deno.writeTextFile(
      `${root}/targets/mem/target.toml`,
      `[target]\nname = "mem"\ncommand = ["x"]\n[state]\nlocations = []\n[source]\npackage = "p"\nversion = "1"\n`,
    );
    const def = await loadDefinition("mem", {
      fixturesDir: `${root}/fixtures`,
      targetsDir: `${root}/targets`,
    });
    assert.equal(def.kind, "target");
    assert.deepEqual(def.source, { package: "p", version: "1" });
    await assert.rejects(
      loadDefinition("nothing", {
        fixturesDir: `${root}/fixtures`,
        targetsDir: `${root}/targets`,
      }),
      (e) =>
        e instanceof InputError &&
        /no definition named "nothing"/.test(e.message),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("strict: unknown keys anywhere name their key path", async () => {
  await rejects(GOOD + "\n[extra]\na = 1\n", "extra", /unknown key/);
  await rejects(
    GOOD.replace('name = "t"', 'name = "t"\nnmae = "x"'),
    "fixture.nmae",
    /unknown key/,
  );
  await rejects(
    GOOD.replace('kind = "sqlite"', 'kind = "sqlite"\nregion_by = "type"'),
    "adapters[0].region_by",
    /unknown key/,
  );
  await rejects(
    GOOD.replace('kind = "timestamp" }', 'kind = "timestamp", extra = 1 }'),
    "adapters[0].mask[0].extra",
    /unknown key/,
  );
  await rejects(
    GOOD.replace('name = "put"', 'name = "put"\nargs = {}'),
    "tools[0].args",
    /unknown key/,
  );
  await rejects(
    GOOD.replace("[tools.expected.read_only]", "[tools.expected.readonly]"),
    "tools[0].expected.readonly",
    /unknown key/,
  );
  await rejects(
    GOOD.replace("[state]", "[state]\nwhere = 1"),
    "state.where",
    /unknown key/,
  );
  // A learned set's fact: one of four names, nothing else.
  await rejects(
    GOOD.replace('name = "put"', 'name = "put"\nlearned = "everything"'),
    "tools[0].learned",
    /expected "names_seed_record", "no_arguments", "names_nothing" or "empty_seed", got "everything"/,
  );
});

Deno.test("strict: wrong types name their key path", async () => {
  await rejects(
    GOOD.replace('name = "t"', "name = 3"),
    "fixture.name",
    /expected a string, got number 3/,
  );
  await rejects(
    GOOD.replace(
      'command = ["{deno}", "run", "server.ts"]',
      'command = "deno run"',
    ),
    "fixture.command",
    /array/,
  );
  await rejects(
    GOOD.replace('"server.ts"]', '"server.ts", 1]'),
    "fixture.command[3]",
    /expected a string/,
  );
  await rejects(
    GOOD.replace('name = "t"', 'name = "t"\ntimeouts = { start = "10" }'),
    "fixture.timeouts.start",
    /number/,
  );
  await rejects(
    GOOD.replace('name = "t"', 'name = "t"\ntimeouts = { call = -1 }'),
    "fixture.timeouts.call",
    /positive/,
  );
  await rejects(
    GOOD.replace('name = "t"', 'name = "t"\nsandbox = "docker"'),
    "fixture.sandbox",
    /"deno", "bubblewrap" or "none"/,
  );
  await rejects(
    GOOD.replace('kind = "sqlite"', 'kind = "mysql"'),
    "adapters[0].kind",
    /"sqlite", "fs", "json" or "postgres"/,
  );
  await rejects(
    GOOD.replace('kind = "sqlite"', 'kind = "postgres"'),
    "adapters[0].label",
    /names its database/,
  );
  await rejects(
    GOOD.replace('"{deno}"', '"{postgres_url}"'),
    "fixture",
    /no \[\[adapters\]\] has kind = "postgres"/,
  );
  await rejects(
    GOOD.replace('kind = "timestamp"', 'kind = "date"'),
    "adapters[0].mask[0].kind",
    /timestamp, uuid, token, counter/,
  );
  await rejects(
    GOOD.replace(
      'verdict = "NOT_APPLICABLE:PERMISSIVE_DECLARATION"',
      'verdict = "OK"',
    ),
    "tools[0].expected.read_only.verdict",
    /PASS, VIOLATION/,
  );
  await rejects(
    GOOD.replace(
      'verdict = "NOT_APPLICABLE:PERMISSIVE_DECLARATION"',
      'verdict = "PASS"\nwhen = 2026-01-01',
    ),
    "tools[0].expected.read_only.when",
    /string, boolean or number/,
  );
  await rejects(
    GOOD.replace('locations = ["sqlite:state.db"]', 'locations = ["state.db"]'),
    "state.locations[0]",
    /<kind>:<path>/,
  );
  await rejects(
    GOOD.replace('label = "state.db"', 'label = "../state.db"'),
    "adapters[0].label",
    /must not contain/,
  );
});

Deno.test("strict: missing pieces", async () => {
  await rejects(GOOD.replace('name = "t"\n', ""), "fixture.name", /missing/);
  await rejects(
    GOOD.replace('[state]\nlocations = ["sqlite:state.db"]\n', ""),
    "state",
    /missing \[state\]/,
  );
  await rejects(GOOD, "adapters[0].seed", /seed "seed.sql" not found/, {});
  await rejects(
    "[state]\nlocations = []\n",
    "",
    /missing \[fixture\] or \[target\]/,
  );
  await rejects("[fixture\nname=", "", /invalid TOML at line \d+, column \d+/);
  await rejects('name = "a"\nname = "b"\n', "", /invalid TOML/);
});

Deno.test("strict: a mask or classification that matches nothing in the seeded state", async () => {
  await rejects(
    GOOD.replace('region = "audit"', 'region = "audits"'),
    "adapters[0].mask[0].region",
    /matches nothing in the seeded state/,
  );
  await rejects(
    GOOD.replace('column = "at"', 'column = "when"'),
    "adapters[0].mask[0].column",
    /no column "when"/,
  );
  await rejects(
    GOOD.replace('business = ["items"]', 'business = ["itemz"]'),
    "adapters[0].business[0]",
    /"itemz" is not in the seeded database \(closest: items\b.*pattern, e.g. "mcp_\*"\)$/,
  );
  await rejects(
    GOOD.replace('seed = "seed.sql"\n', ""),
    "adapters[0].mask[0]",
    /no seed/,
  );
  await rejects(
    GOOD,
    "adapters[0].seed",
    /SQL seed seed.sql failed: .*syntax error/,
    { "seed.sql": "CREATE TABLE (" },
  );
  const json = `[fixture]
name = "j"
command = ["x"]
[state]
locations = ["json:m.jsonl"]
[[adapters]]
kind = "json"
label = "m.jsonl"
seed = "m.jsonl"
region_by = "type"
mask = [{ region = "entity", column = "meta.created", kind = "timestamp" }]
`;
  await rejects(
    json,
    "adapters[0].mask[0].column",
    /no seeded record of entity has a field "meta.created"/,
    {
      "m.jsonl": '{"type":"entity","name":"a","meta":{}}\n',
    },
  );
  // The same mask is accepted once a seeded record has the field.
  const dir = await defDir(json, {
    "m.jsonl": '{"type":"entity","name":"a","meta":{"created":"x"}}',
  });
  try {
    const def = await loadDefinition(dir);
    await checkSeededState(def);
    assert.equal(def.adapters[0]?.region_by, "type");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("strict: TODO(verity) anywhere stops the load", async () => {
  await rejects(
    GOOD.replace('"server.ts"]', '"TODO(verity): server path"]'),
    "fixture.command[2]",
    /still a placeholder/,
  );
  await rejects(
    GOOD.replace(
      'arguments = { key = "a" }',
      'arguments = { key = { deep = ["TODO(verity)"] } }',
    ),
    "tools[0].arguments.key.deep[0]",
    /placeholder/,
  );
  await rejects(
    GOOD.replace(
      'verdict = "NOT_APPLICABLE:PERMISSIVE_DECLARATION"',
      'verdict = "TODO(verity) decide"',
    ),
    "tools[0].expected.read_only.verdict",
    /placeholder/,
  );
});

Deno.test("strict: targets carry no expectations; [source] only in targets", async () => {
  const target = GOOD.replace("[fixture]", "[target]");
  await rejects(
    target,
    "tools[0].expected",
    /targets never carry expected verdicts/,
    undefined,
    "target.toml",
  );
  await rejects(GOOD + '\n[source]\npackage = "x"\n', "source", /unknown key/);
  await rejects(
    GOOD,
    "",
    /target.toml must have a \[target\] table/,
    undefined,
    "target.toml",
  );
  await rejects(
    GOOD.replace("[state]", '[target]\nname = "x"\ncommand = ["y"]\n[state]'),
    "",
    /both \[fixture\] and \[target\]/,
  );
  await rejects(
    GOOD.replace("[fixture]", "[target]").replace(/\[tools.expected[^]*$/, ""),
    "",
    /fixture.toml must have a \[fixture\] table/,
  );
});

Deno.test("strict: placeholders, duplicates and fs paths", async () => {
  await rejects(
    GOOD.replace('"{deno}"', '"{nodejs}"'),
    "fixture.command[0]",
    /unknown placeholder \{nodejs\}/,
  );
  await rejects(
    GOOD.replace('"{deno}"', '"{source}"'),
    "fixture.command[0]",
    /needs a \[source\]/,
  );
  await rejects(
    GOOD + '\n[[tools]]\nname = "put"\n',
    "tools[1]",
    /duplicate tool put/,
  );
  const fs = `[fixture]
name = "f"
command = ["x"]
[state]
locations = ["fs:notes"]
[[adapters]]
kind = "fs"
label = "notes"
business = ["other"]
`;
  await rejects(
    fs,
    "adapters[0].business[0]",
    /not inside the adapter's label/,
  );
});

Deno.test("sqlite natural key: its table and columns must be seeded", async () => {
  await rejects(
    GOOD.replace(
      'business = ["items"]',
      'business = ["items"]\nkey = { itemz = ["name"] }',
    ),
    'adapters[0].key."itemz"',
    /table "itemz" is not in the seeded database \(closest: items/,
  );
  await rejects(
    GOOD.replace(
      'business = ["items"]',
      'business = ["items"]\nkey = { items = ["nom"] }',
    ),
    'adapters[0].key."items"[0]',
    /table items has no column "nom"/,
  );
});

Deno.test("exclude: names or patterns, never also classified", async () => {
  await rejects(
    GOOD.replace(
      'business = ["items"]',
      'business = ["items"]\nexclude = ["items"]',
    ),
    "adapters[0].exclude[0]",
    /"items" is also classified/,
  );
  const dir = await defDir(
    GOOD.replace(
      'business = ["items"]',
      'business = ["items"]\nexclude = ["sqlite_stat*"]',
    ),
  );
  try {
    assert.deepEqual((await loadDefinition(dir)).adapters[0]?.exclude, [
      "sqlite_stat*",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("classification: a pattern may name tables only a call creates", async () => {
  const dir = await defDir(
    GOOD.replace('business = ["items"]', 'business = ["items", "mcp_*"]'),
  );
  try {
    const def = await loadDefinition(dir);
    await checkSeededState(def);
    assert.deepEqual(def.adapters[0]?.business, ["items", "mcp_*"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseDefinition keeps placeholders; JSON braces in commands are literal", () => {
  const def = parseDefinition(
    `[fixture]\nname = "x"\ncommand = ["{python}", "-c", "{\\"a\\": 1}"]\nenv = { DB = "{state}/db" }\n[state]\nlocations = []\n`,
    "/tmp/x/fixture.toml",
  );
  assert.deepEqual(def.command, ["{python}", "-c", '{"a": 1}']);
  assert.deepEqual(def.env, { DB: "{state}/db" });
  assert.equal(def.dir, "/tmp/x");
});

Deno.test("substitute replaces the five placeholders and refuses unknown ones", () => {
  const vars = {
    deno: "/bin/deno",
    python: "py",
    state: "/s",
    target: "/t",
    source: null,
  };
  assert.equal(
    substitute("{deno} {state}/a {target}", vars),
    "/bin/deno /s/a /t",
  );
  assert.equal(substitute('{"k": 1}', vars), '{"k": 1}');
  assert.throws(
    () => substitute("{nope}", vars),
    (e) =>
      e instanceof InputError && /unknown placeholder \{nope\}/.test(e.message),
  );
  assert.throws(() => substitute("{source}/x", vars), /no \[source\]/);
  assert.equal(substitute("{source}/x", { ...vars, source: "/src" }), "/src/x");
});

Deno.test("labels and fs region paths are normalised as regions name them", () => {
  const def = parseDefinition(
    `[fixture]\nname = "x"\ncommand = ["y"]\n[state]\nlocations = ["fs:notes/"]\n` +
      `[[adapters]]\nkind = "fs"\nlabel = "./"\nbusiness = ["notes/"]\n` +
      `[[adapters]]\nkind = "json"\nlabel = "./data/store.json"\n`,
    "/tmp/x/fixture.toml",
  );
  assert.deepEqual(def.adapters.map((a) => a.label), [".", "data/store.json"]);
  assert.deepEqual(def.adapters[0]?.business, ["notes"]);
});

Deno.test("allowances, cwd and placeholders in tool arguments", async () => {
  const text = GOOD.replace(
    'command = ["{deno}", "run", "server.ts"]',
    `command = ["{deno}", "run", "server.ts"]
cwd = "{state}"
read = ["/usr/share"]
allow = { sys = ["hostname"], run = ["git"], read = ["{target}/venv"] }`,
  ).replace(
    'arguments = { key = "a" }',
    'arguments = { key = "a", path = "{state}/files/a.txt", list = ["{state}"] }',
  );
  // Read paths on the host must exist ({target}/venv here).
  const def = await loadDefinition(
    await defDir(text, { "seed.sql": SEED, "venv/bin/python": "" }),
  );
  assert.equal(def.cwd, "{state}");
  assert.deepEqual(def.allow, { sys: ["hostname"], run: ["git"] });
  assert.deepEqual(def.read, ["/usr/share", "{target}/venv"]);
  assert.deepEqual(def.tools[0]!.arguments, {
    key: "a",
    path: "{state}/files/a.txt",
    list: ["{state}"],
  });
  assert.deepEqual(
    substituteDeep(def.tools[0]!.arguments, {
      deno: "d",
      python: "p",
      state: "/s",
      target: "/t",
      source: null,
    }),
    { key: "a", path: "/s/files/a.txt", list: ["/s"] },
  );
  assert.equal(hasPlaceholder(def.tools[0]!.arguments), true);
  assert.equal(hasPlaceholder({ a: '{"json": 1}', b: 2 }), false);
  // Defaults: no allowances, the definition's directory.
  const plain = await loadDefinition(await defDir(GOOD));
  assert.deepEqual(plain.allow, { sys: [], run: [] });
  assert.equal(plain.cwd, null);
});

Deno.test("strict: allowances, cwd and argument placeholders", async () => {
  const cmd = 'command = ["{deno}", "run", "server.ts"]';
  await rejects(
    GOOD.replace(cmd, `${cmd}\nallow = { sys = ["everything"] }`),
    "fixture.allow.sys[0]",
    /unknown system-information name "everything"/,
  );
  await rejects(
    GOOD.replace(cmd, `${cmd}\nallow = { run = ["bin/git"] }`),
    "fixture.allow.run[0]",
    /program name .* or an absolute path/,
  );
  await rejects(
    GOOD.replace(cmd, `${cmd}\nallow = { net = ["x"] }`),
    "fixture.allow.net",
    /unknown key \(allowed here: sys, run, read\)/,
  );
  await rejects(
    GOOD.replace(cmd, `${cmd}\ncwd = "relative/dir"`),
    "fixture.cwd",
    /must be absolute or start with a placeholder/,
  );
  await rejects(
    GOOD.replace('arguments = { key = "a" }', 'arguments = { key = "{stat}" }'),
    "tools[0].arguments.key",
    /unknown placeholder \{stat\}/,
  );
  await rejects(
    GOOD.replace(
      'arguments = { key = "a" }',
      'arguments = { keys = ["{source}/x"] }',
    ),
    "tools[0].arguments.keys[0]",
    /\{source\} needs a \[source\]/,
  );
});

Deno.test("loading does not run seeds: the seeded-state check is its own step, run by the commands that observe state", async () => {
  const dir = await defDir(
    GOOD.replace('region = "audit"', 'region = "audits"'),
  );
  try {
    const def = await loadDefinition(dir);
    assert.equal(def.adapters[0]?.mask[0]?.region, "audits");
    await assert.rejects(
      () => checkSeededState(def),
      /adapters\[0\]\.mask\[0\]\.region: .*matches nothing/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test('transport = "http": a loopback url with {port}; {port} only for HTTP', async () => {
  const http = GOOD.replace(
    'command = ["{deno}", "run", "server.ts"]',
    'command = ["{deno}", "run", "server.ts", "--port", "{port}"]\ntransport = "http"\nurl = "http://127.0.0.1:{port}/mcp"',
  );
  const dir = await defDir(http);
  try {
    const def = await loadDefinition(dir);
    assert.equal(def.transport, "http");
    assert.equal(def.url, "http://127.0.0.1:{port}/mcp");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await rejects(
    http.replace('url = "http://127.0.0.1:{port}/mcp"', ""),
    "fixture.url",
    /missing: transport = "http" needs/,
  );
  await rejects(
    http.replace(
      "http://127.0.0.1:{port}/mcp",
      "http://example.com:{port}/mcp",
    ),
    "fixture.url",
    /loopback URL with the \{port\} placeholder/,
  );
  await rejects(
    http.replace("http://127.0.0.1:{port}/mcp", "http://127.0.0.1:8080/mcp"),
    "fixture.url",
    /loopback URL/,
  );
  await rejects(
    http.replace('transport = "http"', 'transport = "sse"'),
    "fixture.transport",
    /expected "stdio" or "http"/,
  );
  await rejects(
    http.replace('transport = "http"\n', ""),
    "fixture.url",
    /applies only with transport = "http"/,
  );
  await rejects(
    GOOD.replace('"server.ts"]', '"server.ts", "{port}"]'),
    "fixture.command[3]",
    /\{port\} needs transport = "http"/,
  );
});

Deno.test("a tool's probe: read strictly, placeholders kept", async () => {
  const args = 'arguments = { key = "a" }';
  const dir = await defDir(
    GOOD.replace(
      args,
      `${args}\nprobe = { name = "get", arguments = { path = "{state}/x" } }`,
    ),
  );
  try {
    const def = await loadDefinition(dir);
    assert.deepEqual(def.tools[0]!.probe, {
      name: "get",
      arguments: { path: "{state}/x" },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const plain = await defDir(GOOD);
  try {
    assert.equal((await loadDefinition(plain)).tools[0]!.probe, null);
  } finally {
    await Deno.remove(plain, { recursive: true });
  }
  await rejects(
    GOOD.replace(args, `${args}\nprobe = "get"`),
    "tools[0].probe",
    /expected a table such as \{ name = "get" \}, got string/,
  );
  await rejects(
    GOOD.replace(args, `${args}\nprobe = { arguments = {} }`),
    "tools[0].probe.name",
    /missing \(a tool the server lists that reads the state/,
  );
  await rejects(
    GOOD.replace(args, `${args}\nprobe = { name = "" }`),
    "tools[0].probe.name",
    /must not be empty/,
  );
  await rejects(
    GOOD.replace(args, `${args}\nprobe = { nme = "get" }`),
    "tools[0].probe.nme",
    /unknown key \(allowed here: name, arguments\)/,
  );
  await rejects(
    GOOD.replace(args, `${args}\nprobe = { name = "get", arguments = [1] }`),
    "tools[0].probe.arguments",
    /expected a table/,
  );
  await rejects(
    GOOD.replace(
      args,
      `${args}\nprobe = { name = "get", arguments = { k = "{stat}" } }`,
    ),
    "tools[0].probe.arguments.k",
    /unknown placeholder \{stat\}/,
  );
});

Deno.test("seeded state without records: columns read from the seed's pages equal readSqlite's without records, on every fixture", async () => {
  const { seededSnapshot, seedColumns } = await import("../state_io/seeded.ts");
  const { sqliteSeedImage } = await import("../state_io/reset.ts");
  const { readSqlite } = await import("../../adapters/sqlite/read.ts");
  const root = new URL("../../fixtures/", import.meta.url).pathname;
  let compared = 0;
  for (const e of Deno.readDirSync(root)) {
    if (!e.isDirectory || e.name.startsWith("_")) continue;
    let def;
    try {
      def = await loadDefinition(`${root}${e.name}`);
    } catch {
      continue; // not a definition (or one that is meant to fail)
    }
    if (!def.adapters.some((a) => a.kind === "sqlite" && a.seed !== null)) {
      continue;
    }
    const snap = await seededSnapshot(def);
    for (const [i, a] of def.adapters.entries()) {
      if (a.kind !== "sqlite" || a.seed === null) continue;
      const image = await sqliteSeedImage(def, a, i);
      const fromImage = readSqlite(image, { records: false });
      const direct = await seedColumns(def, i);
      assert.deepEqual(direct, fromImage, `${e.name}: ${a.label}`);
      const mine = snap.regions.filter((r) =>
        r.kind === "sqlite" && r.adapter === a.label.replace(/^\.\//, "")
      ).map((r) => ({ name: r.name, columns: r.columns }));
      assert.deepEqual(
        mine,
        fromImage.tables.map((t) => ({ name: t.name, columns: t.columns })),
        `${e.name}: ${a.label}`,
      );
      assert.ok(mine.length > 0, `${e.name}: ${a.label} has tables`);
      compared++;
    }
  }
  assert.ok(compared >= 15, `${compared} seeds compared`);
});
