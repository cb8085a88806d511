/**
 * The command lines users already have, pasted after `--` as a new user
 * would: a version manager's shim that forks before it execs, a virtualenv
 * under a 0700 home, `npx -y` of real published servers (and `npm exec`,
 * `pnpm dlx`, `bunx`), uvx / pipx / docker refused at once, and a start the
 * sandbox broke named with its cause. The npx tests need the npm registry
 * and are ignored (and say so) when it cannot be reached.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "smol-toml";
import { registryReachable, runVerity, type VerityOptions } from "./_verity.ts";
import { prepareLaunch, resolvePython } from "../lib/sandbox/sandbox.ts";
import { parsePrepared } from "../lib/prepare/prepared.ts";
import { cacheLayout, preparedKey } from "../lib/prepare/local.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const SERVER_PY = join(REPO, "fixtures/native-python/server.py");
/** The interpreter every shim and virtualenv below is made from. */
const PYTHON = await resolvePython();
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("HOME")}/.cache/deno`;

/**
 * A 0700 directory that is neither /tmp (hidden by the sandbox anyway) nor
 * $HOME: what a uid-65534 server cannot enter unless the sandbox binds
 * exactly what it needs.
 */
async function closedHome(): Promise<string> {
  const dir = await Deno.makeTempDir({
    dir: "/var/tmp",
    prefix: "verity-home-",
  });
  await Deno.chmod(dir, 0o700);
  return dir;
}

/** verity with $HOME elsewhere (the closed home is not $HOME) and the Deno cache kept. */
async function verity(args: string[], options: VerityOptions = {}) {
  const home = await Deno.makeTempDir({ prefix: "verity-other-home-" });
  try {
    return await runVerity(args, {
      ...options,
      env: { HOME: home, DENO_DIR, ...(options.env ?? {}) },
    });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped" }).output();
  assert.ok(out.success, `${cmd} ${args.join(" ")}`);
  return new TextDecoder().decode(out.stdout);
}

/** pyenv's shim, word for word, for a root of our own. */
function pyenvShim(root: string): string {
  return `#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="\${0##*/}"

export PYENV_ROOT="${root}"
exec "${root}/libexec/pyenv" exec "$program" "$@"
`;
}

Deno.test({
  name:
    "a pyenv shim that forks before it execs runs as the real interpreter, installed in a 0700 home",
  sanitizeResources: false,
  async fn() {
    const home = await closedHome();
    try {
      const root = join(home, ".pyenv");
      // The installed "version": the interpreter copied into the closed home.
      await run(PYTHON, [
        "-m",
        "venv",
        "--without-pip",
        "--copies",
        join(root, "versions/v"),
      ]);
      await Deno.mkdir(join(root, "shims"), { recursive: true });
      await Deno.mkdir(join(root, "libexec"));
      // `pyenv exec` forks (a subshell that leaves a marker) before it execs;
      // `pyenv which` only prints. python9 is a shim of no installed version.
      await Deno.writeTextFile(
        join(root, "libexec/pyenv"),
        `#!/usr/bin/env bash
cmd="$1"; shift
case "$cmd" in
  which)
    if [ "$1" = python9 ]; then echo "pyenv: python9: command not found" >&2; exit 127; fi
    echo "$PYENV_ROOT/versions/v/bin/$1" ;;
  exec) prog="$1"; shift; ( echo forked > "$PYENV_ROOT/forked" ); exec "$PYENV_ROOT/versions/v/bin/$prog" "$@" ;;
