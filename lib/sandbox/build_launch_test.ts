/**
 * The launch lines, built purely from a request and host facts: what each
 * backend grants, refuses and hands the server.
 */
import assert from "node:assert/strict";
import {
  buildLaunch,
  type HostFacts,
  refusedDenoFlag,
  splitDenoRun,
} from "./build_launch.ts";
import { SandboxError } from "./errors.ts";
import type { LaunchRequest } from "./types.ts";

const DENO = "/opt/deno/bin/deno";

function request(over: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    command: [DENO, "run", "server.ts"],
    env: {},
    stateDir: "/work/run/state",
    definitionDir: "/repo/fixtures/x",
    readPaths: [],
    backend: "deno",
    evidenceDir: "/work/run/evidence",
    label: "once-1",
    ...over,
  };
}

function host(over: Partial<HostFacts> = {}): HostFacts {
  return {
    path: "/usr/local/bin:/usr/bin:/bin",
    home: "/home/auditor",
    denoDir: "/home/auditor/.cache/deno",
    bwrap: "/usr/bin/bwrap",
    shell: "/bin/sh",
    seccompFilter: "/work/run/evidence/verity-no-process-x86_64.bpf",
    program: DENO,
    programReal: DENO,
    programIsDeno: true,
    ...over,
  };
}

/** The value of `--flag=value` in argv, or undefined. */
function flag(argv: string[], name: string): string | undefined {
  const a = argv.find((x) => x.startsWith(`${name}=`));
  return a?.slice(name.length + 1);
}

Deno.test("deno backend: denies net, run and ffi, confines writes and reads, and logs checks per process", () => {
  const l = buildLaunch(request({ readPaths: ["/data/ref"] }), host());
  const argv = l.spawn.command;
  assert.deepEqual(argv.slice(0, 2), [DENO, "run"]);
  for (
    const f of [
      "--deny-net",
      "--deny-run",
      "--deny-ffi",
      "--no-prompt",
      "--cached-only",
      "--no-lock",
      // a literal import() is then a checked read (issue 32)
      "--unstable-lazy-dynamic-imports",
    ]
  ) {
    assert.ok(argv.includes(f), `missing ${f}`);
  }
  assert.equal(flag(argv, "--allow-write"), "/work/run/state");
  assert.equal(
    flag(argv, "--allow-read"),
    "/repo/fixtures/x,/work/run/state,/data/ref,/home/auditor/.cache/deno/npm",
  );
  assert.equal(flag(argv, "--allow-env"), "HOME,PATH,VERITY_STATE_DIR");
  assert.ok(
    argv.includes("--ignore-env"),
    "undeclared variables read as undefined instead of crashing",
  );
  assert.equal(argv.at(-1), "server.ts", "the script comes after every flag");
  assert.equal(l.auditLog, "/work/run/evidence/once-1.permissions.jsonl");
  assert.equal(l.spawn.env.DENO_AUDIT_PERMISSIONS, l.auditLog);
  assert.equal(l.spawn.cwd, "/repo/fixtures/x");
  assert.equal(l.seesNetwork, true);
  assert.ok(l.observes?.includes("net") && !l.observes.includes("run"));
});

Deno.test("every backend scrubs the environment: declared env plus PATH, HOME in the state dir, VERITY_STATE_DIR", () => {
  const declared = { API_URL: "http://localhost:1", LOG_LEVEL: "debug" };
  for (const backend of ["deno", "bubblewrap", "none"] as const) {
    const l = buildLaunch(request({ backend, env: declared }), host());
    const env = l.spawn.env;
    assert.equal(env.HOME, "/work/run/state", backend);
    assert.equal(env.VERITY_STATE_DIR, "/work/run/state", backend);
    assert.equal(env.PATH, "/usr/local/bin:/usr/bin:/bin", backend);
    assert.equal(env.API_URL, declared.API_URL);
    assert.equal(
      env.DENO_DIR,
      "/home/auditor/.cache/deno",
      `${backend}: Deno must find its cache with HOME moved`,
    );
    const extra = Object.keys(env).filter((k) =>
      ![
        "HOME",
        "VERITY_STATE_DIR",
        "PATH",
        "API_URL",
        "LOG_LEVEL",
        "DENO_DIR",
        "DENO_NO_UPDATE_CHECK",
        "NO_COLOR",
      ]
        .includes(k) && !(backend === "deno" && k === "DENO_AUDIT_PERMISSIONS")
    );
    assert.deepEqual(extra, [], `${backend} leaks ${extra.join(", ")}`);
  }
  const deno = buildLaunch(request({ env: declared }), host());
  assert.equal(
    flag(deno.spawn.command, "--allow-env"),
    "API_URL,HOME,LOG_LEVEL,PATH,VERITY_STATE_DIR",
  );
});

