/**
 * Remote servers over Streamable HTTP from the command line: `tools`,
 * `capture` and `reality` with `--url`, `--header` and `--header-env`.
 * The secret header value is sent (the server sees it) but never printed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SECRET = "sk-remote-9f8e7d6c5b4a";

async function verity(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args, { env });
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function withStore(f: (url: string, state: string) => Promise<void>) {
  const state = Deno.makeTempDirSync({ prefix: "verity-http-remote-" });
  const db = new DatabaseSync(join(state, "state.db"));
  db.exec(Deno.readTextFileSync(join(ROOT, "fixtures/http-store/seed.sql")));
  db.close();
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      join(ROOT, "fixtures/http-store/server.ts"),
      "--port",
      String(port),
    ],
    env: { VERITY_STATE_DIR: state },
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const t0 = Date.now();
    while (true) {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        break;
      } catch {
        if (Date.now() - t0 > 20_000) throw new Error("server did not start");
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await f(`http://127.0.0.1:${port}/mcp`, state);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    Deno.removeSync(state, { recursive: true });
  }
}

function names(db: string): string[] {
  const d = new DatabaseSync(db, { readOnly: true });
  const rows = d.prepare("SELECT name FROM items ORDER BY id").all() as {
    name: string;
  }[];
  d.close();
  return rows.map((r) => r.name);
}

Deno.test("remote: tools, capture and reality over --url, secrets never shown", async () => {
  await withStore(async (url, state) => {
    const tools = await verity([
      "tools",
      "--json",
      "--url",
      url,
      "--header",
      `authorization=Bearer ${SECRET}`,
    ]);
    assert.equal(tools.code, 0, tools.stderr);
    const listed = JSON.parse(tools.stdout);
    assert.deepEqual(
      listed.tools.map((t: { name: string }) => t.name).sort(),
      ["add_item", "count_items", "get_item", "rename_item"],
    );
    const get = listed.tools.find((t: { name: string }) =>
      t.name === "get_item"
    );
    assert.equal(get.hints.readOnlyHint.state, "TRUE");
    assert.equal(get.hints.destructiveHint.state, "ABSENT");

    const cap = await verity([
      "capture",
      "--url",
      url,
      "--header-env",
      "x-api-token=MY_TOKEN",
    ], { MY_TOKEN: SECRET });
    assert.equal(cap.code, 0, cap.stderr);
    const manifest = JSON.parse(cap.stdout);
    assert.deepEqual(manifest.server.command ?? manifest.command, [url]);

    const ro = await verity(["reality", "--json", "--url", url]);
    assert.equal(ro.code, 0, ro.stderr);
    const report = JSON.parse(ro.stdout);
    const called = report.tools.filter((t: { calls: unknown[] }) =>
      t.calls.length > 0
    ).map((t: { name: string }) => t.name);
    assert.deepEqual(
      called,
      ["get_item", "count_items"],
      "only the read-only tools are called",
    );
    assert.deepEqual(names(join(state, "state.db")), ["bolt", "nut"]);

    const rw = await verity([
      "reality",
      "--url",
      url,
      "--include-destructive",
      "--header",
      `authorization=Bearer ${SECRET}`,
    ]);
    assert.equal(rw.code, 0, rw.stderr);
    assert.match(
      rw.stderr,
      /warning: --include-destructive on a remote server/,
    );
    assert.notDeepEqual(names(join(state, "state.db")), ["bolt", "nut"]);

    for (const r of [tools, cap, ro, rw]) {
      assert.ok(!(r.stdout + r.stderr).includes(SECRET), "secret shown");
    }
  });
});

Deno.test("remote: init --url writes a local HTTP target template", async () => {
  await withStore(async (url) => {
    const dir = Deno.makeTempDirSync({ prefix: "verity-http-init-" });
    try {
      const r = await verity([
        "init",
        join(dir, "store"),
        "--url",
        url,
        "--header",
        `authorization=Bearer ${SECRET}`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const toml = Deno.readTextFileSync(join(dir, "store", "target.toml"));
      assert.match(toml, /^transport = "http"$/m);
      assert.match(toml, /^url = "http:\/\/127\.0\.0\.1:\{port\}\/mcp"$/m);
      for (const t of ["get_item", "rename_item", "add_item", "count_items"]) {
        assert.match(toml, new RegExp(`name = "${t}"`));
      }
      assert.ok(
        !toml.includes(SECRET) && !(r.stdout + r.stderr).includes(SECRET),
      );
      // Not loadable until the local command is decided.
      const run = await verity(["run", join(dir, "store"), "--audit"]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /TODO\(verity\)/);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  });
});

Deno.test("remote: init --from-config of a url entry lists it as init --url does, its headers sent, never shown", async () => {
  await withStore(async (url) => {
    const dir = Deno.makeTempDirSync({ prefix: "verity-http-init-" });
    try {
      const config = join(dir, ".mcp.json");
      Deno.writeTextFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            store: { url, headers: { authorization: `Bearer ${SECRET}` } },
            vars: { url, headers: { authorization: "Bearer ${input:token}" } },
          },
        }),
      );
      const r = await verity([
        "init",
        join(dir, "t"),
        "--from-config",
        config,
        "--server",
        "store",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const toml = Deno.readTextFileSync(join(dir, "t", "target.toml"));
      assert.match(toml, /^name = "store"$/m);
      assert.match(toml, /^transport = "http"$/m);
      assert.match(toml, /name = "count_items"/);
      assert.ok(
        !toml.includes(SECRET) && !(r.stdout + r.stderr).includes(SECRET),
      );
      const vars = await verity([
        "init",
        join(dir, "v"),
        "--from-config",
        config,
        "--server",
        "vars",
      ]);
      assert.equal(vars.code, 2);
      assert.match(
        vars.stderr,
        /headers\.authorization: a client variable verity cannot expand; pass the value with --header-env authorization=ENV_VAR/,
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  });
});

Deno.test("remote: bad --url / --header input is exit 2 with one line, no secret", async () => {
  const cases: [string[], RegExp][] = [
    [["run", "--url", "http://127.0.0.1:1/mcp"], /cannot be reset/],
    [["tools", "--url", "ftp://x/mcp"], /must be http:\/\/ or https:\/\//],
    [
      ["tools", "--url", "http://127.0.0.1:1/mcp", "--header", "nope"],
      /--header expects NAME=VALUE/,
    ],
    [[
      "tools",
      "--url",
      "http://127.0.0.1:1/mcp",
      "--header-env",
      "x=NOT_SET_HERE",
    ], /NOT_SET_HERE is not set/],
    [
      ["tools", "--header", `authorization=${SECRET}`, "--", "true"],
      /need --url/,
    ],
    [
      ["tools", "--url", `http://127.0.0.1:1/mcp?key=${SECRET}`],
      /cannot reach server/,
    ],
  ];
  for (const [args, re] of cases) {
    const r = await verity(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.ok(!r.stderr.includes(SECRET), r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
});