esac
`,
        { mode: 0o755 },
      );
      for (const name of ["python3", "python9"]) {
        await Deno.writeTextFile(join(root, "shims", name), pyenvShim(root), {
          mode: 0o755,
        });
      }
      const srv = join(home, "srv");
      await Deno.mkdir(srv);
      await Deno.copyFile(SERVER_PY, join(srv, "server.py"));
      const env = { PATH: `${root}/shims:${Deno.env.get("PATH")}` };

      const r = await verity(["tools", "--", "python3", "server.py"], {
        cwd: srv,
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^get_item\s+TRUE/m);
      assert.match(r.stdout, /5 tools on 1 page/);
      assert.equal(
        await Deno.stat(join(root, "forked")).catch(() => null),
        null,
        "the sandboxed run never went through the shim",
      );
      // The control: as given, the shim does fork.
      const plain = await verity([
        "tools",
        "--no-sandbox",
        "--",
        "python3",
        "server.py",
      ], { cwd: srv, env });
      assert.equal(plain.code, 0, plain.stderr);
      assert.ok((await Deno.stat(join(root, "forked"))).isFile);

      const none = await verity(["tools", "--", "python9", "server.py"], {
        cwd: srv,
        env,
      });
      assert.equal(none.code, 2);
      assert.match(
        none.stderr,
        /python9 is a pyenv shim .*did not name the real program: pyenv: python9: command not found; give the interpreter's path instead/,
      );
      assert.equal(none.stderr.trim().split("\n").length, 1, none.stderr);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a virtualenv under a 0700 home: its program starts sandboxed, inside the virtualenv, with nothing declared",
  sanitizeResources: false,
  async fn() {
    const home = await closedHome();
    try {
      const proj = join(home, "proj");
      const venv = join(proj, ".venv");
      await Deno.mkdir(proj);
      await Deno.copyFile(SERVER_PY, join(proj, "server.py"));
      await run(PYTHON, ["-m", "venv", "--without-pip", venv]);
      const program = join(venv, "bin", "python");

      const r = await verity(["tools", "--", program, "server.py"], {
        cwd: proj,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /5 tools on 1 page/);

      // It runs in the virtualenv (its site-packages), not the base interpreter.
      const scratch = await Deno.makeTempDir({ prefix: "verity-venv-" });
      try {
        await Deno.mkdir(join(scratch, "state"));
        const launch = prepareLaunch({
          command: [program, "-c", "import sys; print(sys.prefix)"],
          env: {},
          stateDir: join(scratch, "state"),
          definitionDir: proj,
          readPaths: [],
          backend: "bubblewrap",
          evidenceDir: join(scratch, "evidence"),
          label: "probe",
        });
        const [cmd, ...args] = launch.spawn.command;
        const out = await new Deno.Command(cmd!, {
          args,
          env: launch.spawn.env,
          clearEnv: true,
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.ok(out.success, new TextDecoder().decode(out.stderr));
        assert.equal(
          new TextDecoder().decode(out.stdout).trim(),
          await Deno.realPath(venv),
        );
      } finally {
        await Deno.remove(scratch, { recursive: true });
      }

      // init needs no allow.read for it any more: the launch binds it.
      const init = await verity(
        ["init", join(home, "t"), "--", program, join(proj, "server.py")],
        { cwd: home },
      );
      assert.equal(init.code, 0, init.stderr);
      const toml = await Deno.readTextFile(join(home, "t/target.toml"));
      assert.doesNotMatch(toml, /^allow = /m);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a start the sandbox broke is named at once: a fork refused, the network denied, a path hidden",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "verity-cause-" });
    await Deno.chmod(dir, 0o755); // as root the server runs as uid 65534
    try {
      await Deno.copyFile(SERVER_PY, join(dir, "server.py"));
      await Deno.writeTextFile(
        join(dir, "launch.sh"),
        `#!/bin/sh\n( : )\nexec ${PYTHON} server.py\n`,
        { mode: 0o755 },
      );
      await Deno.writeTextFile(
        join(dir, "net.py"),
        'import urllib.request\nurllib.request.urlopen("http://example.com", timeout=20)\n',
      );
      await Deno.writeTextFile(
        join(dir, "hidden.py"),
        'open("/run/verity-hidden-config.json")\n',
      );
      const cases: [string[], RegExp][] = [
        [
          ["./launch.sh"],
          /fork.*; the sandbox refused a new process \(fork\): the command is a launcher .*or pass --no-sandbox/,
        ],
        [
          [PYTHON, "net.py"],
          /; the sandbox has no network: an audit runs offline; .*npx <package>@<version>/,
        ],
        [
          [PYTHON, "hidden.py"],
          /; \/run\/verity-hidden-config\.json is hidden in the sandbox \(\/run is empty there\): declare it in allow\.read/,
        ],
      ];
      for (const [command, cause] of cases) {
        const r = await verity(["tools", "--timeout", "60", "--", ...command], {
          cwd: dir,
        });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, cause);
        assert.ok(r.ms < 30_000, `named at once, not at the timeout: ${r.ms}`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("uvx, pipx run, docker run and npx of a non-npm source are refused at once, saying what to do instead", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["uvx", "mcp-server-time"],
      /uvx fetches mcp-server-time from PyPI .*`uv tool install mcp-server-time` or `pipx install mcp-server-time`/,
    ],
    [
      ["pipx", "run", "mcp-server-time"],
      /pipx run fetches mcp-server-time from PyPI .*pass --no-sandbox/,
    ],
    [
      ["docker", "run", "-i", "--rm", "mcp/time"],
      /docker run starts a container through a daemon and an image registry/,
    ],
    [
      ["npx", "-y", "github:someone/server"],
      /npx here names no npm package verity can pin .*npx -y <package>\[@<version>\]/,
    ],
  ];
  for (const [command, why] of cases) {
    const r = await runVerity(["tools", "--", ...command]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, why);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.ok(r.ms < 20_000, `${r.ms} ms`);
  }
});