Deno.test("a non-Deno program gets no Deno variables", () => {
  const l = buildLaunch(
    request({ backend: "bubblewrap", command: ["python3", "server.py"] }),
    host({
      program: "/usr/bin/python3",
      programReal: "/usr/bin/python3.11",
      programIsDeno: false,
    }),
  );
  assert.deepEqual(Object.keys(l.spawn.env).sort(), [
    "HOME",
    "PATH",
    "VERITY_STATE_DIR",
  ]);
});

Deno.test("declared env cannot move HOME out of the state dir or take over the sandbox's own variables", () => {
  assert.throws(
    () => buildLaunch(request({ env: { HOME: "/home/auditor" } }), host()),
    /HOME must point inside/,
  );
  assert.doesNotThrow(() =>
    buildLaunch(request({ env: { HOME: "/work/run/state/home" } }), host())
  );
  assert.throws(
    () => buildLaunch(request({ env: { DENO_DIR: "/x" } }), host()),
    /DENO_DIR is set by the sandbox/,
  );
  assert.throws(
    () =>
      buildLaunch(
        request({ env: { DENO_AUDIT_PERMISSIONS: "/dev/null" } }),
        host(),
      ),
    SandboxError,
  );
  assert.throws(
    () =>
      buildLaunch(request({ env: { VERITY_STATE_DIR: "/elsewhere" } }), host()),
    /VERITY_STATE_DIR/,
  );
  assert.doesNotThrow(() =>
    buildLaunch(
      request({ env: { VERITY_STATE_DIR: "/work/run/state" } }),
      host(),
    )
  );
  assert.throws(
    () => buildLaunch(request({ env: { "BAD-NAME": "1" } }), host()),
    /not a valid environment/,
  );
});

Deno.test("deno backend refuses commands that would widen the sandbox or are not deno run", () => {
  for (
    const f of [
      "-A",
      "--allow-all",
      "--allow-net",
      "--allow-read=/",
      "-R",
      "-N=example.com",
      "--deny-write",
      "-P",
    ]
  ) {
    assert.throws(
      () =>
        buildLaunch(
          request({ command: [DENO, "run", f, "server.ts"] }),
          host(),
        ),
      (e: Error) =>
        e instanceof SandboxError && e.message.includes(JSON.stringify(f)) &&
        /permission flags/.test(e.message),
      f,
    );
  }
  assert.throws(
    () =>
      buildLaunch(
        request({ command: [DENO, "run", "--inspect", "s.ts"] }),
        host(),
      ),
    /network port/,
  );
  assert.throws(
    () =>
      buildLaunch(request({ command: [DENO, "run", "-r", "s.ts"] }), host()),
    /cached-only/,
  );
  assert.throws(
    () => buildLaunch(request({ command: [DENO, "serve", "s.ts"] }), host()),
    /must be "deno run/,
  );
  assert.throws(
    () => buildLaunch(request({ command: [DENO, "run"] }), host()),
    /no script/,
  );
  assert.throws(
    () =>
      buildLaunch(
        request({ command: ["python3", "s.py"] }),
        host({ programIsDeno: false }),
      ),
    /is not deno; use sandbox = "bubblewrap"/,
  );
  assert.throws(() => buildLaunch(request({ label: "../x" }), host()), /label/);
  assert.throws(
    () => buildLaunch(request({ readPaths: ["/a,b"] }), host()),
    /comma/,
  );
  assert.throws(
    () => buildLaunch(request({ readPaths: ["rel"] }), host()),
    /absolute/,
  );
});

