/**
 * The sandbox edge against real processes: Deno servers still load their
 * import map and npm cache under the read restriction, `--cached-only`
 * really keeps the audit offline, bad requests fail with one clear line,
 * and bubblewrap's filter stops new processes while threads still work.
 */
import assert from "node:assert/strict";
import {
  collectEvidence,
  prepareLaunch,
  probeBackends,
  resolveDeno,
  resolvePython,
  SandboxError,
} from "./sandbox.ts";
import { noProcessFilter } from "./_seccomp.ts";
import type { LaunchRequest } from "./types.ts";
import { openSession } from "../wire/session.ts";
import { InputError } from "../errors.ts";

const FIXTURE =
  new URL("../../fixtures/honest-closedworld", import.meta.url).pathname;

async function scratch(): Promise<
  { root: string; state: string; evidence: string }
> {
  const root = await Deno.makeTempDir({ prefix: "verity-sandbox-test-" });
  const state = `${root}/state`;
  await Deno.mkdir(state);
  // Seed the fixture's store the way its seed.sql does, with Deno's own sqlite.
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(`${state}/state.db`);
  db.exec(await Deno.readTextFile(`${FIXTURE}/seed.sql`));
  db.close();
  return { root, state, evidence: `${root}/evidence/nested` };
}

function request(
  dirs: { state: string; evidence: string },
  over: Partial<LaunchRequest> = {},
): LaunchRequest {
  return {
    command: [resolveDeno(), "run", "server.ts"],
    env: {},
    stateDir: dirs.state,
    definitionDir: FIXTURE,
    readPaths: [],
    backend: "deno",
    evidenceDir: dirs.evidence,
    label: "server",
    ...over,
  };
}

