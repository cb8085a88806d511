/**
 * `verity guard` end to end, driven by the TypeScript SDK's client as a
 * real MCP client would drive it: an unchanged server answers exactly as
 * it does directly; a tool whose schema and description changed after the
 * audit is left out and refused; a hint the audit refuted (a real audit of
 * `fixtures/liar-readonly`, attested with a fresh key) is corrected under
 * the policy; `list_changed` and pagination are re-checked; the session's
 * ledger verifies against the head printed at exit and feeds
 * `verity ledger validate`.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SERVER = [Deno.execPath(), "run", `${ROOT}tests/data/guard/server.ts`];
const MINI = [
  Deno.execPath(),
  "run",
  `${ROOT}tests/data/evidence/mini_server.ts`,
];
const dir = await Deno.makeTempDir({ prefix: "verity-guard-test-" });

/** The environment a client passes the process it starts. */
function clientEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const k of ["PATH", "HOME", "DENO_DIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  return env;
}

interface Session {
  client: Client;
  /** Close the client, then what the guard printed on stderr. */
  close(): Promise<string>;
}

/** Connect the SDK client to `command` (the guard, or the server directly). */
async function connect(command: string[]): Promise<Session> {
  const transport = new StdioClientTransport({
    command: command[0]!,
    args: command.slice(1),
    env: clientEnv(),
    cwd: ROOT,
    stderr: "pipe",
  });
  const chunks: Uint8Array[] = [];
  const done = (async () => {
    const s = transport.stderr as unknown as AsyncIterable<Uint8Array> | null;
    if (s) { for await (const c of s) chunks.push(c); }
  })();
  const client = new Client({ name: "guard-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await client.close();
      await done;
      return new TextDecoder().decode(
        new Uint8Array(chunks.flatMap((c) => [...c])),
      );
    },
  };
}

function guard(args: string[], server: string[] = SERVER): string[] {
  return [
    Deno.execPath(),
    "run",
    "--allow-all",
    "--config",
    `${ROOT}deno.json`,
    `${ROOT}main.ts`,
    "guard",
    ...args,
    "--",
    ...server,
  ];
}

/** The head printed at exit. */
function headOf(stderr: string): string {
  const m = stderr.match(/head (sha256:[0-9a-f]{64})/);
  assert.ok(m, stderr);
  return m[1]!;
}

const withoutMeta = (tools: { _meta?: unknown }[]) =>
  tools.map(({ _meta, ...t }) => t);

const manifest = `${dir}/manifest.json`;
const captured = await runVerity([
  "capture",
  "--out",
  manifest,
  "--",
  ...SERVER,
]);
assert.equal(captured.code, 0, captured.stderr);
const manifestDigest = `sha256:${
  [
    ...new Uint8Array(
      await crypto.subtle.digest("SHA-256", await Deno.readFile(manifest)),
    ),
  ].map((b) => b.toString(16).padStart(2, "0")).join("")
}`;

