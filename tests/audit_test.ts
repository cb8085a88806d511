/**
 * Audits of real servers: pinned sources, the prepared cache, `verity
 * prepare`, `verity init` and `verity run --audit` on an init-written
 * target. The npm registry is needed only by the tests guarded by
 * `VERITY_TEST_NETWORK=1`.
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import {
  checkCommandRunsPin,
  integrityOf,
  parseSourcePin,
  sha256Of,
  type SourcePin,
  splitLockKey,
  summarizeLock,
  summarizeNpmLock,
} from "../lib/prepare/source.ts";
import { readTarball } from "../lib/prepare/tarball.ts";
import {
  cacheLayout,
  readPrepared,
  resolvePreparedRun,
  savePreparedTarget,
} from "../lib/prepare/local.ts";
import {
  checkPrepared,
  emptyPrepared,
  parsePrepared,
  type PreparedTarget,
  renderPrepared,
} from "../lib/prepare/prepared.ts";
import {
  readConfiguredServer,
  stripJsonComments,
} from "../lib/init/mcp_config.ts";
import { planInit, withVersion } from "../lib/init/init_plan.ts";
import { renderTargetTemplate } from "../lib/init/init_template.ts";
import { parseDefinition } from "../lib/definition/parse.ts";
import { DefinitionError } from "../lib/errors.ts";
import { rebuildSandboxed } from "../lib/prepare/fetch.ts";
import { runVerity } from "./_verity.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const MEMORY_INTEGRITY =
  "sha512-ljj/3S4aGjxdNSQWw6gucKKGnTLdBPWxzapyY/MT2tOVyZwvxChvevXSLPwx59nKJAlVpUVW+cOlnVRXRwiqMQ==";
const MEMORY_PIN: SourcePin = {
  package: "@modelcontextprotocol/server-memory",
  version: "2026.8.31",
  integrity: MEMORY_INTEGRITY,
  git: null,
  commit: null,
};
const MEMORY_COMMAND = [
  "{deno}",
  "run",
  "--no-config",
  "--frozen",
  "--lock={target}/deno.lock",
  "npm:@modelcontextprotocol/server-memory@2026.8.31",
];

// ---- [source] pins ---------------------------------------------------------

Deno.test("a [source] pins an npm package at an exact version with its sha512 integrity", () => {
  const pin = parseSourcePin({
    package: MEMORY_PIN.package,
    version: "2026.8.31",
    integrity: MEMORY_INTEGRITY,
    git: "https://github.com/modelcontextprotocol/servers",
  }, "t.toml");
  assert.equal(pin.version, "2026.8.31");
  assert.equal(pin.git, "https://github.com/modelcontextprotocol/servers");
  assert.equal(pin.commit, null);
});

Deno.test("a [source] with a range, a bad integrity or a stray commit is refused naming the key", () => {
  const base = {
    package: "pkg",
    version: "1.0.0",
    integrity: MEMORY_INTEGRITY,
  };
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { ...base, version: "^1.0.0" },
      /source\.version: must be an exact version/,
    ],
    [{ ...base, version: "latest" }, /source\.version/],
    [
      { ...base, integrity: "sha1-abc" },
      /source\.integrity: expected "sha512-/,
    ],
    [
      { ...base, package: "Bad Name" },
      /source\.package: not a valid npm package name/,
    ],
    [
      { ...base, commit: "a".repeat(40) },
      /source\.commit: a commit needs source\.git/,
    ],
    [
      { ...base, git: "x", commit: "abc" },
      /source\.commit: expected a full 40-character/,
    ],
    [
      { version: "1.0.0", integrity: MEMORY_INTEGRITY },
      /source\.package: missing/,
    ],
  ];
  for (const [raw, re] of cases) {
    assert.throws(
      () => parseSourcePin(raw, "t.toml"),
      (e: unknown) => e instanceof DefinitionError && re.test(e.message),
      JSON.stringify(raw),
    );
  }
});

Deno.test("a pinned target must run exactly its package from the frozen lock", () => {
  checkCommandRunsPin(MEMORY_COMMAND, MEMORY_PIN, "t.toml");
  checkCommandRunsPin([...MEMORY_COMMAND, "extra-arg"], MEMORY_PIN, "t.toml");
  const refused: [string[], RegExp][] = [
    [MEMORY_COMMAND.filter((c) => c !== "--frozen"), /missing --frozen/],
    [MEMORY_COMMAND.filter((c) => c !== "--no-config"), /missing --no-config/],
    [
      MEMORY_COMMAND.map((c) => c.replace("2026.8.31", "2026.9.1")),
      /must run the pinned package npm:@modelcontextprotocol\/server-memory@2026\.8\.31/,
    ],
    [["npx", "-y", "@modelcontextprotocol/server-memory"], /runs under Deno/],
  ];
  for (const [cmd, re] of refused) {
    assert.throws(
      () => checkCommandRunsPin(cmd, MEMORY_PIN, "t.toml"),
      (e: unknown) =>
        e instanceof DefinitionError && re.test(e.message) &&
        e.keyPath === "target.command",
      cmd.join(" "),
    );
  }
});

const SQLITE_PIN: SourcePin = {
  package: "mcp-server-sqlite",
  version: "0.0.2",
  integrity:
    "sha512-ZuHdaOxNNJUWUhhE7lt1hBFM0UcUoViuRFXAqe74C08ONsiM/xlqzX8NdPmmPhpjtGo2jfU+fGtxM3iH1RVUAA==",
  git: null,
  commit: null,
};

Deno.test("a Node target must run a script of its prepared package", () => {
  const ok = [
    "{node}",
    "{node_modules}/mcp-server-sqlite/dist/cli.js",
    "--db",
    "{state}/notes.db",
  ];
  checkCommandRunsPin(ok, SQLITE_PIN, "t.toml");
  for (
    const cmd of [
      ["{node}", "{node_modules}/other-package/dist/cli.js"],
      ["{node}", "/usr/lib/node_modules/mcp-server-sqlite/dist/cli.js"],
      [
        "{node}",
        "--require",
        "x",
        "{node_modules}/mcp-server-sqlite/dist/cli.js",
      ],
    ]
  ) {
    assert.throws(
      () => checkCommandRunsPin(cmd, SQLITE_PIN, "t.toml"),
      (e: unknown) =>
        e instanceof DefinitionError && e.keyPath === "target.command" &&
        /a Node target runs a script of the prepared package/.test(e.message),
      cmd.join(" "),
    );
  }
});

Deno.test("the committed sqlite-madnh npm lockfile records the pinned integrity and the native addon", async () => {
  const text = await Deno.readTextFile(
    join(REPO, "targets/sqlite-madnh/package-lock.json"),
  );
  const s = summarizeNpmLock(text, SQLITE_PIN);
  assert.equal(s.rootIntegrity, SQLITE_PIN.integrity);
  const addon = s.packages.find((p) => p.name === "better-sqlite3");
  assert.ok(addon?.integrity?.startsWith("sha512-"), JSON.stringify(addon));
  assert.equal(
    summarizeNpmLock(text, { ...SQLITE_PIN, version: "0.0.1" }).rootIntegrity,
    null,
  );
  assert.throws(
    () => summarizeNpmLock('{"lockfileVersion":1}', SQLITE_PIN),
    SyntaxError,
  );
});

Deno.test("integrity strings are sha512 in base64, as npm writes dist.integrity", () => {
  assert.equal(
    integrityOf(new Uint8Array()),
    "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
  );
});

Deno.test("the committed memory lockfile records the pinned integrity and the SDK it runs on", async () => {
  const text = await Deno.readTextFile(join(REPO, "targets/memory/deno.lock"));
  const s = summarizeLock(text, MEMORY_PIN);
  assert.equal(s.rootIntegrity, MEMORY_INTEGRITY);
  assert.ok(s.packages.some((p) => p.name === "@modelcontextprotocol/sdk"));
  assert.deepEqual(splitLockKey("@hono/node-server@2.1.9_hono@4.13.19"), {
    name: "@hono/node-server",
    version: "2.1.9",
  });
  assert.equal(
    summarizeLock(text, { ...MEMORY_PIN, version: "1.0.0" }).rootIntegrity,
    null,
  );
  assert.throws(
    () => summarizeLock('{"version":"3"}', MEMORY_PIN),
    SyntaxError,
  );
});

// ---- tarballs ----------------------------------------------------------------

function tarHeader(name: string, size: number, type: string): Uint8Array {
  const h = new Uint8Array(512);
  const put = (s: string, at: number) => h.set(new TextEncoder().encode(s), at);
  put(name, 0);
  put("0000644\0", 100);
  put("0000000\0", 108);
  put("0000000\0", 116);
  put(size.toString(8).padStart(11, "0") + "\0", 124);
  put("00000000000\0", 136);
  put("        ", 148);
  put(type, 156);
  put("ustar\0", 257);
  put("00", 263);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  return h;
}

function tgz(
  entries: { name: string; data?: string; type?: string }[],
): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const data = new TextEncoder().encode(e.data ?? "");
    parts.push(tarHeader(e.name, data.length, e.type ?? "0"));
    const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
    padded.set(data);
    parts.push(padded);
  }
  parts.push(new Uint8Array(1024));
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.length;
  }
  return new Uint8Array(gzipSync(all));
}

Deno.test("a package tarball is read into its files; links and escaping paths are refused", () => {
  const entries = readTarball(tgz([
    { name: "package/", type: "5" },
    { name: "package/package.json", data: '{"name":"x"}' },
    { name: "package/dist/index.js", data: "console.log(1)" },
  ]));
  assert.deepEqual(entries.map((e) => [e.path, e.type]), [
    ["package", "dir"],
    ["package/package.json", "file"],
    ["package/dist/index.js", "file"],
  ]);
  assert.equal(new TextDecoder().decode(entries[1]!.data), '{"name":"x"}');
  assert.throws(
    () => readTarball(tgz([{ name: "../evil", data: "x" }])),
    /unsafe path/,
  );
  assert.throws(
    () => readTarball(tgz([{ name: "/etc/passwd", data: "x" }])),
    /unsafe path/,
  );
  assert.throws(
    () => readTarball(tgz([{ name: "package/link", type: "2" }])),
    /links are refused/,
  );
});

// ---- prepared.json -------------------------------------------------------------

function entry(over: Partial<PreparedTarget> = {}): PreparedTarget {
  return {
    definition: "/repo/targets/memory/target.toml",
    package: MEMORY_PIN.package,
    version: MEMORY_PIN.version,
    integrity: MEMORY_INTEGRITY,
    git: null,
    commit: null,
    tarball: null,
    lockIntegrity: MEMORY_INTEGRITY,
    lock: { file: "/repo/targets/memory/deno.lock", sha256: "sha256:aa" },
    source: "sources/memory",
    denoDir: "deno_dir",
    packages: [],
    tools: { deno: "2.9.6", npm: null },
    preparedAt: "2026-11-30T00:00:00.000Z",
    ...over,
  };
}

Deno.test("prepared.json round-trips and refuses a file of another schema", () => {
  const f = emptyPrepared();
  f.targets.memory = entry();
  assert.deepEqual(parsePrepared(renderPrepared(f)), f);
  assert.throws(
    () => parsePrepared('{"schema":"x/1","targets":{}}'),
    /schema "x\/1"/,
  );
  assert.throws(() => parsePrepared("not json"), /not JSON/);
});

Deno.test("an unprepared or stale target gets one line saying what to run", () => {
  const ok = { lockSha256: "sha256:aa", packageCached: true };
  assert.equal(checkPrepared("memory", MEMORY_PIN, entry(), ok), null);
  assert.match(
    checkPrepared("memory", MEMORY_PIN, null, ok)!,
    /^target memory is not prepared: run `verity prepare memory`/,
  );
  assert.match(
    checkPrepared(
      "memory",
      { ...MEMORY_PIN, version: "2026.9.1" },
      entry(),
      ok,
    )!,
    /prepared for @modelcontextprotocol\/server-memory@2026\.8\.31, but its \[source\] now pins .*2026\.9\.1/,
  );
  assert.match(
    checkPrepared("memory", MEMORY_PIN, entry(), {
      ...ok,
      lockSha256: "sha256:bb",
    })!,
    /lockfile .* changed since it was prepared/,
  );
  assert.match(
    checkPrepared("memory", MEMORY_PIN, entry(), {
      ...ok,
      packageCached: false,
    })!,
    /missing from the prepared Deno cache/,
  );
});

// ---- MCP client configuration files ------------------------------------------

Deno.test("servers are read from Claude Desktop's mcpServers and VS Code's JSONC servers", () => {
  const claude = readConfiguredServer(
    JSON.stringify({
      mcpServers: {
        memory: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-memory"],
          env: { MEMORY_FILE_PATH: "/Users/me/memory.jsonl" },
        },
      },
    }),
    "claude_desktop_config.json",
    "memory",
  );
  assert.deepEqual(claude.args, ["-y", "@modelcontextprotocol/server-memory"]);
  assert.equal(claude.table, "mcpServers");
  const vscode = readConfiguredServer(
    `// workspace servers
{
  "servers": {
    /* the notes server */
    "notes": { "type": "stdio", "command": "deno", "args": ["run", "s.ts",], "env": { "A": "http://x//y" }, },
  },
}`,
    "mcp.json",
    "notes",
  );
  assert.equal(vscode.command, "deno");
  assert.deepEqual(vscode.args, ["run", "s.ts"]);
  assert.equal(
    vscode.env.A,
    "http://x//y",
    "a // inside a string is not a comment",
  );
  assert.equal(JSON.parse(stripJsonComments('{"a": [1, 2,], }')).a.length, 2);
});

Deno.test("a config without the server or a bad entry is a one-line error; a url entry is a remote server", () => {
  const text = JSON.stringify({
    mcpServers: {
      remote: {
        url: "https://example.com/mcp",
        headers: { "x-team": "a" },
      },
      bad: { command: "x", args: "not-a-list" },
      sse: { type: "sse" },
    },
  });
  assert.throws(
    () => readConfiguredServer(text, "c.json", "nope"),
    /c\.json: no server named "nope" \(listed: "remote", "bad", "sse"\)/,
  );
  const remote = readConfiguredServer(text, "c.json", "remote");
  assert.equal(remote.url, "https://example.com/mcp");
  assert.deepEqual(remote.headers, { "x-team": "a" });
  assert.throws(
    () => readConfiguredServer(text, "c.json", "sse"),
    /mcpServers\."sse": type "sse" without a url/,
  );
  assert.throws(
    () => readConfiguredServer(text, "c.json", "bad"),
    /mcpServers\."bad"\.args: expected an array of strings/,
  );
  assert.throws(
    () => readConfiguredServer("{}", "c.json", "x"),
    /no server table/,
  );
  assert.throws(
    () => readConfiguredServer("{", "c.json", "x"),
    /c\.json: not JSON/,
  );
});

Deno.test("prepared state is keyed by the target's directory: two targets named memory keep their own entries", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
  try {
    const layout = cacheLayout({ root: join(cwd, ".verity") });
    await Deno.mkdir(
      join(
        layout.denoDir,
        "npm/registry.npmjs.org",
        MEMORY_PIN.package,
        MEMORY_PIN.version,
      ),
      { recursive: true },
    );
    const dirs = ["a/memory", "b/memory"];
    for (const d of dirs) {
      const dir = join(cwd, d);
      await Deno.mkdir(dir, { recursive: true });
      const lock = `{"version":"5","of":"${d}"}`;
      await Deno.writeTextFile(join(dir, "deno.lock"), lock);
      await savePreparedTarget(
        layout,
        dir,
        entry({
          definition: join(dir, "target.toml"),
          lock: { file: join(dir, "deno.lock"), sha256: sha256Of(lock) },
          source: `sources/${d}`,
        }),
      );
    }
    const file = await readPrepared(layout);
    assert.deepEqual(Object.keys(file.targets).sort(), dirs);
    for (const d of dirs) {
      const run = await resolvePreparedRun({
        source: {
          package: MEMORY_PIN.package,
          version: MEMORY_PIN.version,
          integrity: MEMORY_INTEGRITY,
        },
        file: join(cwd, d, "target.toml"),
        command: MEMORY_COMMAND,
        name: "memory",
        dir: join(cwd, d),
      }, { root: layout.root });
      assert.equal(run?.source, join(layout.root, "sources", d));
    }
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

// ---- init planning and the template ------------------------------------------

Deno.test("init turns npx into a pinned Deno npm: command and moves outside paths into {state}", () => {
  const plan = planInit({
    command: [
      "npx",
      "-y",
      "@modelcontextprotocol/server-filesystem",
      "/Users/me/Desktop",
    ],
    env: { GITHUB_TOKEN: "ghp_secret", LOG_LEVEL: "debug" },
    cwd: "/work",
    home: "/Users/me",
    pathKinds: { "/Users/me/Desktop": "dir" },
  });
  assert.equal(plan.kind, "npm");
  assert.deepEqual(plan.npm, {
    package: "@modelcontextprotocol/server-filesystem",
    range: "latest",
  });
  const cmd = withVersion(plan.command, "2026.8.31");
  assert.deepEqual(cmd.slice(0, 6), [
    "{deno}",
    "run",
    "--no-config",
    "--frozen",
    "--lock={target}/deno.lock",
    "npm:@modelcontextprotocol/server-filesystem@2026.8.31",
  ]);
  assert.match(
    cmd[6]!,
    /^TODO\(verity\): was "\/Users\/me\/Desktop", outside the state directory/,
  );
  assert.equal(withVersion(plan.listCommand, "1")[6], "{state}/Desktop");
  assert.deepEqual(plan.listDirs, ["Desktop"]);
  assert.match(plan.env.GITHUB_TOKEN!, /^TODO\(verity\): a secret/);
  assert.ok(
    !JSON.stringify(plan.env).includes("ghp_secret"),
    "secrets are never written",
  );
  assert.equal(
    plan.listEnv.GITHUB_TOKEN,
    "ghp_secret",
    "the listing run still gets it",
  );
  assert.equal(plan.env.LOG_LEVEL, "debug");
});

Deno.test("init keeps a local Deno script (absolute) and drops permission flags", () => {
  const plan = planInit({
    command: [
      "deno",
      "run",
      "-A",
      "--config",
      "deno.json",
      "srv/server.ts",
      "--verbose",
    ],
    env: {},
    cwd: "/work",
    home: null,
    pathKinds: { "/work/srv/server.ts": "file", "/work/deno.json": "file" },
  });
  assert.equal(plan.kind, "deno");
  assert.deepEqual(plan.command, [
    "{deno}",
    "run",
    "--config",
    "deno.json",
    "/work/srv/server.ts",
    "--verbose",
  ]);
  assert.deepEqual(plan.read, ["/work/srv"]);
  assert.ok(plan.notes.some((n) => n.includes("dropped -A")));
  const npm = planInit({
    command: ["deno", "run", "-A", "npm:@scope/srv@^1.2.0", "stdio"],
    env: {},
    cwd: "/",
    home: null,
    pathKinds: {},
  });
  assert.deepEqual(npm.npm, { package: "@scope/srv", range: "^1.2.0" });
  assert.equal(npm.command.at(-1), "stdio");
});

Deno.test("init's template does not load until every TODO(verity) is decided, then it does", () => {
  const text = renderTargetTemplate({
    name: "notes",
    command: ["{deno}", "run", "/srv/notes/server.ts"],
    env: { NOTES_FILE: 'TODO(verity): was "/home/me/notes.json"' },
    read: ["/srv/notes"],
    source: null,
    notes: ["dropped -A"],
    generatedBy: "verity test",
    origin: "deno run -A /srv/notes/server.ts",
    tools: [
      {
        name: "add_note",
        description: "Add a note.",
        hints: {
          readOnlyHint: "FALSE",
          destructiveHint: "FALSE",
          idempotentHint: "FALSE",
          openWorldHint: "FALSE",
        },
        inputSchema: {
          type: "object",
          properties: {
            text: { type: "string" },
            tags: { type: "array", items: { type: "string" } },
          },
          required: ["text"],
        },
      },
      {
        name: "list_notes",
        description: null,
        hints: {},
        inputSchema: { type: "object" },
      },
    ],
  });
  assert.match(text, /# declared: readOnlyHint=FALSE destructiveHint=FALSE/);
  assert.match(text, /# optional: tags: array of string/);
  assert.match(text, /arguments = \{ text = "TODO\(verity\): string" \}/);
  // The state decision is a TODO with both options explained, never a silent [].
  assert.match(
    text,
    /^locations = \["TODO\(verity\): where does this server keep its state\?"\]$/m,
  );
  assert.match(
    text,
    /locations = \[\] +no state at all\. Coverage is then "none"/,
  );
  assert.match(
    text,
    /locations = \["memory:process"\] +state kept in the server's memory/,
  );
  assert.match(text, /INCONCLUSIVE:UNOBSERVED_STATE, never PASS/);
  assert.doesNotMatch(text, /^locations = \[\]$/m);
  assert.throws(
    () => parseDefinition(text, "/t/target.toml"),
    (e: unknown) =>
      e instanceof DefinitionError && /still a placeholder/.test(e.message),
  );
  let filled = text;
  const decisions: [string, string][] = [
    ['"TODO(verity): was \\"/home/me/notes.json\\""', '"{state}/notes.json"'],
    [
      '["TODO(verity): where does this server keep its state?"]',
      '["json:notes.json"]',
    ],
    ['"TODO(verity): sqlite, fs or json"', '"json"'],
    ['"TODO(verity): path inside the state directory"', '"notes.json"'],
    [
      '"TODO(verity): seed file or directory beside target.toml"',
      '"notes.json"',
    ],
    ['["TODO(verity): regions holding the user\'s records"]', '["notes.json"]'],
    ['"TODO(verity): string"', '"hello"'],
  ];
  for (const [todo, value] of decisions) {
    // Until the last one is replaced, the loader names what is left.
    assert.throws(
      () => parseDefinition(filled, "/t/target.toml"),
      /TODO\(verity\)/,
    );
    assert.ok(filled.includes(todo), todo);
    filled = filled.replace(todo, value);
  }
  const def = parseDefinition(filled, "/t/target.toml");
  assert.equal(def.kind, "target");
  assert.deepEqual(def.tools.map((t) => t.name), ["add_note", "list_notes"]);
  assert.deepEqual(def.read, ["/srv/notes"]);
  assert.equal(def.env.NOTES_FILE, "{state}/notes.json");
});

// ---- commands, end to end ----------------------------------------------------

async function verity(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args, { cwd });
}

Deno.test("verity run refuses a pinned target that was not prepared here, naming the command to run", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
  try {
    const r = await verity(
      ["run", join(REPO, "targets/memory"), "--audit"],
      cwd,
    );
    assert.equal(r.code, 2);
    // From a directory where the name finds nothing, the path is named:
    // the command as given works from here.
    assert.ok(
      r.stderr.includes(
        `target memory is not prepared: run \`verity prepare ${
          join(REPO, "targets/memory")
        }\``,
      ),
      r.stderr,
    );
    assert.equal(
      r.stderr.trim().split("\n").length,
      1,
      "one line, no stack trace",
    );
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("verity run refuses a Node target that was not prepared here", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
  try {
    const r = await verity(
      ["run", join(REPO, "targets/sqlite-madnh"), "--audit"],
      cwd,
    );
    assert.equal(r.code, 2);
    assert.ok(
      r.stderr.includes(
        `target sqlite-madnh is not prepared: run \`verity prepare ${
          join(REPO, "targets/sqlite-madnh")
        }\``,
      ),
      r.stderr,
    );
    assert.equal(r.stderr.trim().split("\n").length, 1);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("verity prepare refuses fixtures and targets without a [source]", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
  try {
    const fixture = await verity([
      "prepare",
      join(REPO, "fixtures/honest-idempotent"),
    ], cwd);
    assert.equal(fixture.code, 2);
    assert.match(fixture.stderr, /is a fixture; only targets are prepared/);
    await Deno.writeTextFile(
      join(cwd, "target.toml"),
      '[target]\nname = "local"\ncommand = ["{deno}", "run", "server.ts"]\n[state]\nlocations = []\n',
    );
    const local = await verity(["prepare", cwd], cwd);
    assert.equal(local.code, 2);
    assert.match(local.stderr, /has no \[source\]; there is nothing to fetch/);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("verity init refuses to overwrite, and refuses a config and a command together", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
  try {
    await Deno.mkdir(join(cwd, "t"));
    await Deno.writeTextFile(join(cwd, "t/target.toml"), "# mine\n");
    const r = await verity(["init", "t", "--", "deno", "run", "x.ts"], cwd);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /target\.toml exists; pass --force to overwrite it/);
    assert.equal(
      await Deno.readTextFile(join(cwd, "t/target.toml")),
      "# mine\n",
    );
    const both = await verity([
      "init",
      "u",
      "--from-config",
      "c.json",
      "--server",
      "s",
      "--",
      "x",
    ], cwd);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /either --from-config or a command after --/);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test({
  name:
    "init from a VS Code config writes a target that runs as an audit once its TODOs are filled",
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
    try {
      const server = join(REPO, "tests/data/audit/notes_server.ts");
      await Deno.writeTextFile(
        join(cwd, "mcp.json"),
        `// .vscode/mcp.json
{
  "servers": {
    "notes": {
      "type": "stdio",
      "command": "deno",
      "args": ["run", "-A", "--config", ${
          JSON.stringify(join(REPO, "deno.json"))
        }, ${JSON.stringify(server)}],
      "env": { "NOTES_FILE": "/home/me/notes.json" },
    },
  },
}`,
      );
      const init = await verity([
        "init",
        "notes",
        "--from-config",
        "mcp.json",
        "--server",
        "notes",
      ], cwd);
      assert.equal(init.code, 0, init.stderr);
      assert.match(init.stdout, /wrote notes\/target\.toml: 3 tool\(s\)/);
      const file = join(cwd, "notes/target.toml");
      let text = await Deno.readTextFile(file);
      assert.match(
        text,
        /# declared: readOnlyHint=TRUE destructiveHint=ABSENT idempotentHint=ABSENT openWorldHint=FALSE/,
      );
      assert.ok(!text.includes('"-A"'), "permission flags are the sandbox's");

      const early = await verity(["run", "notes", "--audit"], cwd);
      assert.equal(early.code, 2);
      assert.match(
        early.stderr,
        /target\.toml: target\.env\.NOTES_FILE: still a placeholder/,
      );

      await Deno.copyFile(
        join(REPO, "tests/data/audit/notes.json"),
        join(cwd, "notes/notes.json"),
      );
      text = text
        .replace(
          /NOTES_FILE = "TODO\(verity\)[^\n]*/,
          'NOTES_FILE = "{state}/notes.json"',
        )
        .replace(
          /locations = \["TODO\(verity\)[^\n]*/,
          'locations = ["json:notes.json"]',
        )
        .replace(/kind = "TODO\(verity\)[^\n]*/, 'kind = "json"')
        .replace(
          /label = "TODO\(verity\)[^\n]*/,
          'label = "notes.json"\nregions = { notes = "/notes" }\nkey = { notes = ["id"] }',
        )
        .replace(/seed = "TODO\(verity\)[^\n]*/, 'seed = "notes.json"')
        .replace(
          /business = \["TODO\(verity\)[^\n]*/,
          'business = ["notes", "notes.json"]',
        )
        .replace(/text = "TODO\(verity\)[^"]*"/, 'text = "second"');
      await Deno.writeTextFile(file, text);

      const audit = await verity(
        [
          "run",
          "notes",
          "--audit",
          "--jobs",
          "2",
          "--concurrent-attempts",
          "1",
          "--json",
        ],
        cwd,
      );
      assert.equal(
        audit.code,
        0,
        "an audit exits 0 whatever the verdicts: " + audit.stderr,
      );
      const report = JSON.parse(audit.stdout) as {
        provenance: { target: { pinned: boolean; detail?: string } };
        audit: boolean;
        expected: unknown[];
        sandbox: { backend: string };
        verdicts: { tool: string; test: string; outcome: string }[];
      };
      assert.equal(report.audit, true);
      assert.deepEqual(report.provenance.target, {
        pinned: false,
        detail:
          "a local command (the target has no [source]), run as found on disk",
      });
      assert.deepEqual(report.expected, []);
      assert.equal(report.sandbox.backend, "deno");
      const v = (tool: string, test: string) =>
        report.verdicts.find((x) => x.tool === tool && x.test === test)
          ?.outcome;
      assert.equal(v("count_notes", "read_only"), "VIOLATION");
      assert.equal(v("list_notes", "read_only"), "PASS");
      assert.equal(v("add_note", "destructive"), "PASS");

      const gate = await verity(
        [
          "run",
          "notes",
          "--audit",
          "--fail-on-violation",
          "--tool",
          "count_notes",
          "--jobs",
          "2",
        ],
        cwd,
      );
      assert.equal(
        gate.code,
        1,
        "--fail-on-violation turns a violation into exit 1",
      );
      assert.match(gate.stdout, /violations: 1 \(count_notes read_only\)/);
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

// ---- the network (npm registry): only with VERITY_TEST_NETWORK=1 -------------

const network = Deno.env.get("VERITY_TEST_NETWORK") === "1";

Deno.test({
  name:
    "prepare fetches the memory server, records it, and refuses a tampered integrity",
  ignore: !network,
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-audit-net-" });
    try {
      const target = join(cwd, "memory");
      await Deno.mkdir(target);
      for (const f of ["target.toml", "seed.jsonl", "deno.lock"]) {
        await Deno.copyFile(join(REPO, "targets/memory", f), join(target, f));
      }
      const ok = await verity(["prepare", "memory"], cwd);
      assert.equal(ok.code, 0, ok.stderr);
      const prepared = parsePrepared(
        await Deno.readTextFile(join(cwd, ".verity/prepared.json")),
      );
      assert.equal(prepared.targets.memory?.version, "2026.8.31");
      assert.equal(prepared.targets.memory?.lockIntegrity, MEMORY_INTEGRITY);
      assert.equal(
        prepared.targets.memory?.tarball?.integrity,
        MEMORY_INTEGRITY,
      );

      // The report names the pin and the prepared cache it ran from, and
      // report verify finds the pinned package in every session's command.
      const runsDir = join(cwd, "runs");
      const one = await verity([
        "run",
        "memory",
        "--audit",
        "--tool",
        "read_graph",
        "--concurrent-attempts",
        "1",
        "--runs-dir",
        runsDir,
        "--json",
      ], cwd);
      assert.equal(one.code, 0, one.stderr);
      const report = JSON.parse(one.stdout);
      assert.deepEqual(
        {
          pinned: report.provenance.target.pinned,
          package: report.provenance.target.package,
          version: report.provenance.target.version,
          integrity: report.provenance.target.integrity,
          preparedCache: report.provenance.target.preparedCache,
          lockIntegrity: report.provenance.target.lockIntegrity,
        },
        {
          pinned: true,
          package: "@modelcontextprotocol/server-memory",
          version: "2026.8.31",
          integrity: MEMORY_INTEGRITY,
          preparedCache: true,
          lockIntegrity: MEMORY_INTEGRITY,
        },
      );
      const verified = await verity([
        "report",
        "verify",
        join(runsDir, report.runId, "report.json"),
      ], cwd);
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);

      const toml = await Deno.readTextFile(join(target, "target.toml"));
      const wrong = MEMORY_INTEGRITY.replace("ljj/", "AAAA");
      await Deno.writeTextFile(
        join(target, "target.toml"),
        toml.replace(MEMORY_INTEGRITY, wrong),
      );
      const bad = await verity(["prepare", "memory"], cwd);
      assert.equal(bad.code, 2);
      assert.match(
        bad.stderr,
        /integrity mismatch for @modelcontextprotocol\/server-memory@2026\.8\.31/,
      );
      const after = parsePrepared(
        await Deno.readTextFile(join(cwd, ".verity/prepared.json")),
      );
      assert.equal(
        after.targets.memory?.integrity,
        MEMORY_INTEGRITY,
        "nothing recorded for the tampered pin",
      );
      const run = await verity(["run", "memory", "--audit"], cwd);
      assert.equal(run.code, 2);
      assert.match(
        run.stderr,
        /\[source\]\.integrity changed since it was prepared/,
      );
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "{state} in tool arguments: each session sends its own resolved path, the report keeps both the raw and the resolved arguments",
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
    try {
      const fixture = join(REPO, "fixtures/honest-closedworld");
      await Deno.copyFile(join(fixture, "seed.sql"), join(cwd, "seed.sql"));
      await Deno.writeTextFile(
        join(cwd, "fixture.toml"),
        `[fixture]
name = "state-args"
command = ["{deno}", "run", ${JSON.stringify(join(fixture, "server.ts"))}]
cwd = "{state}"

[state]
locations = ["sqlite:state.db"]

[[adapters]]
kind = "sqlite"
label = "state.db"
seed = "seed.sql"
business = ["rates"]

[[tools]]
name = "search_rates"
arguments = { prefix = "{state}/EUR" }
`,
      );
      const r = await verity(
        ["run", cwd, "--json", "--runs-dir", join(cwd, "runs")],
        cwd,
      );
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.deepEqual(report.observations.tools[0].arguments, {
        prefix: "{state}/EUR",
      });
      const calls = report.sessions.filter((s: { kind: string }) =>
        s.kind === "once" || s.kind === "twice"
      );
      assert.equal(calls.length, 6);
      const sent = calls.map((s: { arguments?: { prefix: string } }) =>
        s.arguments?.prefix
      );
      for (const p of sent) assert.match(p, /^\/.+\/state\/EUR$/);
      assert.equal(new Set(sent).size, 6, "one state directory per session");
      assert.equal(report.sandbox.allow.cwd, "{state}");
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "Node targets: install scripts run under bubblewrap with no network, writing only the install directory",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "verity-audit-test-" });
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    let connected = false;
    const accepting = (async () => {
      for await (const c of listener) {
        connected = true;
        c.close();
      }
    })();
    try {
      const stage = join(root, "stage");
      const outside = join(root, "escape.txt");
      const evil = join(stage, "node_modules", "evil");
      await Deno.mkdir(evil, { recursive: true });
      const script = `const fs = require("fs");
fs.writeFileSync("inside.txt", "1");
try { fs.writeFileSync(${JSON.stringify(outside)}, "x"); } catch (e) {}
try { fs.writeFileSync("/etc/verity-escape", "x"); fs.writeFileSync("etc.txt", "wrote"); } catch (e) { fs.writeFileSync("etc.txt", e.code); }
require("net").connect(${port}, "127.0.0.1")
  .on("connect", () => fs.writeFileSync("net.txt", "connected"))
  .on("error", (e) => fs.writeFileSync("net.txt", e.code));`;
      await Deno.writeTextFile(join(evil, "install.js"), script);
      await Deno.writeTextFile(
        join(evil, "package.json"),
        JSON.stringify({
          name: "evil",
          version: "1.0.0",
          scripts: { install: "node install.js" },
        }),
      );
      await Deno.writeTextFile(
        join(stage, "package.json"),
        JSON.stringify({
          name: "stage",
          private: true,
          dependencies: { evil: "1.0.0" },
        }),
      );
      const npm = (await new Deno.Command("sh", {
        args: ["-c", "command -v npm"],
        stdout: "piped",
      }).output()).stdout;
      const node = (await new Deno.Command("sh", {
        args: ["-c", 'readlink -f "$(command -v node)"'],
        stdout: "piped",
      }).output()).stdout;
      const dec = new TextDecoder();
      await rebuildSandboxed(
        stage,
        dec.decode(npm).trim(),
        dec.decode(node).trim(),
      );
      const read = (f: string) => Deno.readTextFile(join(evil, f));
      assert.equal(await read("inside.txt"), "1", "the script ran");
      assert.equal(await read("etc.txt"), "EROFS", "read-only root");
      assert.match(await read("net.txt"), /^E(CONNREFUSED|NETUNREACH)$/);
      assert.equal(connected, false, "no connection reached the host");
      await assert.rejects(Deno.stat(outside), "hidden /tmp: nothing escaped");
    } finally {
      listener.close();
      await accepting.catch(() => {});
      await Deno.remove(root, { recursive: true });
    }
  },
});
