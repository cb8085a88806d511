/**
 * The database relay under bubblewrap (`listen = "tcp"`): a server in its
 * own network namespace reaches 127.0.0.1:<the database's port> through the
 * relay, and nothing else: not another loopback port of the host, not the
 * host's other addresses. A control run without a sandbox shows each probe
 * does get out when nothing stops it, so the contained run is not vacuous.
 * The relay stops with the session (no survivor, gate removed), and a relay
 * that dies ends the session with a named reason instead of leaving the
 * server without its database.
 *
 * An HTTP server gets both relays: verity reaches it through one, it reaches
 * its database through the other.
 *
 * The end-to-end case with a real PostgreSQL cluster is the fixture
 * `pg-tcp-bubblewrap` (tests/ground_truth_test.ts).
 */
import assert from "node:assert/strict";
import {
  prepareLaunch,
  probeBackends,
  resolveDeno,
} from "../lib/sandbox/sandbox.ts";
import type { SandboxBackend } from "../lib/sandbox/types.ts";
import { openSession } from "../lib/wire/session.ts";
import { freeLoopbackPort, startLocalHttp } from "../lib/wire/local_http.ts";

const HERE = new URL("./netns/", import.meta.url).pathname.replace(/\/$/, "");
const deno = resolveDeno();
const probe = await probeBackends();
const dec = new TextDecoder();

/** A TCP or Unix listener that greets every connection with `hello` and counts them. */
function greeter(
  opts: Deno.ListenOptions | Deno.UnixListenOptions & { transport: "unix" },
  hello: string,
): { listener: Deno.Listener; count: () => number; done: Promise<void> } {
  const listener = Deno.listen(opts as Deno.TcpListenOptions);
  let n = 0;
  const done = (async () => {
    for await (const c of listener) {
      n++;
      c.write(new TextEncoder().encode(`${hello}\n`)).catch(() => {})
        .finally(() => setTimeout(() => c.close(), 200));
    }
  })().catch(() => {});
  return { listener, count: () => n, done };
}

/** An IPv4 address of this host that is not loopback, or null. */
function hostAddress(): string | null {
  for (const i of Deno.networkInterfaces()) {
    if (i.family === "IPv4" && !i.address.startsWith("127.")) return i.address;
  }
  return null;
}

