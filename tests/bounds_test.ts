/**
 * Hostile servers against verity's bounds: memory (a session byte budget,
 * unsolicited frames counted not kept), time (a listing deadline on top of
 * the per-answer timeout), depth (values bounded before they are stored),
 * and orphans (no server process survives verity, even a SIGKILLed one).
 *
 * verity runs with a 256 MB V8 heap: a harness that kept what a flood
 * sends would die of out-of-memory here instead of ending the session.
 */
import assert from "node:assert/strict";
import { runVerity } from "./_verity.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const SERVER = new URL("./hostile/server.ts", import.meta.url).pathname;
const HERE = new URL("./hostile/", import.meta.url).pathname;
const dec = new TextDecoder();

async function verity(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  return await runVerity(args, {
    denoFlags: ["--v8-flags=--max-old-space-size=256"],
  });
}

/**
 * Processes still matching `marker`. The sandbox's tear-down is a kernel
 * cascade (bubblewrap's --die-with-parent, the PID namespace's init): a
 * process already sent SIGKILL may still be listed for a few milliseconds
 * after verity exits, so look again for up to 2 s before calling it a
 * survivor. A real survivor (a setsid() grandchild) stays listed.
 */
async function survivors(marker: string): Promise<string[]> {
  let left: string[] = [];
  for (let i = 0; i < 20; i++) {
    const out = await new Deno.Command("pgrep", {
      args: ["-af", marker],
      stdout: "piped",
    }).output();
    left = dec.decode(out.stdout).split("\n").filter((l) =>
      l.trim() && !l.includes("pgrep") && !l.includes("main.ts")
    );
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
  return left;
}

const tools = (mode: string, rest: string[] = [], json = false) => [
  "tools",
  ...(json ? ["--json"] : []),
  "--timeout",
  "5",
  "--",
  Deno.execPath(),
  "run",
  SERVER,
  mode,
  ...rest,
];

Deno.test("bounds: a notification flood ends the session on the byte budget, not in an out-of-memory crash", async () => {
  const r = await verity(tools("flood"));
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /server sent more than 67108864 bytes/);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.deepEqual(await survivors(`${SERVER} flood`), []);
});

Deno.test("bounds: endless 15 MB tools/list pages end on the byte budget", async () => {
  // A 30 s listing deadline: on a loaded machine five 15 MB pages can take
  // longer than 5 s, and this case is about the byte budget.
  const r = await verity(
    tools("pages", ["15"]).map((a, i) => i === 2 ? "30" : a),
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /server sent more than 67108864 bytes/);
  assert.deepEqual(await survivors(`${SERVER} pages`), []);
});

Deno.test("bounds: pages dripped inside the per-answer timeout end at the listing deadline", async () => {
  const r = await verity(tools("drip", ["400"]));
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /tools\/list did not finish within 5\.0 s \(\d+ page\(s\) received\)/,
  );
  // Listing deadline (5 s) + opening + deno start-up, not 1000 pages.
  assert.ok(r.ms < 20_000, `took ${r.ms.toFixed(0)} ms`);
  assert.deepEqual(await survivors(`${SERVER} drip`), []);
});

Deno.test("bounds: a 100,000-level serverInfo and hint are refused by depth, not by a stack overflow", async () => {
  const r = await verity(tools("deep", [], true));
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.tools, []);
  assert.match(out.problems.join("\n"), /nesting deeper than 256 levels/);
  assert.doesNotMatch(r.stderr, /Maximum call stack/);
});

Deno.test("bounds: 10,000 notifications before each answer are counted, and the listing still completes", async () => {
  const r = await verity(tools("chatty", [], true));
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.tools.length, 1);
  assert.equal(out.tools[0].hints.readOnlyHint.state, "TRUE");
});