Deno.test("deno backend: an SDK server loads its import map and npm packages under the read restriction", async () => {
  const dirs = await scratch();
  try {
    const launch = prepareLaunch(request(dirs));
    const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
    const r = await s.client.request("tools/call", {
      name: "get_rate",
      arguments: { pair: "EURUSD" },
    }, 30_000);
    await s.client.close();
    assert.equal(s.failure, null, s.client.stderr().text);
    assert.equal(s.pages.length, 1);
    assert.deepEqual(
      (r as { result: { content: { text: string }[] } }).result.content[0]!
        .text,
      "EURUSD = 1.08",
    );
    const ev = await collectEvidence(launch);
    assert.deepEqual(
      ev.attempts,
      [],
      `an honest server attempts nothing refused: ${
        JSON.stringify(ev.attempts)
      }`,
    );
    assert.deepEqual(ev.network, []);
    assert.ok(
      Deno.statSync(dirs.evidence).isDirectory,
      "the missing evidence directory was created",
    );
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});

Deno.test("deno backend: --cached-only keeps the run offline: an empty Deno cache fails instead of downloading", async () => {
  const dirs = await scratch();
  try {
    const empty = `${dirs.root}/empty-deno-dir`;
    await Deno.mkdir(empty);
    const launch = prepareLaunch(request(dirs, { denoDir: empty }));
    const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
    await s.client.close();
    assert.equal(s.failure?.reason, "exited");
    assert.match(s.client.stderr().text, /not found in cache.*--cached-only/);
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});

Deno.test("prepareLaunch: a missing state directory or read path is a one-line usage error naming it", () => {
  assert.throws(
    () =>
      prepareLaunch(
        request({ state: "/nonexistent/verity-state", evidence: "/tmp/x" }),
      ),
    (e: Error) =>
      e instanceof SandboxError && e instanceof InputError &&
      e.message ===
        'state directory "/nonexistent/verity-state" does not exist',
  );
  assert.throws(
    () =>
      prepareLaunch(
        request({ state: FIXTURE, evidence: "/tmp/x" }, {
          readPaths: ["/nonexistent/ref"],
        }),
      ),
    /read path "\/nonexistent\/ref" does not exist/,
  );
});

Deno.test("resolveDeno: from source, {deno} is the running deno", () => {
  assert.equal(resolveDeno(), Deno.execPath());
});

Deno.test("seccomp filter: a well-formed classic BPF program that ends in allow/deny returns", () => {
  for (const arch of ["x86_64", "aarch64"] as const) {
    const bytes = noProcessFilter(arch);
    assert.equal(bytes.length % 8, 0);
    const view = new DataView(bytes.buffer);
    const n = bytes.length / 8;
    assert.deepEqual([view.getUint16(0, true), view.getUint32(4, true)], [
      0x20,
      4,
    ], "first loads the architecture");
    const returns = [n - 3, n - 2, n - 1].map((
      i,
    ) => [view.getUint16(i * 8, true), view.getUint32(i * 8 + 4, true)]);
    assert.deepEqual(returns, [[6, 0x7fff0000], [6, 0x00050001], [
      6,
      0x00050026,
    ]]);
  }
});

Deno.test("bubblewrap: threads work, new processes do not, and the state dir is the only writable place", async () => {
  const probe = await probeBackends();
  assert.ok(
    probe.bubblewrap,
    `bubblewrap is unavailable here: ${probe.reason}`,
  );
  const python = await resolvePython();
  const dirs = await scratch();
  const script = `
import os, threading, subprocess
out = []
t = threading.Thread(target=lambda: out.append("thread")); t.start(); t.join()
try:
    subprocess.run(["/bin/true"]); out.append("subprocess")
except OSError as e: out.append("no-subprocess:%d" % e.errno)
for p in [os.environ["VERITY_STATE_DIR"] + "/ok", "/etc/verity-escape"]:
    try:
        open(p, "w").write("x"); out.append("wrote " + p)
    except OSError as e: out.append("no-write:%d" % e.errno)
print(" ".join(out), flush=True)
`;
  try {
    const launch = prepareLaunch(
      request(dirs, { backend: "bubblewrap", command: [python, "-c", script] }),
    );
    const [program, ...args] = launch.spawn.command;
    const out = await new Deno.Command(program!, {
      args,
      env: launch.spawn.env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    // Under an overlay (verity as root) / is writable only where the
    // server's uid may write, and into the overlay: /etc is EACCES, not EROFS.
    assert.equal(
      text,
      `thread no-subprocess:1 wrote ${dirs.state}/ok no-write:${
        launch.writes?.observed ? 13 : 30
      }`,
      new TextDecoder().decode(out.stderr),
    );
    await assert.rejects(
      Deno.lstat("/etc/verity-escape"),
      Deno.errors.NotFound,
    );
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});

async function runLaunched(
  launch: ReturnType<typeof prepareLaunch>,
): Promise<{ stdout: string; stderr: string }> {
  const [program, ...args] = launch.spawn.command;
  const out = await new Deno.Command(program!, {
    args,
    env: launch.spawn.env,
    ...(launch.spawn.cwd ? { cwd: launch.spawn.cwd } : {}),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { stdout: d.decode(out.stdout).trim(), stderr: d.decode(out.stderr) };
}

Deno.test("bubblewrap allow.run: the declared program runs, undeclared ones are not found, writes stay confined", async () => {
  const probe = await probeBackends();
  assert.ok(
    probe.bubblewrap,
    `bubblewrap is unavailable here: ${probe.reason}`,
  );
  const python = await resolvePython();
  const dirs = await scratch();
  const script = `
import os, subprocess
out = []
def run(argv):
    try:
        r = subprocess.run(argv, capture_output=True, cwd=os.environ["VERITY_STATE_DIR"])
        out.append("%s:rc%d" % (argv[0], r.returncode))
    except OSError as e: out.append("%s:errno%d" % (argv[0], e.errno))
run(["git", "init", "-q", "repo"])
run(["/bin/true"]); run(["sh", "-c", "exit 0"]); run(["/usr/bin/env", "true"])
out.append("repo" if os.path.isdir(os.environ["VERITY_STATE_DIR"] + "/repo/.git") else "no-repo")
r = subprocess.run(["git", "init", "-q", "/etc/verity-escape-repo"], capture_output=True)
out.append("escape:rc%d" % r.returncode)
out.append("cwd=" + os.getcwd())
print(" ".join(out), flush=True)
`;
  try {
    const launch = prepareLaunch(
      request(dirs, {
        backend: "bubblewrap",
        command: [python, "-c", script],
        allow: { sys: [], run: ["git"] },
        cwd: dirs.state,
      }),
    );
    assert.ok(
      !launch.spawn.command.includes("--seccomp"),
      "a run allowance replaces the process filter",
    );
    const { stdout, stderr } = await runLaunched(launch);
    assert.equal(
      stdout,
      `git:rc0 /bin/true:errno2 sh:errno2 /usr/bin/env:errno2 repo escape:rc128 cwd=${dirs.state}`,
      stderr,
    );
    assert.equal(launch.policy?.run?.includes("/usr/bin/git"), true);
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});

Deno.test("deno allow.sys and allow.run: granted names work, everything else is still refused and logged", async () => {
  const probe = await probeBackends();
  assert.ok(
    probe.bubblewrap,
    `bubblewrap is unavailable here: ${probe.reason}`,
  );
  const dirs = await scratch();
  const defDir = `${dirs.root}/def`;
  await Deno.mkdir(defDir);
  await Deno.writeTextFile(
    `${defDir}/probe.ts`,
    `const out: string[] = [];
const tryIt = async (name: string, f: () => unknown) => {
  try { await f(); out.push(name + ":ok"); } catch (e) { out.push(name + ":" + (e as Error).name); }
};
await tryIt("hostname", () => Deno.hostname());
await tryIt("osRelease", () => Deno.osRelease());
await tryIt("git", async () => {
  const o = await new Deno.Command("git", { args: ["--version"], stdout: "null" }).output();
  if (!o.success) throw new Error("git failed");
});
await tryIt("true", () => new Deno.Command("/bin/true").output());
await tryIt("sh", () => new Deno.Command("sh", { args: ["-c", "exit 0"] }).output());
console.log(out.join(" "));
`,
  );
  try {
    const launch = prepareLaunch(
      request(dirs, {
        definitionDir: defDir,
        command: [resolveDeno(), "run", "probe.ts"],
        allow: { sys: ["hostname"], run: ["git"] },
      }),
    );
    const argv = launch.spawn.command;
    assert.ok(argv.includes("--allow-sys=hostname"), argv.join(" "));
    assert.ok(argv.some((a) => a.startsWith("--allow-run=/usr/bin/git")));
    assert.ok(!argv.includes("--deny-run"));
    assert.ok(
      argv.some((a) => a.endsWith("/bwrap")),
      "deno runs inside bubblewrap",
    );
    const { stdout, stderr } = await runLaunched(launch);
    assert.equal(
      stdout,
      // /bin/true: Deno refuses it; sh: bubblewrap emptied the program
      // directories, so it is not even found.
      "hostname:ok osRelease:NotCapable git:ok true:NotCapable sh:NotFound",
      stderr,
    );
    const ev = await collectEvidence(launch);
    const refused = (ev.attempts ?? []).map((a) =>
      `${a.permission} ${a.value}`
    );
    assert.ok(refused.includes("sys osRelease"), refused.join(", "));
    assert.ok(!refused.includes("sys hostname"), refused.join(", "));
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});

Deno.test("cwd: the server starts in the declared directory; one outside its readable paths is refused", async () => {
  const dirs = await scratch();
  try {
    const l = prepareLaunch(request(dirs, { cwd: dirs.state }));
    assert.equal(l.spawn.cwd, await Deno.realPath(dirs.state));
    assert.throws(
      () => prepareLaunch(request(dirs, { cwd: "/usr" })),
      (e: unknown) =>
        e instanceof SandboxError && /cwd "\/usr" is outside/.test(e.message),
    );
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});

Deno.test("overlay: the server writes beside its code into the session's upper layer only; a read path that is a file stays a file", async () => {
  const probe = await probeBackends();
  assert.ok(
    probe.bubblewrap,
    `bubblewrap is unavailable here: ${probe.reason}`,
  );
  const python = await resolvePython();
  const dirs = await scratch();
  const code = `${dirs.root}/code`;
  await Deno.mkdir(code);
  await Deno.chmod(dirs.root, 0o755);
  await Deno.writeTextFile(`${dirs.root}/settings.json`, "{}");
  const script = `
import os
open(${JSON.stringify(`${code}/cache.txt`)}, "w").write("x")
print(os.path.isfile(${
    JSON.stringify(`${dirs.root}/settings.json`)
  }), flush=True)
`;
  try {
    const launch = prepareLaunch(
      request(dirs, {
        backend: "bubblewrap",
        definitionDir: code,
        readPaths: [`${dirs.root}/settings.json`],
        command: [python, "-c", script],
      }),
    );
    if (!launch.writes?.observed) return; // no overlay here (not root)
    const { stdout, stderr } = await runLaunched(launch);
    assert.equal(stdout, "True", stderr);
    await assert.rejects(Deno.lstat(`${code}/cache.txt`), Deno.errors.NotFound);
    const upper = launch.writes.layout.layers[0]!.upper;
    assert.equal(await Deno.readTextFile(`${upper}${code}/cache.txt`), "x");
    assert.deepEqual(launch.writes.layout.owned, [code]);
    // The layers are on the tmpfs where there is one, and go once the
    // session's evidence directory has (seen at the next launch).
    const shm = (await Deno.readTextFile("/proc/self/mountinfo")).split("\n")
      .some((l) => l.split(" ")[4] === "/dev/shm" && / - tmpfs /.test(l));
    if (shm) {
      assert.match(
        upper,
        /^\/dev\/shm\/verity-layers-[^/]+\/\d+\/server\/upper$/,
      );
      await Deno.remove(dirs.evidence, { recursive: true });
      const next = prepareLaunch(
        request({ ...dirs, evidence: `${dirs.root}/evidence-2` }, {
          backend: "bubblewrap",
        }),
      );
      await assert.rejects(Deno.lstat(upper), Deno.errors.NotFound);
      assert.ok(next.writes?.observed);
      assert.ok((await Deno.lstat(next.writes.layout.work)).isDirectory);
    }
  } finally {
    await Deno.remove(dirs.root, { recursive: true });
  }
});