Deno.test("deno backend keeps the definition's other flags and leaves server arguments alone", () => {
  const l = buildLaunch(
    request({
      command: [
        DENO,
        "run",
        "-c",
        "deno.json",
        "--frozen",
        "npm:pkg@1.0.0",
        "--allow-net",
        "/data",
      ],
    }),
    host(),
  );
  const argv = l.spawn.command;
  const script = argv.indexOf("npm:pkg@1.0.0");
  assert.deepEqual(argv.slice(script - 3, script), [
    "-c",
    "deno.json",
    "--frozen",
  ]);
  assert.deepEqual(
    argv.slice(script + 1),
    ["--allow-net", "/data"],
    "arguments after the script are the server's",
  );
  assert.ok(
    !argv.includes("--no-lock"),
    "--frozen already settles the lockfile",
  );
  assert.deepEqual(splitDenoRun([DENO, "run", "--", "s.ts", "-A"]), {
    flags: [],
    script: "s.ts",
    args: ["-A"],
  });
  assert.equal(refusedDenoFlag("--unstable-kv"), null);
  assert.equal(refusedDenoFlag("-q"), null);
});

Deno.test("bubblewrap backend: read-only root, writable state, new namespaces, hidden home and /tmp, no processes", () => {
  const l = buildLaunch(
    request({
      backend: "bubblewrap",
      command: ["python3", "server.py", "--flag"],
      readPaths: ["/data/ref"],
    }),
    host({
      program: "/home/auditor/.pyenv/versions/3.12/bin/python3",
      programReal: "/home/auditor/.pyenv/versions/3.12/bin/python3.12",
      programIsDeno: false,
    }),
  );
  const argv = l.spawn.command;
  assert.deepEqual(argv.slice(0, 5), [
    "/bin/sh",
    "-c",
    'exec 3<"$0" && exec "$@"',
    "/work/run/evidence/verity-no-process-x86_64.bpf",
    "/usr/bin/bwrap",
  ]);
  const joined = argv.join(" ");
  for (
    const part of [
      "--unshare-net",
      "--unshare-pid",
      "--unshare-ipc",
      "--die-with-parent",
      "--cap-drop ALL",
      "--ro-bind / /",
      "--dev /dev",
      "--proc /proc",
      "--tmpfs /tmp",
      "--tmpfs /run",
      "--tmpfs /home/auditor",
      "--ro-bind-try /home/auditor/.pyenv/versions/3.12 /home/auditor/.pyenv/versions/3.12",
      "--ro-bind /repo/fixtures/x /repo/fixtures/x",
      "--ro-bind /data/ref /data/ref",
      "--bind /work/run/state /work/run/state",
      "--chdir /repo/fixtures/x",
      "--clearenv",
      "--setenv HOME /work/run/state",
      "--seccomp 3",
    ]
  ) assert.ok(joined.includes(part), `missing ${part}`);
  assert.ok(
    joined.indexOf("--tmpfs /tmp") < joined.indexOf("--bind /work/run/state"),
    "the state dir is bound after the tmpfs that could cover it",
  );
  assert.deepEqual(argv.slice(argv.indexOf("--") + 1), [
    "/home/auditor/.pyenv/versions/3.12/bin/python3",
    "server.py",
    "--flag",
  ]);
  assert.equal(l.auditLog, null);
  assert.equal(l.seesNetwork, false);
  assert.deepEqual(l.observes, []);
});

Deno.test("bubblewrap backend: Deno runs with all permissions inside, from its cache, and its home bound back", () => {
  const l = buildLaunch(
    request({ backend: "bubblewrap" }),
    host({ program: DENO, programReal: "/home/auditor/.deno/bin/deno" }),
  );
  const argv = l.spawn.command;
  const joined = argv.join(" ");
  assert.ok(
    joined.includes("--ro-bind-try /home/auditor/.deno /home/auditor/.deno"),
  );
  assert.ok(
    joined.includes(
      "--ro-bind-try /home/auditor/.cache/deno /home/auditor/.cache/deno",
    ),
  );
  assert.deepEqual(argv.slice(argv.indexOf("--") + 1), [
    DENO,
    "run",
    "--allow-all",
    "--no-prompt",
    "--cached-only",
    "--no-lock",
    "server.ts",
  ]);
});