Deno.test("orphans: a SIGKILLed verity leaves no server and no setsid() grandchild behind", async () => {
  const marker = `${HERE}orphan.sh`;
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
    stdout: "null",
    stderr: "null",
    env: { NO_COLOR: "1" },
  }).spawn();
  let seen: string[] = [];
  for (let i = 0; i < 100; i++) {
    seen = await survivors("verity-orphan-");
    if (seen.length >= 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(seen.length >= 2, `the server and its grandchild started: ${seen}`);
  child.kill("SIGKILL");
  await child.status;
  let left: string[] = [];
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await survivors("verity-orphan-");
    if (left.length === 0) break;
  }
  assert.deepEqual(left, [], "no process outlives a SIGKILLed verity");
});

Deno.test("sandbox by default: tools runs a bare command under the audit sandbox, --no-sandbox runs it as given", async () => {
  const script = `${HERE}grandchild.sh`;
  // bubblewrap's filter refuses the fork the script needs.
  const boxed = await verity(["tools", "--timeout", "3", "--", "sh", script]);
  assert.equal(boxed.code, 2, boxed.stderr);
  assert.match(boxed.stderr, /Cannot fork|fork: Operation not permitted/);
  const bare = await verity([
    "tools",
    "--no-sandbox",
    "--timeout",
    "3",
    "--",
    "sh",
    script,
  ]);
  assert.equal(bare.code, 2, bare.stderr);
  assert.doesNotMatch(bare.stderr, /Cannot fork/);
  // A deno run command may not bring its own permissions into the sandbox.
  const flags = await verity([
    "tools",
    "--",
    Deno.execPath(),
    "run",
    "--allow-all",
    SERVER,
    "chatty",
  ]);
  assert.equal(flags.code, 2);
  assert.match(flags.stderr, /"--allow-all" is not allowed.*--no-sandbox/);
  assert.deepEqual(await survivors("grandchild.sh"), []);
});