Deno.test("guard: an unchanged server works untouched through it (same listing, same answers), and its session's ledger verifies", async () => {
  const ledger = `${dir}/same.ledger.json`;
  const direct = await connect(SERVER);
  const viaGuard = await connect(
    guard(["--manifest", manifest, "--ledger", ledger]),
  );
  const d = await direct.client.listTools();
  const g = await viaGuard.client.listTools();
  assert.deepEqual(withoutMeta(g.tools), withoutMeta(d.tools));
  for (const t of g.tools) {
    const facts = (t._meta as Record<string, Record<string, unknown>>)[
      "io.verity/verdicts"
    ]!;
    assert.equal(facts.manifest, manifestDigest);
    assert.equal(facts.warning, null);
  }
  for (
    const [name, args] of [
      ["echo", { text: "héllo" }],
      ["add_note", { text: "one" }],
      ["add_note", { text: "two" }],
      ["echo", { text: "lone \ud800 surrogate" }],
    ] as const
  ) {
    assert.deepEqual(
      await viaGuard.client.callTool({ name, arguments: args }),
      await direct.client.callTool({ name, arguments: args }),
    );
  }
  // Calls in flight together each get their own answer.
  const [a, b] = await Promise.all(
    ["a", "b"].map((text) =>
      viaGuard.client.callTool({ name: "echo", arguments: { text } })
    ),
  );
  assert.deepEqual(a?.content, [{ type: "text", text: "echo: a" }]);
  assert.deepEqual(b?.content, [{ type: "text", text: "echo: b" }]);
  await direct.close();
  const head = headOf(await viaGuard.close());

  const v = await runVerity([
    "ledger",
    "verify",
    "--ledger",
    ledger,
    "--expected-head",
    head,
  ]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  assert.match(v.stdout, /"observation":6/);
  const doc = JSON.parse(await Deno.readTextFile(ledger));
  const calls = doc.blocks.filter((x: { type: string }) =>
    x.type === "observation"
  )
    .map((x: { record: Record<string, unknown> }) => x.record);
  assert.deepEqual(calls.map((c: { tool: string }) => c.tool), [
    "echo",
    "add_note",
    "add_note",
    "echo",
    "echo",
    "echo",
  ]);
  assert.deepEqual(calls[0].argument_shape, { text: "string" });
  assert.equal(calls[0].outcome, "ok");
  assert.equal(
    calls[0].privilege.seen,
    true,
    "the deno sandbox's permission log",
  );
  // Declared against observed from real use: the audited contracts, bound and unmoved.
  const val = await runVerity([
    "ledger",
    "validate",
    "--declared",
    manifest,
    "--observed",
    ledger,
    "--out",
    `${dir}/same.evidence.json`,
    "--json",
  ]);
  assert.equal(val.code, 0, val.stderr);
  const report = JSON.parse(val.stdout);
  assert.equal(report.summary.observations, 6);
  assert.deepEqual(report.findings, []);
  assert.equal(report.summary.bound_unmutated, 6);
  // A lone surrogate has no canonical form: recorded as U+FFFD.
  assert.equal(calls[3].args.text, "lone \ufffd surrogate");
  const tampered = (await Deno.readTextFile(ledger)).replace(
    '"text":"one"',
    '"text":"uno"',
  );
  await Deno.writeTextFile(`${dir}/tampered.json`, tampered);
  const t = await runVerity([
    "ledger",
    "verify",
    "--ledger",
    `${dir}/tampered.json`,
    "--expected-head",
    head,
  ]);
  assert.equal(t.code, 1, t.stdout);
});

Deno.test("guard: a tool whose schema and description changed after the audit is left out and refused, naming the drift; the rest still works", async () => {
  const ledger = `${dir}/drift.ledger.json`;
  const s = await connect(
    guard([
      "--manifest",
      manifest,
      "--ledger",
      ledger,
      "--env",
      "GUARD_VARIANT=drift",
    ]),
  );
  const names = (await s.client.listTools()).tools.map((t: { name: string }) =>
    t.name
  );
  assert.deepEqual(names, ["echo", "host", "rug_pull"]);
  await assert.rejects(
    () =>
      s.client.callTool({
        name: "add_note",
        arguments: { text: "x", forward_to: "a@b" },
      }),
    (e: Error & { code?: number }) => {
      assert.equal(e.code, -32050);
      assert.match(
        e.message,
        /refused add_note: contract drifted since the audit: description, inputSchema changed \(recipe 3: audited sha256:[0-9a-f]{64}, listed sha256:[0-9a-f]{64}\)/,
      );
      return true;
    },
  );
  assert.deepEqual(
    (await s.client.callTool({ name: "echo", arguments: { text: "ok" } }))
      .content,
    [{ type: "text", text: "echo: ok" }],
  );
  // A rug pull within the session: the server rewrites echo and says list_changed.
  await s.client.callTool({ name: "rug_pull", arguments: {} });
  await assert.rejects(
    () => s.client.callTool({ name: "echo", arguments: { text: "again" } }),
    /refused echo: contract drifted since the audit: description changed/,
  );
  const stderr = await s.close();
  assert.match(stderr, /left out: add_note: contract drifted/);
  const v = await runVerity([
    "ledger",
    "verify",
    "--ledger",
    ledger,
    "--expected-head",
    headOf(stderr),
  ]);
  assert.equal(v.code, 0, v.stdout);
  const calls = JSON.parse(await Deno.readTextFile(ledger)).blocks
    .filter((b: { type: string }) => b.type === "observation")
    .map((b: { record: { tool: string; outcome: string } }) =>
      `${b.record.tool}:${b.record.outcome}`
    );
  assert.deepEqual(calls, [
    "add_note:refused",
    "echo:ok",
    "rug_pull:ok",
    "echo:refused",
  ]);
});

Deno.test("guard: every page of a paginated listing is checked; policy warn passes drifted and un-audited tools with a warning", async () => {
  const m = `${dir}/mini.json`;
  const c = await runVerity(["capture", "--out", m, "--", ...MINI]);
  assert.equal(c.code, 0, c.stderr);
  const policy = `${dir}/warn.toml`;
  await Deno.writeTextFile(policy, '[guard]\ndrift = "warn"\n');
  for (
    const [args, page2] of [
      [[], []],
      [["--policy", policy], ["add", "export"]],
    ] as const
  ) {
    const s = await connect(guard(
      [
        "--manifest",
        m,
        "--ledger",
        `${dir}/mini.ledger.json`,
        "--env",
        "MINI_VARIANT=b",
        ...args,
      ],
      MINI,
    ));
    const p1 = await s.client.listTools();
    assert.deepEqual(p1.tools.map((t: { name: string }) => t.name), ["search"]);
    assert.equal(p1.nextCursor, "p2");
    const p2 = await s.client.listTools({ cursor: "p2" });
    assert.deepEqual(p2.tools.map((t: { name: string }) => t.name), page2);
    const warnings = p2.tools.map((t: { _meta?: unknown }) =>
      String(
        (t._meta as Record<string, { warning: string }>)["io.verity/verdicts"]!
          .warning,
      )
    );
    if (page2.length > 0) {
      assert.match(
        warnings[0]!,
        /^contract drifted since the audit: inputSchema, annotations, title changed/,
      );
      assert.match(
        warnings[1]!,
        /^not audited: .*mini\.json has no tool "export"/,
      );
    }
    if (page2.length > 0) {
      // A new listing's first page only: a page-2 tool is listed again by
      // the guard itself, then passed (the server's own answer comes back).
      await s.client.listTools();
      await assert.rejects(
        () => s.client.callTool({ name: "export", arguments: {} }),
        (e: Error & { code?: number }) => e.code === -32601,
      );
    }
    const stderr = await s.close();
    assert.match(
      stderr,
      page2.length > 0 ? /passed with a warning: export/ : /left out: export/,
    );
  }
});

Deno.test("guard: a hint the audit refuted is corrected under the policy (a real audit, attested), and left as served without it", async () => {
  const runs = `${dir}/runs`;
  const run = await runVerity([
    "run",
    `${ROOT}fixtures/liar-readonly`,
    "--runs-dir",
    runs,
    "--quiet",
  ]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const report = run.stdout.match(/report: (\S+)/)![1]!;
  assert.equal((await runVerity(["keygen", "--out", `${dir}/k`])).code, 0);
  const envelope = `${report}.intoto.json`;
  const a = await runVerity([
    "attest",
    report,
    "--key",
    `${dir}/k.pem`,
    "--out",
    envelope,
  ]);
  assert.equal(a.code, 0, a.stderr);
  const noFix = `${dir}/nofix.toml`;
  await Deno.writeTextFile(noFix, "[guard]\ncorrect_hints = false\n");
  const server = [
    Deno.execPath(),
    "run",
    `${ROOT}fixtures/liar-readonly/server.ts`,
  ];
  for (
    const [extra, readOnly] of [[[], false], [
      ["--policy", noFix],
      true,
    ]] as const
  ) {
    const s = await connect(guard(
      [
        "--attestation",
        envelope,
        "--key",
        `${dir}/k.pub.pem`,
        "--ledger",
        `${dir}/liar.ledger.json`,
        ...extra,
      ],
      server,
    ));
    const [t] = (await s.client.listTools()).tools;
    assert.equal(t?.name, "get_item");
    assert.equal(t?.annotations?.readOnlyHint, readOnly);
    const facts = (t?._meta as Record<string, Record<string, unknown>>)[
      "io.verity/verdicts"
    ]!;
    const digest = `sha256:${
      [
        ...new Uint8Array(
          await crypto.subtle.digest("SHA-256", await Deno.readFile(report)),
        ),
      ]
        .map((b) => b.toString(16).padStart(2, "0")).join("")
    }`;
    assert.equal(facts.report, digest);
    assert.deepEqual(
      (facts.verdicts as { test: string; outcome: string }[]).find((v) =>
        v.test === "read_only"
      ),
      {
        test: "read_only",
        hint: "readOnlyHint",
        declared: "TRUE",
        outcome: "VIOLATION",
        variant: null,
      },
    );
    assert.deepEqual(
      facts.corrected,
      readOnly ? [] : [{ hint: "readOnlyHint", declared: true, now: false }],
    );
    await s.close();
  }
  // Another key, or a report that is not the attested one: exit 2, one line.
  assert.equal((await runVerity(["keygen", "--out", `${dir}/other`])).code, 0);
  const wrongKey = await runVerity([
    "guard",
    "--attestation",
    envelope,
    "--key",
    `${dir}/other.pub.pem`,
    "--ledger",
    `${dir}/x.json`,
    "--",
    ...server,
  ]);
  assert.equal(wrongKey.code, 2);
  assert.match(
    wrongKey.stderr,
    /refused: signature: no signature verifies with key sha256:/,
  );
  assert.equal(wrongKey.stderr.trim().split("\n").length, 1);
  const notSubject = await runVerity([
    "guard",
    "--attestation",
    envelope,
    "--key",
    `${dir}/k.pub.pem`,
    "--report",
    manifest,
    "--ledger",
    `${dir}/x.json`,
    "--",
    ...server,
  ]);
  assert.equal(notSubject.code, 2);
  assert.match(notSubject.stderr, /not the attested subject/);
});

Deno.test("guard: bad input is one line and exit 2; a server that dies ends the guard with its exit status", async () => {
  const bad = `${dir}/bad.toml`;
  for (
    const [text, msg] of [
      [
        '[guard]\ndrift = "allow"\n',
        /bad\.toml: guard\.drift: expected "refuse" or "warn", got "allow"/,
      ],
      [
        "[guard]\nretry = 3\n",
        /bad\.toml: guard\.retry: unknown key \(allowed here: drift, correct_hints\)/,
      ],
      ["[guard\n", /bad\.toml: invalid TOML at line 1/],
    ] as const
  ) {
    await Deno.writeTextFile(bad, text);
    const r = await runVerity([
      "guard",
      "--manifest",
      manifest,
      "--policy",
      bad,
      "--ledger",
      `${dir}/b.json`,
      "--",
      ...SERVER,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, msg);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  const noLedger = await runVerity([
    "guard",
    "--manifest",
    manifest,
    "--",
    ...SERVER,
  ]);
  assert.equal(noLedger.code, 2);
  assert.match(noLedger.stderr, /--ledger FILE is required/);
  const notLedger = `${dir}/not-a-ledger.json`;
  await Deno.writeTextFile(notLedger, "{}");
  const r = await runVerity([
    "guard",
    "--manifest",
    manifest,
    "--ledger",
    notLedger,
    "--",
    ...SERVER,
  ]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /not a verity ledger/);
  // The server exits 7 at once: the guard ends with 7 and still prints its head.
  const dies = await runVerity([
    "guard",
    "--manifest",
    manifest,
    "--ledger",
    `${dir}/dies.json`,
    "--no-sandbox",
    "--",
    "sh",
    "-c",
    "exit 7",
  ]);
  assert.equal(dies.code, 7, dies.stderr);
  assert.match(dies.stderr, /head sha256:/);
  const missing = await runVerity([
    "guard",
    "--manifest",
    manifest,
    "--ledger",
    `${dir}/m.json`,
    "--no-sandbox",
    "--",
    `${dir}/no-such-server`,
  ]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(
    missing.stderr,
    /^verity guard: cannot start ".*no-such-server": no such executable$/m,
  );
  // A client line over 16 MiB ends the session: exit 1, the server stopped, the head printed.
  const p = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}main.ts`,
      "guard",
      "--manifest",
      manifest,
      "--ledger",
      `${dir}/big.json`,
      "--",
      ...SERVER,
    ],
    stdin: "piped",
    stderr: "piped",
    stdout: "null",
  }).spawn();
  const w = p.stdin.getWriter();
  const mib = new Uint8Array(1024 * 1024).fill(0x61);
  for (let i = 0; i < 17; i++) await w.write(mib).catch(() => {});
  const out = await p.output();
  const err = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, err);
  assert.match(
    err,
    /the client sent a line longer than 16777216 bytes; ending the session/,
  );
  assert.match(err, /head sha256:/);
  await w.close().catch(() => {});
});

Deno.test("init --from-config --wrap: the entry starts through the guard, its command kept after --, the file as it was beside it", async () => {
  const config = `${dir}/claude_desktop_config.json`;
  const original = JSON.stringify({
    mcpServers: {
      notes: {
        command: SERVER[0],
        args: SERVER.slice(1),
        env: { TOKEN: "t" },
      },
      other: { command: "x" },
    },
  });
  await Deno.writeTextFile(config, original);
  const w = await runVerity([
    "init",
    "--from-config",
    config,
    "--server",
    "notes",
    "--wrap",
    "--manifest",
    manifest,
    "--ledger",
    "notes.ledger.json",
  ], { cwd: dir });
  assert.equal(w.code, 0, w.stderr);
  const doc = JSON.parse(await Deno.readTextFile(config));
  const e = doc.mcpServers.notes;
  const args: string[] = e.args;
  const dd = args.indexOf("--");
  assert.deepEqual(args.slice(dd + 1), SERVER);
  assert.deepEqual(args.slice(args.indexOf("guard") + 1, dd), [
    "--manifest",
    manifest,
    "--ledger",
    `${dir}/notes.ledger.json`,
    "--pass-env",
    "TOKEN",
  ]);
  assert.deepEqual(e.env, { TOKEN: "t" });
  assert.deepEqual(doc.mcpServers.other, { command: "x" });
  assert.equal(await Deno.readTextFile(`${config}.before-guard`), original);
  // The entry as a client starts it: the guard, then the server.
  const s = await connect([e.command, ...args]);
  assert.equal((await s.client.listTools()).tools.length, 4);
  assert.match(await s.close(), /head sha256:/);
  const again = await runVerity([
    "init",
    "--from-config",
    config,
    "--server",
    "notes",
    "--wrap",
    "--manifest",
    manifest,
    "--ledger",
    "l.json",
  ]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already runs through verity guard/);
});

Deno.test("guard, as a raw client speaks to it: one id twice in flight, bad ids, batches and garbage answered; SIGTERM stops the server, finishes the ledger and prints the head, exit 143", async () => {
  const ledger = `${dir}/term.json`;
  const p = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}main.ts`,
      "guard",
      "--manifest",
      manifest,
      "--ledger",
      ledger,
      "--",
      ...SERVER,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = p.stdin.getWriter();
  const lines = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    ...["a", "b"].map((text) => ({
      jsonrpc: "2.0",
      id: "x",
      method: "tools/call",
      params: { name: "echo", arguments: { text } },
    })),
    { jsonrpc: "2.0", id: { no: 1 }, method: "tools/list" },
    { jsonrpc: "2.0", method: "tools/call", params: { name: "echo" } },
  ];
  await w.write(
    new TextEncoder().encode(
      lines.map((l) => JSON.stringify(l)).join("\n") +
        '\n[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]\ngarbage\n',
    ),
  );
  const reader = p.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  // A missing answer fails the test within 20 s, rather than hanging it.
  const deadline = setTimeout(() => p.kill("SIGKILL"), 20_000);
  while (seen.split("\n").length < 7) {
    const r = await reader.read();
    if (r.done) break;
    seen += r.value;
  }
  clearTimeout(deadline);
  const answers = seen.trim().split("\n").map((l) => JSON.parse(l));
  const echoes = answers.filter((a) => a.id === "x")
    .map((a) => a.result.content[0].text).sort();
  assert.deepEqual(echoes, ["echo: a", "echo: b"]);
  const errors = answers.filter((a) => a.error).map((a) =>
    `${a.id} ${a.error.code}`
  ).sort();
  assert.deepEqual(errors, ["null -32600", "null -32700", "null -32700"]);
  p.kill("SIGTERM");
  const status = await p.status;
  reader.releaseLock();
  await p.stdout.cancel().catch(() => {});
  const err = new TextDecoder().decode(
    new Uint8Array(await new Response(p.stderr).arrayBuffer()),
  );
  assert.equal(status.code, 143, err);
  const v = await runVerity([
    "ledger",
    "verify",
    "--ledger",
    ledger,
    "--expected-head",
    headOf(err),
  ]);
  assert.equal(v.code, 0, v.stdout);
  assert.match(v.stdout, /"observation":2/);
  assert.match(err, /dropped from the client: tools\/call without an id/);
  await w.close().catch(() => {});
});

Deno.test("guard --definition: the definition's sandbox allowances, and nothing more without it", async () => {
  for (
    const [extra, ok] of [[[], false], [[
      "--definition",
      `${ROOT}tests/data/guard`,
    ], true]] as const
  ) {
    const s = await connect(
      guard(["--manifest", manifest, "--ledger", `${dir}/def.json`, ...extra]),
    );
    const r = await s.client.callTool({ name: "host", arguments: {} });
    assert.equal(r.isError === true, !ok, JSON.stringify(r));
    if (ok) {
      assert.deepEqual(r.content, [{ type: "text", text: Deno.hostname() }]);
    } else {assert.match(
        JSON.stringify(r.content),
        /Requires sys access to \\+"hostname/,
      );}
    await s.close();
  }
});
