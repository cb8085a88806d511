/**
 * The wire client against hostile servers: each ends within its timeout
 * plus 5 s, with a one-line reason, exit 2, and no process left behind.
 */
import assert from "node:assert/strict";
import { runVerity } from "./_verity.ts";

const HERE = new URL("./hostile/", import.meta.url).pathname;
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const dec = new TextDecoder();

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

async function verity(args: string[]): Promise<CliResult> {
  return await runVerity(args);
}

/** Processes whose command line mentions `marker`, other than pgrep itself. */
async function survivors(marker: string): Promise<string[]> {
  const out = await new Deno.Command("pgrep", {
    args: ["-af", marker],
    stdout: "piped",
  })
    .output();
  // Only server processes: not pgrep, and not the verity (deno) process whose
  // own arguments name the script.
  return dec.decode(out.stdout).split("\n").filter((l) =>
    l.trim() && !l.includes("pgrep") && !l.includes("deno")
  );
}

const TIMEOUT_S = 2;

for (
  const [name, script, reason] of [
    [
      "garbage on stdout",
      "garbage.sh",
      /printed non-JSON on stdout: "hello, I am not JSON"/,
    ],
    ["never answers", "silent.sh", /no answer to initialize within/],
    [
      "exits before answering",
      "early_exit.sh",
      /exited before answering \(exit code 3\); stderr: crashing on purpose/,
    ],
    ["a 100 MB line", "flood.sh", /longer than 16777216 bytes/],
    [
      "a grandchild holding stdout",
      "grandchild.sh",
      /no answer to initialize within|exited/,
    ],
  ] as const
) {
  Deno.test(`verity tools survives a server that sends ${name}`, async () => {
    const marker = `${HERE}${script}`;
    const r = await verity([
      "tools",
      "--no-sandbox",
      "--timeout",
      String(TIMEOUT_S),
      "--",
      "sh",
      marker,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, reason);
    assert.equal(
      r.stderr.trim().split("\n").length,
      1,
      `one line, got: ${r.stderr}`,
    );
    assert.doesNotMatch(r.stderr, /\bat .*\.ts:\d+/, "no stack trace");
    // The harness's own startup (deno) is included, so allow for it on a busy machine.
    assert.ok(
      r.ms < (TIMEOUT_S + 5) * 1000 + 3000,
      `took ${r.ms.toFixed(0)} ms`,
    );
    await new Promise((res) => setTimeout(res, 200));
    assert.deepEqual(await survivors(script), [], "no process left behind");
  });
}

Deno.test("verity tools --json reports every malformation and the valid tool", async () => {
  const server =
    new URL("../fixtures/malformed-hints/server.ts", import.meta.url).pathname;
  const r = await verity([
    "tools",
    "--json",
    "--",
    Deno.execPath(),
    "run",
    server,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.pages, 3);
  const byName = Object.fromEntries(
    out.tools.map((t: { name: string; hints: unknown }) => [t.name, t.hints]),
  );
  assert.deepEqual(byName.string_hint.readOnlyHint, {
    state: "MALFORMED",
    detail: 'string: "true"',
  });
  assert.deepEqual(byName.number_hint.idempotentHint, {
    state: "MALFORMED",
    detail: "number: 1",
  });
  assert.deepEqual(byName.null_hint.destructiveHint, {
    state: "MALFORMED",
    detail: "null: null",
  });
  assert.equal(byName.duplicate_hint.readOnlyHint.state, "MALFORMED");
  assert.match(byName.duplicate_hint.readOnlyHint.detail, /^duplicate_key/);
  assert.deepEqual(byName.list_hint.openWorldHint, {
    state: "MALFORMED",
    detail: "list: [false]",
  });
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(byName.valid_hints).map((
        [k, v],
      ) => [k, (v as { state: string }).state]),
    ),
    {
      readOnlyHint: "TRUE",
      destructiveHint: "FALSE",
      idempotentHint: "TRUE",
      openWorldHint: "FALSE",
    },
  );
  // A hint not sent stays ABSENT, never FALSE.
  assert.equal(byName.string_hint.destructiveHint.state, "ABSENT");
});

for (
  const [what, args, msg] of [
    [
      "an unknown flag",
      ["tools", "--frobnicate", "--", "true"],
      /^verity tools: unknown flag --frobnicate \(see verity tools --help\)$/m,
    ],
    [
      "a misspelt flag",
      ["run", "liar-readonly", "--job", "2"],
      /^verity run: unknown flag --job; did you mean --jobs\? \(see verity run --help\)$/m,
    ],
    [
      "verity's own flag after --",
      ["reality", "--", "deno", "run", "server.ts", "--fail-under", "80"],
      /^verity reality: --fail-under after -- would go to the server, not to verity: put it before -- \(or write -- -- to pass it to the server as it is\)$/m,
    ],
    ["a missing --", ["tools", "--json"], /missing server command/],
    [
      "a bad timeout",
      ["tools", "--timeout", "soon", "--", "true"],
      /--timeout expects/,
    ],
    ["an unknown command", ["frobnicate"], /unknown command "frobnicate"/],
    [
      "a misspelt command",
      ["reallity"],
      /^verity: unknown command "reallity"; did you mean reality\? \(see verity --help\)$/m,
    ],
  ] as const
) {
  Deno.test(`a bad command line (${what}) is one line and exit 2`, async () => {
    const r = await verity([...args]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, msg);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  });
}

Deno.test("a server that is not found is one line and exit 2", async () => {
  const r = await verity(["tools", "--", "/nonexistent/server-binary"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /cannot start "\/nonexistent\/server-binary"/);
});

Deno.test("an interrupted verity stops the servers it started", async () => {
  const marker = `${HERE}silent.sh`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      MAIN,
      "tools",
      "--no-sandbox",
      "--timeout",
      "60",
      "--",
      "sh",
      marker,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  // Wait until the server is running, then interrupt verity itself.
  for (let i = 0; i < 100 && (await survivors("silent.sh")).length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.notDeepEqual(await survivors("silent.sh"), [], "the server started");
  child.kill("SIGTERM");
  const out = await child.output();
  assert.equal(out.code, 143);
  assert.match(
    dec.decode(out.stderr),
    /interrupted by SIGTERM; stopped 1 server process group/,
  );
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(await survivors("silent.sh"), [], "no server left behind");
});

Deno.test("a server printing non-JSON on stdout fails fast, not after the timeout", async () => {
  const r = await verity([
    "tools",
    "--timeout",
    "60",
    "--",
    "sh",
    `${HERE}garbage.sh`,
  ]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /non-JSON on stdout: "hello, I am not JSON"/);
  assert.ok(r.ms < 20_000, `took ${r.ms.toFixed(0)} ms with a 60 s timeout`);
  await new Promise((res) => setTimeout(res, 200));
  assert.deepEqual(await survivors("garbage.sh"), []);
});
