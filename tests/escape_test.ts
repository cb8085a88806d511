/**
 * The escape suite: hostile servers try, during a tool call, to connect to a
 * loopback listener this test opens (TCP and UDP), resolve a host name,
 * write to the auditor's home, /tmp and their own directory, read a canary
 * secret this test puts in its own environment, and start subprocesses.
 *
 * Under every sandbox backend: the listeners see nothing, no file appears
 * outside the state directory, the canary never reaches the server, no
 * subprocess runs, and every attempt the backend can see is in its evidence.
 * A control run without a sandbox shows each probe does get out when
 * nothing stops it, so a pass here is not vacuous.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import {
  collectEvidence,
  prepareLaunch,
  probeBackends,
  resolveDeno,
  resolvePython,
  type SandboxEvidence,
} from "../lib/sandbox/sandbox.ts";
import type { SandboxBackend } from "../lib/sandbox/types.ts";
import { openSession } from "../lib/wire/session.ts";

const HERE = new URL("./escape/", import.meta.url).pathname.replace(/\/$/, "");
const CANARY_NAME = "VERITY_ESCAPE_CANARY";
const CANARY = `canary-${crypto.randomUUID()}`;
// The secret lives in the harness's own environment, as an API key would.
Deno.env.set(CANARY_NAME, CANARY);
const HOME = Deno.env.get("HOME") ?? "/root";

/** The DENO_DIR the deno backend hands servers by default (as the sandbox picks it). */
function defaultDenoDirForTest(): string {
  const d = Deno.env.get("DENO_DIR");
  if (d) return d;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  return xdg ? `${xdg}/deno` : `${HOME}/.cache/deno`;
}

interface Outcome {
  /** What the server said happened to each attempt. */
  report: Record<string, string>;
  stderr: string;
  tcpConnections: number;
  udpDatagrams: number;
  /** Files the server was asked to write outside its state directory that exist now. */
  escapedFiles: string[];
  /** Subprocess markers found in the state directory. */
  spawned: string[];
  /** Where the canary value turned up (response, stderr, state files). */
  canarySeen: string[];
  evidence: SandboxEvidence;
  files: string[];
}

/** Every regular file under `dir`, as paths relative to it. */
function listFiles(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...listFiles(`${dir}/${e.name}`, rel));
    else out.push(rel);
  }
  return out;
}