Deno.test("bubblewrap backend refuses to run without bwrap or without a process filter", () => {
  const req = request({
    backend: "bubblewrap",
    command: ["/usr/bin/python3", "s.py"],
  });
  assert.throws(
    () => buildLaunch(req, host({ bwrap: null })),
    /apt-get install -y bubblewrap/,
  );
  assert.throws(
    () => buildLaunch(req, host({ seccompFilter: null })),
    /architecture/,
  );
});

Deno.test("none backend runs the command as given, environment scrubbed; deno gets its permissions", () => {
  const py = buildLaunch(
    request({ backend: "none", command: ["python3", "s.py"] }),
    host({ programIsDeno: false }),
  );
  assert.deepEqual(py.spawn.command, ["python3", "s.py"]);
  assert.equal(py.auditLog, null);
  const deno = buildLaunch(request({ backend: "none" }), host());
  assert.deepEqual(deno.spawn.command, [
    DENO,
    "run",
    "--allow-all",
    "--no-prompt",
    "--cached-only",
    "--no-lock",
    "server.ts",
  ]);
});

Deno.test("allowances: sys and run flags for deno (inside bubblewrap); bubblewrap empties program dirs and binds back only declared programs", () => {
  const programs = [{
    name: "git",
    path: "/usr/bin/git",
    real: "/usr/bin/git",
  }];
  const facts = host({
    allowedPrograms: programs,
    binDirs: ["/usr/bin", "/usr/sbin"],
  });
  const d = buildLaunch(
    request({ allow: { sys: ["hostname"], run: ["git"] } }),
    facts,
  );
  const argv = d.spawn.command;
  assert.equal(argv[0], "/usr/bin/bwrap");
  assert.ok(argv.includes("--allow-sys=hostname"));
  assert.ok(argv.includes("--allow-run=/usr/bin/git"));
  assert.ok(!argv.includes("--deny-run") && argv.includes("--deny-net"));
  assert.deepEqual(d.policy?.sys, ["hostname"]);
  // Without bwrap, a run allowance under deno is refused, not run unconfined.
  assert.throws(
    () =>
      buildLaunch(
        request({ allow: { sys: [], run: ["git"] } }),
        host({ ...facts, bwrap: null }),
      ),
    (e: unknown) =>
      e instanceof SandboxError && /needs bubblewrap/.test(e.message),
  );
  // An undeclared allowance name that was not resolved is refused.
  assert.throws(
    () => buildLaunch(request({ allow: { sys: [], run: ["hg"] } }), facts),
    SandboxError,
  );
  const py = "/usr/bin/python3";
  const b = buildLaunch(
    request({
      backend: "bubblewrap",
      command: [py, "server.py"],
      allow: { sys: [], run: ["git"] },
    }),
    host({
      ...facts,
      program: py,
      programReal: "/usr/bin/python3.11",
      programIsDeno: false,
    }),
  );
  const bv = b.spawn.command;
  assert.equal(bv[0], "/usr/bin/bwrap", "no shell: no filter to hand over");
  assert.ok(!bv.includes("--seccomp"));
  const pairs = (f: string) =>
    bv.flatMap((a, i) => (a === f ? [`${bv[i + 1]} ${bv[i + 2] ?? ""}`] : []));
  assert.ok(pairs("--tmpfs").some((p) => p.startsWith("/usr/bin ")));
  assert.ok(pairs("--tmpfs").some((p) => p.startsWith("/usr/sbin ")));
  const binds = pairs("--ro-bind");
  for (
    const want of [
      "/usr/bin/python3.11 /usr/bin/python3",
      "/usr/bin/python3.11 /usr/bin/python3.11",
      "/usr/bin/git /usr/bin/git",
    ]
  ) assert.ok(binds.includes(want), `${want} in ${binds.join(" | ")}`);
  // The tmpfs comes before the binds that fill it.
  assert.ok(bv.indexOf("/usr/bin/git") > bv.indexOf("--tmpfs"));
});