// ---- npx: the npm registry -------------------------------------------------

const registry = await registryReachable();

Deno.test({
  name:
    "npx -y of a published server: pinned, fetched once into .verity, then listed sandboxed and offline (npm exec, pnpm dlx, bunx too)",
  ignore: !registry,
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-npx-" });
    try {
      const pkg = "@modelcontextprotocol/server-memory";
      const first = await runVerity(["tools", "--", "npx", "-y", pkg], {
        cwd,
      });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /^read_graph\s+TRUE/m);
      assert.match(first.stdout, /9 tools on 1 page/);
      const pinned =
        /pinned @modelcontextprotocol\/server-memory@latest to @modelcontextprotocol\/server-memory@(\S+) /
          .exec(first.stderr);
      assert.ok(pinned, first.stderr);
      const version = pinned[1]!;
      assert.match(
        first.stderr,
        new RegExp(
          `fetching @modelcontextprotocol/server-memory@${version} \\(sha512-[A-Za-z0-9+/]{86}==\\) into \\.verity`,
        ),
      );
      const layout = cacheLayout({ root: join(cwd, ".verity") });
      const prepared = parsePrepared(
        await Deno.readTextFile(layout.preparedFile),
      );
      const key = preparedKey(
        layout,
        join(layout.root, "npx", `${pkg}@${version}`),
      );
      assert.equal(key, `.verity/npx/${pkg}@${version}`);
      assert.equal(prepared.targets[key]?.version, version);

      for (
        const runner of [
          ["npx", "-y"],
          ["npm", "exec", "--yes", "--"],
          ["pnpm", "dlx"],
          ["bunx"],
        ]
      ) {
        const again = await runVerity(
          [
            "tools",
            "--offline",
            "--json",
            "--",
            ...runner,
            `${pkg}@${version}`,
          ],
          { cwd },
        );
        assert.equal(again.code, 0, `${runner.join(" ")}: ${again.stderr}`);
        assert.equal(JSON.parse(again.stdout).tools.length, 9);
        assert.doesNotMatch(again.stderr, /fetching|pinned/);
      }
      const refusals: [string[], RegExp][] = [
        [
          [pkg],
          /--offline: @modelcontextprotocol\/server-memory@latest names no exact version.*in the cache: /,
        ],
        [
          [`${pkg}@0.0.1`],
          /--offline: @modelcontextprotocol\/server-memory@0\.0\.1 is not in verity's cache \(\.verity\)/,
        ],
      ];
      for (const [spec, why] of refusals) {
        const r = await runVerity(
          ["tools", "--offline", "--", "npx", "-y", ...spec],
          { cwd },
        );
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, why);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      }
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "capture -- npx -y @modelcontextprotocol/server-filesystem@2026.1.14 <dir> records its 14 tools (the directory named on the command line is readable)",
  ignore: !registry,
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-npx-" });
    const data = await Deno.makeTempDir({ prefix: "verity-npx-data-" });
    try {
      const r = await runVerity([
        "capture",
        "--out",
        "fs.json",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem@2026.1.14",
        data,
      ], { cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /fetching @modelcontextprotocol\/server-filesystem@2026\.1\.14 \(sha512-bGAfu3fWRVeF10NxvPhFBDlRen6ExSx6YkKJzoVgQMNrbdVVV4okfGGQ3KBRu9ygXYfw5\/N9ermHAJXA0uys\+g==\)/,
      );
      const manifest = JSON.parse(
        await Deno.readTextFile(join(cwd, "fs.json")),
      );
      assert.equal(manifest.tools.length, 14);
      assert.equal(manifest.server.version, "0.2.0");
    } finally {
      await Deno.remove(cwd, { recursive: true });
      await Deno.remove(data, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "init --learn -- npx: the learned target is portable ([source] pinned, its own lock, no machine path); moved, prepared and run, it gives the learning run's verdicts",
  ignore: !registry,
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-learn-npx-" });
    try {
      const pkg = "@modelcontextprotocol/server-memory@2026.8.31";
      const env = ["--env", "MEMORY_FILE_PATH={state}/memory.jsonl"];
      const init = await runVerity(
        ["init", "t", "--learn", ...env, "--", "npx", "-y", pkg],
        { cwd },
      );
      assert.equal(init.code, 0, init.stderr);
      const text = await Deno.readTextFile(join(cwd, "t/target.toml"));
      for (const machine of [cwd, "/root", "/tmp", ".verity", REPO]) {
        assert.ok(!text.includes(machine), `${machine} in:\n${text}`);
      }
      const doc = parse(text) as {
        target: { command: string[] };
        source: Record<string, string>;
        adapters: { seed: string }[];
      };
      assert.deepEqual(doc.target.command, [
        "{deno}",
        "run",
        "--no-config",
        "--frozen",
        "--lock={target}/deno.lock",
        `npm:${pkg}`,
      ]);
      assert.equal(doc.source.package, "@modelcontextprotocol/server-memory");
      assert.equal(doc.source.version, "2026.8.31");
      assert.match(doc.source.integrity!, /^sha512-[A-Za-z0-9+/]{86}==$/);
      // Seeds relative to the target directory, and there.
      for (const a of doc.adapters) {
        assert.ok(!a.seed.startsWith("/"), a.seed);
        await Deno.stat(join(cwd, "t", a.seed));
      }
      // On its own: moved elsewhere, prepared (the pin fetched again and
      // checked), then audited offline from that.
      await Deno.rename(join(cwd, "t"), join(cwd, "moved"));
      const prep = await runVerity(["prepare", "moved"], { cwd });
      assert.equal(prep.code, 0, prep.stderr);
      const only = [
        "--concurrent-attempts",
        "1",
        "--tool",
        "read_graph",
        "--tool",
        "create_entities",
        "--tool",
        "delete_entities",
      ];
      const verdicts = async (args: string[]) => {
        const r = await runVerity(
          ["run", "--audit", "--json", "--runs-dir", "runs", ...only, ...args],
          { cwd },
        );
        assert.equal(r.code, 0, r.stderr.slice(-800));
        const report = JSON.parse(r.stdout);
        assert.equal(report.provenance.target.pinned, true);
        const verify = await runVerity([
          "report",
          "verify",
          join(cwd, "runs", report.runId, "report.json"),
        ], { cwd });
        assert.equal(verify.code, 0, verify.stdout + verify.stderr);
        // Concurrent overlap is the machine's schedule (one attempt here,
        // to keep the test short), not the target's: left out.
        return Object.fromEntries(
          report.verdicts.filter((v: { test: string }) =>
            v.test !== "concurrent_idempotence"
          ).map((
            v: {
              tool: string;
              variant: string | null;
              test: string;
              outcome: string;
            },
          ) => [
            `${v.tool}${v.variant ? `[${v.variant}]` : ""} ${v.test}`,
            v.outcome,
          ]),
        );
      };
      const learning = await verdicts([...env, "--", "npx", "-y", pkg]);
      const again = await verdicts(["moved"]);
      assert.deepEqual(again, learning);
      assert.equal(learning["read_graph read_only"], "PASS");
      assert.equal(learning["create_entities[new] destructive"], "PASS");
      assert.ok(Object.keys(learning).length >= 16, JSON.stringify(learning));
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});