async function runHostile(
  backend: SandboxBackend,
  command: string[],
  env: Record<string, string> = {},
  imports: string[] = [],
): Promise<Outcome> {
  const root = await Deno.makeTempDir({ prefix: "verity-escape-" });
  const stateDir = `${root}/state`;
  await Deno.mkdir(stateDir);
  const nonce = crypto.randomUUID().slice(0, 8);
  const files = [
    `${HOME}/verity-escape-${nonce}`,
    `/tmp/verity-escape-${nonce}`,
    `${HERE}/verity-escape-${nonce}`,
  ];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let tcpConnections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      tcpConnections++;
      conn.close();
    }
  })().catch(() => {});
  const udp = dgram.createSocket("udp4");
  let udpDatagrams = 0;
  udp.on("message", () => udpDatagrams++);
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", () => r()));
  const udpPort = (udp.address() as { port: number }).port;
  try {
    const launch = prepareLaunch({
      command,
      env,
      stateDir,
      definitionDir: HERE,
      readPaths: [],
      backend,
      evidenceDir: `${root}/evidence`,
      label: "hostile",
    });
    const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
    assert.equal(
      s.failure,
      null,
      `session opening failed: ${s.failure?.message}\n${s.client.stderr().text}`,
    );
    const r = await s.client.request("tools/call", {
      name: "escape",
      arguments: {
        port: (listener.addr as Deno.NetAddr).port,
        udpPort,
        host: `verity-escape-${nonce}.example.com`,
        files,
        canaryName: CANARY_NAME,
        imports,
      },
    }, 60_000);
    await s.client.close();
    assert.equal(r.status, "ok", `tools/call failed: ${JSON.stringify(r)}`);
    const result = (r as { result: { content: { text: string }[] } }).result;
    const text = result.content[0]!.text;
    // Connections the server made before answering are queued in the kernel;
    // give the accept loop a moment to count them.
    await new Promise((res) => setTimeout(res, 300));
    const stderr = s.client.stderr().text;
    const stateFiles = listFiles(stateDir);
    const canarySeen: string[] = [];
    if (text.includes(CANARY)) canarySeen.push("tool response");
    if (stderr.includes(CANARY)) canarySeen.push("stderr");
    for (const f of stateFiles) {
      if (Deno.readTextFileSync(`${stateDir}/${f}`).includes(CANARY)) {
        canarySeen.push(`state file ${f}`);
      }
    }
    const escapedFiles = files.filter((f) => {
      try {
        Deno.statSync(f);
        return true;
      } catch {
        return false;
      }
    });
    return {
      report: JSON.parse(text),
      stderr,
      tcpConnections,
      udpDatagrams,
      escapedFiles,
      spawned: stateFiles.filter((f) => f.startsWith("spawned")),
      canarySeen,
      evidence: await collectEvidence(launch),
      files,
    };
  } finally {
    listener.close();
    await accepting;
    udp.close();
    for (const f of files) await Deno.remove(f).catch(() => {});
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

function assertContained(o: Outcome, label: string): void {
  if (Deno.env.get("VERITY_ESCAPE_DEBUG")) {
    console.error(
      label,
      JSON.stringify(o.report, null, 1),
      o.evidence.attempts,
    );
  }
  const why = `${label}: ${JSON.stringify(o.report, null, 1)}`;
  assert.equal(o.tcpConnections, 0, `TCP listener saw a connection. ${why}`);
  assert.equal(o.udpDatagrams, 0, `UDP listener saw a datagram. ${why}`);
  assert.deepEqual(
    o.escapedFiles,
    [],
    `files appeared outside the state directory. ${why}`,
  );
  assert.deepEqual(o.canarySeen, [], `the canary reached the server. ${why}`);
  assert.deepEqual(o.spawned, [], `a subprocess ran. ${why}`);
}

function attempted(
  ev: SandboxEvidence,
  permission: string,
  value: string,
): boolean {
  return (ev.attempts ?? []).some((a) =>
    a.permission === permission && a.value === value && !a.granted
  );
}

const python = await resolvePython();
const deno = resolveDeno();
const probe = await probeBackends();

Deno.test("escape control: with no sandbox, every probe of the hostile servers gets out", async () => {
  for (
    const [name, command] of [
      ["deno", [deno, "run", "hostile.ts"]],
      ["python", [python, "hostile.py"]],
    ] as const
  ) {
    // The canary is declared here, so the unsandboxed server is meant to see it.
    const o = await runHostile("none", [...command], { [CANARY_NAME]: CANARY });
    const why = `${name}: ${JSON.stringify(o.report, null, 1)}`;
    assert.ok(o.tcpConnections >= 1, `no TCP connection. ${why}`);
    assert.ok(o.udpDatagrams >= 1, `no UDP datagram. ${why}`);
    assert.deepEqual(o.escapedFiles.sort(), [...o.files].sort(), why);
    assert.ok(o.canarySeen.includes("tool response"), why);
    assert.ok(
      o.spawned.length >= 2,
      `subprocess markers: ${o.spawned.join(", ")}. ${why}`,
    );
    assert.equal(o.evidence.backend, "none");
    assert.equal(
      o.evidence.attempts,
      null,
      "the none backend sees no attempts",
    );
  }
});

Deno.test("escape: the environment is scrubbed even without a sandbox", async () => {
  const o = await runHostile("none", [deno, "run", "hostile.ts"]);
  assert.deepEqual(o.canarySeen, [], JSON.stringify(o.report));
  assert.match(o.report.canaryByName ?? "", /^ok(: undefined)?$/);
  const env = JSON.parse(o.report.envAll!.replace(/^ok: /, "")) as Record<
    string,
    string
  >;
  assert.deepEqual(
    Object.keys(env).sort(),
    [
      "DENO_DIR",
      "DENO_NO_UPDATE_CHECK",
      "HOME",
      "NO_COLOR",
      "PATH",
      "VERITY_STATE_DIR",
    ],
  );
  assert.ok(
    env.HOME!.endsWith("/state"),
    `HOME is inside the state directory: ${env.HOME}`,
  );
});

Deno.test("escape: deno backend contains hostile.ts and records every attempt it can see", async () => {
  const o = await runHostile("deno", [deno, "run", "hostile.ts"]);
  assertContained(o, "deno backend");
  const ev = o.evidence;
  assert.equal(ev.backend, "deno");
  assert.ok(
    ev.command.includes("--deny-net") && ev.command.includes("--deny-run"),
  );
  assert.ok(ev.attempts !== null, `no audit log: ${ev.problems.join("; ")}`);
  const port = o.report.tcp; // the server saw a refusal, not a connection
  assert.match(port!, /NotCapable/);
  const seen = ev.attempts!.map((a) => `${a.permission} ${a.value}`).join("\n");
  const tcp = ev.attempts!.find((a) =>
    a.permission === "net" && /^127\.0\.0\.1:\d+$/.test(a.value ?? "")
  );
  assert.ok(tcp, `TCP attempt missing:\n${seen}`);
  for (const f of o.files) {
    assert.ok(attempted(ev, "write", f), `write ${f} missing:\n${seen}`);
  }
  assert.ok(
    attempted(ev, "env", CANARY_NAME),
    `env ${CANARY_NAME} missing:\n${seen}`,
  );
  assert.ok(
    ev.attempts!.some((a) =>
      a.permission === "read" && /^\/proc\/\d+\/environ$/.test(a.value ?? "")
    ),
    `reading another process's environment missing:\n${seen}`,
  );
  assert.ok(
    ev.attempts!.some((a) =>
      a.permission === "net" && (a.value ?? "").startsWith("verity-escape-")
    ),
    `host name resolution missing:\n${seen}`,
  );
  // Deno does not log run checks: the subprocess attempts are refused but unseen.
  assert.match(o.report.spawnCommand!, /NotCapable: Requires run access/);
  assert.ok(!ev.observes.includes("run"));
});

Deno.test("escape: deno backend: import() reaches nothing outside the server's files, and the auditor's DENO_DIR is not written", async () => {
  const nonce = crypto.randomUUID().slice(0, 8);
  const secret = `verity-secret-${nonce}`;
  // A root-only file in the auditor's home and a world-readable one beside
  // the definition directory (outside it).
  const rootOnly = `${HOME}/verity-escape-secret-${nonce}.json`;
  const beside =
    new URL(`./verity-escape-beside-${nonce}.json`, import.meta.url)
      .pathname;
  Deno.writeTextFileSync(rootOnly, JSON.stringify({ secret }), { mode: 0o600 });
  Deno.chmodSync(rootOnly, 0o600);
  Deno.writeTextFileSync(beside, JSON.stringify({ secret }), { mode: 0o644 });
  const denoDir = defaultDenoDirForTest();
  try {
    const o = await runHostile("deno", [deno, "run", "hostile.ts"], {}, [
      rootOnly,
      beside,
    ]);
    assertContained(o, "deno backend");
    for (
      const k of ["importJson0", "importJson1", "importCode0", "importCode1"]
    ) {
      assert.match(o.report[k]!, /^error: /, `${k}: ${o.report[k]}`);
    }
    const all = JSON.stringify(o.report) + o.stderr;
    assert.ok(!all.includes(secret), `the secret leaked: ${all.slice(0, 500)}`);
    // Nothing of the imported files was cached into the auditor's DENO_DIR.
    for (const f of [rootOnly, beside]) {
      const dir = `${denoDir}/gen/file${f.replace(/\/[^/]*$/, "")}`;
      let names: string[] = [];
      try {
        names = [...Deno.readDirSync(dir)].map((e) => e.name);
      } catch {
        // no such directory: nothing cached
      }
      const base = f.replace(/^.*\//, "");
      assert.deepEqual(names.filter((n) => n.startsWith(base)), []);
    }
    // The server itself ran as an unprivileged uid when verity is root.
    if (Deno.uid() === 0) {
      assert.ok(o.evidence.command.includes("--reuid=65534"));
    }
  } finally {
    Deno.removeSync(rootOnly);
    Deno.removeSync(beside);
  }
});

Deno.test(
  "escape: bubblewrap as root: the server runs as an unprivileged uid and cannot read a root-only file",
  {
    ignore: Deno.uid() !== 0,
  },
  async () => {
    assert.ok(
      probe.bubblewrap,
      `bubblewrap is unavailable here: ${probe.reason}`,
    );
    const secret = `verity-secret-${crypto.randomUUID().slice(0, 8)}`;
    const rootOnly = `/etc/verity-escape-${
      crypto.randomUUID().slice(0, 8)
    }.json`;
    Deno.writeTextFileSync(rootOnly, JSON.stringify({ secret }), {
      mode: 0o600,
    });
    Deno.chmodSync(rootOnly, 0o600);
    try {
      // Deno with all permissions inside bubblewrap: only the OS stands between.
      const o = await runHostile(
        "bubblewrap",
        [deno, "run", "hostile.ts"],
        {},
        [
          rootOnly,
        ],
      );
      assertContained(o, "bubblewrap backend");
      assert.match(
        o.report.importJson0!,
        /^error: [^]*Permission denied/,
      );
      assert.ok(!(JSON.stringify(o.report) + o.stderr).includes(secret));
    } finally {
      Deno.removeSync(rootOnly);
    }
  },
);

Deno.test("escape: bubblewrap contains hostile.py (it sees no attempts, and says so)", async () => {
  assert.ok(
    probe.bubblewrap,
    `bubblewrap is unavailable here: ${probe.reason}`,
  );
  const o = await runHostile("bubblewrap", [python, "hostile.py"]);
  assertContained(o, "bubblewrap/python");
  assert.equal(o.evidence.backend, "bubblewrap");
  assert.deepEqual(o.evidence.observes, []);
  assert.equal(o.evidence.attempts, null);
  // What the server itself saw: refused connections, a read-only or hidden
  // file system, and no way to create a process.
  assert.match(o.report.tcp!, /ConnectionRefused|Network is unreachable/);
  assert.match(o.report.subprocess!, /PermissionError|Operation not permitted/);
  assert.match(o.report.fork!, /PermissionError|Operation not permitted/);
  assert.match(
    o.report.posix_spawn!,
    /PermissionError|Operation not permitted/,
  );
  assert.match(
    o.report.system!,
    /^ok: -1$|^ok: [1-9]/,
    "os.system reports failure",
  );
});

Deno.test("escape: bubblewrap contains hostile.ts too (any command, Deno with all permissions inside)", async () => {
  assert.ok(
    probe.bubblewrap,
    `bubblewrap is unavailable here: ${probe.reason}`,
  );
  const o = await runHostile("bubblewrap", [deno, "run", "hostile.ts"]);
  assertContained(o, "bubblewrap/deno");
  assert.match(
    o.report.spawnCommand!,
    /Operation not permitted|PermissionDenied|os error 1/,
  );
});