Deno.test("a granted database socket: deno allows that unix socket only, bubblewrap binds it, and reaching it is not network evidence", async () => {
  const { launchEvidence } = await import("./audit_log.ts");
  const sock = "/work/run/postgres/socket/.s.PGSQL.5432";
  const l = buildLaunch(request({ sockets: [sock] }), host());
  const argv = l.spawn.command;
  assert.ok(!argv.includes("--deny-net"));
  assert.equal(flag(argv, "--allow-net"), `unix:${sock}`);
  assert.equal(flag(argv, "--allow-write"), `/work/run/state,${sock}`);
  assert.ok(flag(argv, "--allow-read")?.endsWith(`,${sock}`));
  const ev = launchEvidence(
    l,
    [
      `{"v":1,"permission":"net","value":"unix:${sock}"}`,
      `{"v":1,"permission":"net","value":"unix:/run/other.sock"}`,
      `{"v":1,"permission":"net","value":"example.com:443"}`,
    ].join("\n"),
  );
  assert.deepEqual(ev.network, ["example.com:443", "unix:/run/other.sock"]);
  assert.deepEqual(ev.attempts?.map((a) => a.value), [
    "example.com:443",
    "unix:/run/other.sock",
  ]);
  const b = buildLaunch(
    request({ sockets: [sock], backend: "bubblewrap" }),
    host(),
  ).spawn.command;
  const i = b.indexOf(sock);
  assert.ok(i > 0 && b[i - 1] === "--bind" && b[i + 1] === sock);
});

Deno.test('a granted database port (listen = "tcp"): deno allows 127.0.0.1:<port> only, reaching it is not network evidence, another port is', async () => {
  const { launchEvidence } = await import("./audit_log.ts");
  const sock = "/work/run/postgres/socket/.s.PGSQL.40001";
  const l = buildLaunch(
    request({ connect: [{ port: 40001, socket: sock }] }),
    host(),
  );
  const argv = l.spawn.command;
  assert.ok(!argv.includes("--deny-net"));
  assert.equal(flag(argv, "--allow-net"), "127.0.0.1:40001");
  assert.ok(!argv.join(" ").includes(sock), "deno is not handed the socket");
  assert.equal(l.spawn.portRelay, undefined);
  const ev = launchEvidence(
    l,
    [
      `{"v":1,"permission":"net","value":"127.0.0.1:40001"}`,
      `{"v":1,"permission":"net","value":"127.0.0.1:40002"}`,
    ].join("\n"),
  );
  assert.deepEqual(ev.network, ["127.0.0.1:40002"]);
});

Deno.test("a granted database port under bubblewrap: own network namespace, held on a gate until the relay to the socket listens", () => {
  const sock = "/work/run/postgres/socket/.s.PGSQL.40001";
  const connect = [{ port: 40001, socket: sock }];
  const gate = "/work/run/evidence/once-1.gate";
  const l = buildLaunch(
    request({ connect, backend: "bubblewrap" }),
    host({ mkfifo: "/usr/bin/mkfifo" }),
  );
  const argv = l.spawn.command;
  // The shell makes the gate, opens it on fd 4 (and the filter on fd 3).
  assert.deepEqual(argv.slice(0, 7), [
    "/bin/sh",
    "-c",
    '"$1" -m 600 "$2" && exec 3<"$0" 4<>"$2" && shift 2 && exec "$@"',
    "/work/run/evidence/verity-no-process-x86_64.bpf",
    "/usr/bin/mkfifo",
    gate,
    "/usr/bin/bwrap",
  ]);
  assert.ok(argv.includes("--unshare-net"), "nothing but loopback");
  const b = argv.indexOf("--block-fd");
  assert.ok(b > 0 && argv[b + 1] === "4" && b < argv.indexOf("--"));
  assert.ok(!argv.includes(sock), "the socket itself is not bound in");
  assert.deepEqual(l.spawn.portRelay, { gate, connect });
  assert.deepEqual(l.policy?.net, ["127.0.0.1:40001"]);
  // With a run allowance there is no filter: the shell opens the gate only.
  const r = buildLaunch(
    request({
      connect,
      backend: "bubblewrap",
      allow: { sys: [], run: ["git"] },
    }),
    host({
      mkfifo: "/usr/bin/mkfifo",
      allowedPrograms: [{
        name: "git",
        path: "/usr/bin/git",
        real: "/usr/bin/git",
      }],
    }),
  ).spawn.command;
  assert.deepEqual(r.slice(0, 6), [
    "/bin/sh",
    "-c",
    '"$0" -m 600 "$1" && exec 4<>"$1" && shift && exec "$@"',
    "/usr/bin/mkfifo",
    gate,
    "/usr/bin/bwrap",
  ]);
  assert.ok(r.includes("--block-fd"));
  // No mkfifo, a label that is no file name, a bad port: refused.
  assert.throws(
    () => buildLaunch(request({ connect, backend: "bubblewrap" }), host()),
    /mkfifo \(coreutils\) is missing/,
  );
  assert.throws(
    () =>
      buildLaunch(
        request({ connect, backend: "bubblewrap", label: "a/b" }),
        host({ mkfifo: "/usr/bin/mkfifo" }),
      ),
    /launch label "a\/b"/,
  );
  assert.throws(
    () =>
      buildLaunch(
        request({
          connect: [{ port: 70000, socket: sock }],
          backend: "bubblewrap",
        }),
        host({ mkfifo: "/usr/bin/mkfifo" }),
      ),
    /connect port 70000 is not a TCP port/,
  );
  // Without a database port nothing is held.
  const plain = buildLaunch(request({ backend: "bubblewrap" }), host());
  assert.equal(plain.spawn.portRelay, undefined);
  assert.ok(!plain.spawn.command.includes("--block-fd"));
});