/** Command lines of processes that mention `marker` (after up to 2 s of tear-down). */
async function survivors(marker: string): Promise<string[]> {
  let left: string[] = [];
  for (let i = 0; i < 20; i++) {
    const out = await new Deno.Command("pgrep", {
      args: ["-af", marker],
      stdout: "piped",
    }).output();
    left = dec.decode(out.stdout).split("\n").filter((l) =>
      l.trim() && !l.includes("pgrep")
    );
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
  return left;
}

interface Dialled {
  /** What the server read from each target, in order. */
  report: string[];
  db: number;
  otherPort: number;
  outside: number;
  /** Processes naming this session's gate after the session closed. */
  left: string[];
  gateLeft: boolean;
}

/**
 * Start dial.ts under `backend` with the database port granted, and ask it
 * to dial: the database port, another loopback port of the host, and the
 * host's non-loopback address.
 */
async function dialFrom(backend: SandboxBackend): Promise<Dialled> {
  const root = await Deno.makeTempDir({ prefix: "verity-port-relay-" });
  const state = `${root}/state`;
  await Deno.mkdir(state);
  const sock = `${root}/db.sock`;
  const db = greeter({ transport: "unix", path: sock }, "database");
  // The database's port is busy on the host too (as the cluster's is): the
  // sandboxed server must reach the relay, never the host's loopback.
  const port = freeLoopbackPort();
  const hostSide = greeter({ hostname: "127.0.0.1", port }, "host-loopback");
  const other = greeter({ hostname: "127.0.0.1", port: 0 }, "other-port");
  const addr = hostAddress();
  assert.ok(addr, "this host has a non-loopback IPv4 address to probe");
  const outside = greeter({ hostname: "0.0.0.0", port: 0 }, "outside");
  try {
    const launch = prepareLaunch({
      command: [deno, "run", "dial.ts"],
      env: {},
      stateDir: state,
      definitionDir: HERE,
      readPaths: [],
      backend,
      evidenceDir: `${root}/evidence`,
      label: "dial",
      connect: [{ port, socket: sock }],
    });
    const gate = `${root}/evidence/dial.gate`;
    const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
    assert.equal(
      s.failure,
      null,
      `session opening failed: ${s.failure?.message}\n${s.client.stderr().text}`,
    );
    const r = await s.client.request("tools/call", {
      name: "dial",
      arguments: {
        targets: [
          { host: "127.0.0.1", port },
          {
            host: "127.0.0.1",
            port: (other.listener.addr as Deno.NetAddr).port,
          },
          { host: addr, port: (outside.listener.addr as Deno.NetAddr).port },
        ],
      },
    }, 30_000);
    await s.client.close();
    assert.equal(r.status, "ok", JSON.stringify(r));
    const text =
      (r as { result: { content: { text: string }[] } }).result.content[0]!
        .text;
    await new Promise((res) => setTimeout(res, 300));
    let gateLeft = true;
    try {
      Deno.statSync(gate);
    } catch {
      gateLeft = false;
    }
    return {
      report: JSON.parse(text),
      db: db.count() + hostSide.count() * 1000,
      otherPort: other.count(),
      outside: outside.count(),
      left: await survivors(gate),
      gateLeft,
    };
  } finally {
    for (const g of [db, hostSide, other, outside]) g.listener.close();
    await Promise.all([db, hostSide, other, outside].map((g) => g.done));
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

Deno.test("database relay control: without a sandbox every probe gets out (host loopback, another port, the host's address)", async () => {
  const o = await dialFrom("none");
  const why = JSON.stringify(o.report);
  assert.deepEqual(o.report, [
    "ok: host-loopback",
    "ok: other-port",
    "ok: outside",
  ], why);
  assert.equal(o.otherPort, 1, why);
  assert.equal(o.outside, 1, why);
});

Deno.test({
  name:
    "database relay: under bubblewrap the server reaches the database's port through the relay and nothing else; the relay ends with the session",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    assert.ok(
      probe.bubblewrap,
      `bubblewrap is unavailable here: ${probe.reason}`,
    );
    const o = await dialFrom("bubblewrap");
    const why = JSON.stringify(o.report);
    assert.equal(o.report[0], "ok: database", why);
    // One connection reached the database socket, none the host's loopback.
    assert.equal(o.db, 1, why);
    assert.match(o.report[1]!, /^error: /, why);
    assert.match(o.report[2]!, /^error: /, why);
    assert.equal(o.otherPort, 0, `another loopback port was reached. ${why}`);
    assert.equal(o.outside, 0, `the host's address was reached. ${why}`);
    assert.deepEqual(o.left, [], "the relay outlived its session");
    assert.equal(o.gateLeft, false, "the gate was removed");
  },
});

Deno.test({
  name:
    "database relay: a relay that dies ends the session with its reason, and nothing is left",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    assert.ok(
      probe.bubblewrap,
      `bubblewrap is unavailable here: ${probe.reason}`,
    );
    const root = await Deno.makeTempDir({ prefix: "verity-port-relay-" });
    try {
      await Deno.mkdir(`${root}/state`);
      const sock = `${root}/db.sock`;
      const db = greeter({ transport: "unix", path: sock }, "database");
      const launch = prepareLaunch({
        command: [deno, "run", "dial.ts"],
        env: {},
        stateDir: `${root}/state`,
        definitionDir: HERE,
        readPaths: [],
        backend: "bubblewrap",
        evidenceDir: `${root}/evidence`,
        label: "dial",
        connect: [{ port: freeLoopbackPort(), socket: sock }],
      });
      const gate = `${root}/evidence/dial.gate`;
      const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
      assert.equal(s.failure, null, s.failure?.message);
      const out = await new Deno.Command("pgrep", {
        args: ["-f", `relay_in.ts --out ${gate}`],
        stdout: "piped",
      }).output();
      const pids = dec.decode(out.stdout).trim().split("\n").filter((x) => x)
        .map(Number);
      assert.ok(pids.length > 0, "the relay is running during the session");
      for (const p of pids) Deno.kill(p, "SIGKILL");
      // The session ends as soon as verity sees the relay's exit.
      for (let i = 0; i < 100 && s.client.failure === null; i++) {
        await new Promise((res) => setTimeout(res, 50));
      }
      const r = await s.client.request("tools/list", {}, 10_000);
      assert.equal(r.status, "unknown", JSON.stringify(r));
      assert.match(
        s.client.failure?.message ?? "",
        /the relay to the database inside the server's network namespace exited \(signal SIGKILL\)/,
      );
      await s.client.close();
      assert.deepEqual(await survivors(gate), []);
      db.listener.close();
      await db.done;
    } finally {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "database relay: an HTTP server under bubblewrap is reached through one relay and reaches its database through the other",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    assert.ok(
      probe.bubblewrap,
      `bubblewrap is unavailable here: ${probe.reason}`,
    );
    const root = await Deno.makeTempDir({ prefix: "verity-port-relay-" });
    const sock = `${root}/db.sock`;
    const db = greeter({ transport: "unix", path: sock }, "database");
    try {
      await Deno.mkdir(`${root}/state`);
      const port = freeLoopbackPort();
      const httpPort = freeLoopbackPort();
      const evidence = `${root}/evidence`;
      const launch = prepareLaunch({
        command: [deno, "run", "dial_http.ts", "--port", String(httpPort)],
        env: {},
        stateDir: `${root}/state`,
        definitionDir: HERE,
        readPaths: [],
        backend: "bubblewrap",
        evidenceDir: evidence,
        label: "dialhttp",
        listen: httpPort,
        connect: [{ port, socket: sock }],
      });
      const client = await startLocalHttp(
        launch.spawn,
        `http://127.0.0.1:${httpPort}/mcp`,
        httpPort,
        30_000,
        { relayDir: evidence },
      );
      const s = await openSession(client, { timeoutMs: 30_000 });
      assert.equal(s.failure, null, s.failure?.message);
      const r = await s.client.request("tools/call", {
        name: "dial",
        arguments: { targets: [{ host: "127.0.0.1", port }] },
      }, 30_000);
      await s.client.close();
      assert.equal(r.status, "ok", JSON.stringify(r));
      const text =
        (r as { result: { content: { text: string }[] } }).result.content[0]!
          .text;
      assert.deepEqual(JSON.parse(text), ["ok: database"]);
      assert.equal(db.count(), 1);
      assert.deepEqual(await survivors(`${evidence}/dialhttp.gate`), []);
      assert.deepEqual(await survivors(`relay-${httpPort}.sock`), []);
    } finally {
      db.listener.close();
      await db.done;
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