Deno.test("state budget: a server leaving a 3 GiB sparse file ends its sessions with a named reason", async () => {
  const runs = await Deno.makeTempDir({ prefix: "verity-bounds-runs-" });
  try {
    const r = await verity([
      "run",
      new URL("./hostile/sparse", import.meta.url).pathname,
      "--runs-dir",
      runs,
    ]);
    // No session could be observed: the run could not audit the server,
    // which is never exit 0 (SETUP FAILED banner first, exit 1).
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /^SETUP FAILED: hostile-sparse could not be audited/,
    );
    assert.match(
      r.stdout,
      /read_only +true +INCONCLUSIVE:SETUP_FAILED/,
    );
    assert.match(
      r.stdout,
      /state budget exceeded: more than 1\.0 GiB \(3\.0 GiB seen so far\)/,
    );
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("depth: verity run keeps a report when serverInfo nests 200 levels (bounded to 64, no stack overflow)", async () => {
  const def = await Deno.makeTempDir({ prefix: "verity-bounds-deep-" });
  const runs = await Deno.makeTempDir({ prefix: "verity-bounds-runs-" });
  try {
    await Deno.copyFile(SERVER, `${def}/server.ts`);
    // As root the server runs as an unprivileged uid: its files must be readable.
    await Deno.chmod(def, 0o755);
    await Deno.chmod(`${def}/server.ts`, 0o644);
    await Deno.writeTextFile(
      `${def}/fixture.toml`,
      `[fixture]
name = "hostile-deep"
command = ["{deno}", "run", "server.ts", "deep", "200"]

[state]
locations = []

[[tools]]
name = "t"
`,
    );
    const r = await verity(["run", def, "--runs-dir", runs]);
    assert.doesNotMatch(r.stderr, /Maximum call stack/);
    const dirs = [...Deno.readDirSync(runs)].filter((e) => e.isDirectory);
    assert.equal(dirs.length, 1, r.stderr);
    const report = JSON.parse(
      await Deno.readTextFile(`${runs}/${dirs[0]!.name}/report.json`),
    );
    let v = report.protocol.serverInfo;
    let depth = 0;
    while (typeof v === "object" && v !== null) {
      v = v.a;
      depth++;
    }
    // 64 levels for the whole message: result and serverInfo take two.
    assert.equal(
      depth,
      62,
      JSON.stringify(report.protocol?.serverInfo).slice(0, 200) + r.stderr,
    );
    assert.match(String(v), /nested deeper than 64 levels/);
  } finally {
    await Deno.remove(def, { recursive: true });
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("overlap deadline: a timer killed at its limit is named timed out (never 'answered garbage') and takes its servers with it", async () => {
  const { OverlapTimerPool } = await import("../lib/runner/overlap_pool.ts");
  const dir = await Deno.makeTempDir({ prefix: "verity-overlap-kill-" });
  const marker = `${dir}/never-answers.sh`;
  await Deno.copyFile(`${HERE}silent.sh`, marker);
  const pool = new OverlapTimerPool();
  try {
    const started = performance.now();
    const r = await pool.run({
      mode: "single_connection",
      launches: [{ command: ["sh", marker], env: { PATH: "/usr/bin:/bin" } }],
      // The timer itself would wait 20 s for initialize: the pool's limit
      // (1.5 s) is reached first and the timer is killed.
      startTimeoutMs: 20_000,
      callTimeoutMs: 1_000,
      call: { name: "x", arguments: {} },
    }, 1_500);
    assert.equal(typeof r, "string");
    assert.match(
      r as string,
      /^timed out: the overlap timer gave no answer within 1\.5 s and was killed with its servers$/,
    );
    assert.ok(performance.now() - started < 10_000);
    // The server started inside the killed timer's PID namespace is gone.
    let left: string[] = [];
    for (let i = 0; i < 30; i++) {
      left = await survivors(marker);
      if (left.length === 0) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.deepEqual(left, [], "no server outlives its killed timer");
  } finally {
    await pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("overlap deadline: a server slow only inside concurrent attempts is INCONCLUSIVE:TIMED_OUT with the deadline named, never PASS, and leaves no process", async () => {
  const runs = await Deno.makeTempDir({ prefix: "verity-bounds-runs-" });
  try {
    const r = await verity([
      "run",
      new URL("./hostile/overlap-slow", import.meta.url).pathname,
      "--concurrent-attempts",
      "1",
      "--runs-dir",
      runs,
    ]);
    // Exit 0 only because the fixture expects the named timeout: the old
    // PASS (or any other verdict) fails its expectation with exit 1.
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /set_flag +concurrent_idempotence +true +INCONCLUSIVE:TIMED_OUT/,
    );
    assert.match(
      r.stdout,
      /two_process: 0\/1 diverged, overlap 0, 1 timed out/,
    );
    // The deadline (6 pings of 3.5 s > 19 s); on a loaded machine a ping
    // may pass its own 4 s timeout first, which is named as well.
    assert.match(
      r.stdout,
      /timed out: (the attempt did not finish within its deadline of 19\.0 s \(while pinging instance \d\); its servers were stopped|instance \d did not answer ping: no answer to ping within 4\.0 s)/,
    );
    assert.doesNotMatch(r.stdout + r.stderr, /garbage|failed to start/);
    assert.deepEqual(await survivors("overlap-slow/server.ts"), []);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("reality deadline: answers dripped inside the per-answer timeout end at the shared session's deadline, named, exit 1, no survivor", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-reality-deadline-" });
  try {
    const out = `${dir}/reality.json`;
    // 20 read-only tools, each answered after 800 ms (timeout 1 s): 16 s
    // without a deadline.
    const r = await verity([
      "reality",
      "--timeout",
      "1",
      "--session-deadline",
      "4",
      "--out",
      out,
      "--",
      Deno.execPath(),
      "run",
      SERVER,
      "slowcalls",
      "800",
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.ms < 12_000, `ended at the deadline, took ${r.ms} ms`);
    assert.match(
      r.stdout,
      /ENDED EARLY: deadline: the shared session's deadline of 4\.0 s passed while slow\d+ was called; \d+ tool\(s\) not called/,
    );
    assert.match(r.stderr, /verity reality: ended early: deadline:/);
    const report = JSON.parse(await Deno.readTextFile(out));
    assert.match(report.ended, /^deadline: /);
    const failed = report.tools.filter((t: { status: string }) =>
      t.status === "failed"
    );
    assert.ok(failed.length >= 10, `${failed.length} tools not completed`);
    assert.ok(
      failed.every((t: { failure: { message: string } }) =>
        /^(deadline|not called): the shared session's deadline/.test(
          t.failure.message,
        )
      ),
    );
    assert.deepEqual(await survivors(`${SERVER} slowcalls`), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Zombie processes among this test process's descendants (their pids). */
async function zombiesBelowMe(): Promise<Set<string>> {
  const out = await new Deno.Command("ps", {
    args: ["-eo", "pid=,ppid=,stat="],
    stdout: "piped",
  }).output();
  const rows = dec.decode(out.stdout).trim().split("\n").map((l) =>
    l.trim().split(/\s+/)
  );
  const mine = new Set([String(Deno.pid)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of rows) {
      if (mine.has(ppid!) && !mine.has(pid!)) {
        mine.add(pid!);
        grew = true;
      }
    }
  }
  return new Set(
    rows.filter(([pid, ppid, stat]) =>
      mine.has(pid!) && ppid !== String(Deno.pid) && stat!.startsWith("Z")
    ).map(([pid]) => pid!),
  );
}

Deno.test("overlap timer: orphans it inherits as its PID namespace's first process are reaped while it lives", async () => {
  const { OverlapTimerPool } = await import("../lib/runner/overlap_pool.ts");
  const { containment } = await import("../lib/wire/contain.ts");
  if (containment().reason !== null) return; // no PID namespaces here
  const pool = new OverlapTimerPool();
  try {
    // Not contained itself, so the short-lived background processes its
    // subshells leave behind are re-parented to the timer's namespace init.
    const run = pool.run({
      mode: "single_connection",
      launches: [{
        command: [
          "sh",
          "-c",
          "for i in 1 2 3 4 5; do (sleep 0.2 &); done; sleep 3",
        ],
        env: { PATH: "/usr/bin:/bin" },
        contain: false,
      }],
      startTimeoutMs: 2_500,
      callTimeoutMs: 1_000,
      call: { name: "x", arguments: {} },
    }, 20_000);
    // A zombie counts when it is still one 150 ms later: one caught in the
    // instant between its exit and the reaper's wait (a loaded machine
    // stretches it) is being reaped, not left.
    let most = 0;
    let before = new Set<string>();
    const t0 = performance.now();
    while (performance.now() - t0 < 2_000) {
      await new Promise((r) => setTimeout(r, 150));
      if (performance.now() - t0 > 800) {
        const now = await zombiesBelowMe();
        most = Math.max(most, [...now].filter((p) => before.has(p)).length);
        before = now;
      }
    }
    const r = await run;
    assert.equal(typeof r, "object");
    assert.equal(most, 0, `${most} zombie(s) under the overlap timer`);
  } finally {
    await pool.close();
  }
});

Deno.test("containment: an overlay launch's mount namespace comes from the containing unshare itself (one process fewer), and still works", async () => {
  const { containCommand, containment } = await import(
    "../lib/wire/contain.ts"
  );
  const c = containment();
  if (c.reason !== null || Deno.uid() !== 0) return; // no namespaces here
  const unshare = c.prefix[4]!;
  const argv = containCommand([
    unshare,
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    "mount -t tmpfs verity-test /mnt && exit 7",
  ]);
  assert.equal(argv.filter((a) => a === unshare).length, 1, argv.join(" "));
  const [program, ...args] = argv;
  const out = await new Deno.Command(program!, { args }).output();
  assert.equal(out.code, 7, new TextDecoder().decode(out.stderr));
  const mounts = await Deno.readTextFile("/proc/self/mounts");
  assert.ok(
    !mounts.includes("verity-test"),
    "the mount stayed in its namespace",
  );
});