Deno.test("bubblewrap: a program's hidden install is bound back, but never a prefix that holds the hidden home", () => {
  const bound = (program: string) => {
    const argv = buildLaunch(
      request({ backend: "bubblewrap", command: [program, "s.py"] }),
      host({ program, programReal: program, programIsDeno: false }),
    ).spawn.command;
    return argv.flatMap((a, i) => a === "--ro-bind-try" ? [argv[i + 1]] : []);
  };
  assert.deepEqual(
    bound("/home/auditor/.pyenv/versions/3.11.7/bin/python3"),
    ["/home/auditor/.pyenv/versions/3.11.7"],
  );
  assert.deepEqual(bound("/home/auditor/bin/python3"), []);
});

/** The destinations bound by `--bind <src> <dst>` in argv, by destination. */
function binds(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  argv.forEach((a, i) => {
    if (a === "--bind") out[argv[i + 2]!] = argv[i + 1]!;
  });
  return out;
}

Deno.test("overlay: bubblewrap's root, /tmp, /run and the home come from the session's layers; the state directory from the host; the run's work directory stays hidden", () => {
  const ov = {
    unshare: "/usr/bin/unshare",
    mount: "/usr/bin/mount",
    dir: "/work/run/evidence/overlays/once-1",
    mounts: ["/", "/proc", "/sys", "/home", "/home/auditor/.mnt"],
  };
  const l = buildLaunch(
    request({ backend: "bubblewrap", hide: ["/work/run"] }),
    host({
      dropTo: { setpriv: "/usr/bin/setpriv", uid: 65534, gid: 65534 },
      overlay: ov,
    }),
  );
  const argv = l.spawn.command;
  assert.deepEqual(argv.slice(0, 5), [
    "/usr/bin/unshare",
    "--mount",
    "--propagation",
    "private",
    "--",
  ]);
  // One shell mounts the overlay, then opens the filter and runs bwrap.
  assert.match(
    argv[7]!,
    /-t overlay .*&& shift 3 && exec 3<"\$1" && shift && exec "\$@"$/,
  );
  assert.deepEqual(argv.slice(8, 13), [
    "/usr/bin/mount",
    `${ov.dir}/upper`,
    `${ov.dir}/work`,
    `${ov.dir}/root`,
    "/work/run/evidence/verity-no-process-x86_64.bpf",
  ]);
  assert.ok(
    !argv.includes("--ro-bind") || argv[argv.indexOf("--ro-bind") + 1] !== "/",
  );
  const b = binds(argv);
  assert.equal(b["/"], `${ov.dir}/root`);
  assert.equal(b["/tmp"], `${ov.dir}/hidden-1`);
  assert.equal(b["/run"], `${ov.dir}/hidden-2`);
  assert.equal(b["/home/auditor"], `${ov.dir}/hidden-3`);
  assert.equal(b["/work/run/state"], "/work/run/state");
  const tmpfs = argv.flatMap((a, i) => a === "--tmpfs" ? [argv[i + 1]] : []);
  assert.deepEqual(tmpfs, ["/work/run"]);
  // The host's other mount points, outermost and not hidden, read-only.
  const ro = argv.flatMap((a, i) => a === "--ro-bind" ? [argv[i + 2]] : []);
  assert.deepEqual(ro, ["/home"]);
  const w = l.writes!;
  assert.ok(w.observed);
  assert.deepEqual(w.layout.layers.map((x) => [x.at, x.lower]), [
    ["/", "/"],
    ["/tmp", null],
    ["/run", null],
    ["/home/auditor", null],
  ]);
  assert.deepEqual(w.layout.owned, ["/repo/fixtures/x"]);
  for (const p of ["/work/run/state", "/work/run", "/work", "/tmp", "/dev"]) {
    assert.ok(w.layout.scaffold.includes(p), p);
  }
});

Deno.test("overlay: the deno backend's system directories stay the host's; its code comes from the overlay; the overlay's own directories are hidden from it", () => {
  const ov = {
    unshare: "/usr/bin/unshare",
    mount: "/usr/bin/mount",
    dir: "/work/run/evidence/overlays/once-1",
    mounts: ["/"],
  };
  const l = buildLaunch(
    request(),
    host({
      confineDeno: true,
      dropTo: { setpriv: "/usr/bin/setpriv", uid: 65534, gid: 65534 },
      overlay: ov,
    }),
  );
  const argv = l.spawn.command;
  assert.ok(argv.includes("--deny-net"), "Deno's flags stay on top");
  const at = (dst: string) => argv[argv.lastIndexOf(dst) - 2];
  assert.equal(at("/usr"), "--ro-bind-try");
  assert.equal(
    binds(argv)["/repo/fixtures/x"],
    `${ov.dir}/root/repo/fixtures/x`,
  );
  assert.equal(binds(argv)["/tmp"], `${ov.dir}/hidden-1`);
  const tmpfs = argv.flatMap((a, i) => a === "--tmpfs" ? [argv[i + 1]] : []);
  assert.ok(tmpfs.includes("/work/run/evidence/overlays"), tmpfs.join(" "));
  assert.ok(
    argv.indexOf("/work/run/evidence/overlays") >
      argv.lastIndexOf("/work/run/evidence"),
    "hidden after the evidence directory is bound",
  );
});

Deno.test("no overlay: the launch is as before and says nothing of writes (prepareLaunch says why)", () => {
  const l = buildLaunch(request({ backend: "bubblewrap" }), host());
  assert.equal(l.writes, undefined);
  const argv = l.spawn.command;
  assert.equal(argv[argv.indexOf("--ro-bind") + 1], "/");
  assert.ok(!argv.some((a) => a.endsWith("unshare")));
});

Deno.test("a program found through a symlink in a hidden directory is shown there as the file it names, under both backends", () => {
  const link = "/home/auditor/.cache/npm-deno/node_modules/deno/deno";
  const real = "/home/auditor/.npm/_npx/7a40/node_modules/deno/deno";
  const facts = { program: link, programReal: real, programIsDeno: true };
  const roBinds = (argv: string[]) =>
    argv.flatMap((a, i) =>
      a === "--ro-bind" ? [`${argv[i + 1]} ${argv[i + 2]}`] : []
    );
  // bubblewrap: the link's place is bound from the real file.
  const bw = buildLaunch(
    request({ backend: "bubblewrap", command: [link, "run", "s.ts"] }),
    host(facts),
  ).spawn.command;
  assert.ok(roBinds(bw).includes(`${real} ${link}`), bw.join(" "));
  // deno backend inside bubblewrap: PATH inside is not the host's, so the
  // program is named by the path it was found at, and that path is shown.
  const dn = buildLaunch(
    request({ command: ["deno", "run", "s.ts"] }),
    host({ ...facts, confineDeno: true }),
  ).spawn.command;
  assert.ok(roBinds(dn).includes(`${real} ${link}`), dn.join(" "));
  const sep = dn.lastIndexOf("--");
  assert.deepEqual(dn.slice(sep + 1, sep + 3), [link, "run"]);
  // A program that is its own real file needs no such bind.
  const plain = buildLaunch(
    request({ backend: "bubblewrap", command: [real, "run", "s.ts"] }),
    host({ ...facts, program: real }),
  ).spawn.command;
  assert.ok(!roBinds(plain).some((b) => b.endsWith(` ${link}`)));
});
