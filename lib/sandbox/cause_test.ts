import assert from "node:assert/strict";
import { sandboxCause } from "./cause.ts";
import type { Launch } from "./types.ts";

const bwrap = (extra: string[] = []): Launch => ({
  backend: "bubblewrap",
  spawn: {
    command: [
      "/bin/sh",
      "-c",
      'exec 3<"$0" && exec "$@"',
      "/e/filter.bpf",
      "/usr/bin/bwrap",
      "--unshare-net",
      "--ro-bind",
      "/",
      "/",
      "--tmpfs",
      "/tmp",
      "--tmpfs",
      "/home/me",
      "--ro-bind",
      "/home/me/proj",
      "/home/me/proj",
      ...extra,
      "--seccomp",
      "3",
      "--",
      "/usr/bin/python3",
      "server.py",
    ],
    env: {},
  },
  auditLog: null,
  seesNetwork: false,
});

const deno: Launch = {
  backend: "deno",
  spawn: { command: ["/usr/bin/deno", "run", "s.ts"], env: {} },
  auditLog: "/e/server.permissions.jsonl",
  seesNetwork: true,
  policy: {
    writable: [],
    readable: [],
    env: [],
    net: ["127.0.0.1:8123"],
  },
};

Deno.test("sandboxCause names what the sandbox refused, with what would change it", () => {
  const cases: [Launch, string, string | null, RegExp][] = [
    [
      bwrap(),
      "/root/.pyenv/libexec/pyenv: fork: Operation not permitted",
      null,
      /^the sandbox refused a new process \(fork\).*allow\.run.*--no-sandbox/,
    ],
    [
      bwrap(),
      "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
      null,
      /^the sandbox has no network: an audit runs offline/,
    ],
    [
      bwrap(),
      "npm ERR! code EAI_AGAIN",
      null,
      /^the sandbox has no network/,
    ],
    [
      bwrap(),
      "FileNotFoundError: [Errno 2] No such file or directory: '/home/me/.config/x.json'",
      null,
      /^\/home\/me\/\.config\/x\.json is hidden in the sandbox \(\/home\/me is empty there\): declare it in allow\.read/,
    ],
    [
      bwrap(["--", "/usr/bin/setpriv", "--reuid=65534"]),
      "PermissionError: [Errno 13] Permission denied: '/srv/data/db.sqlite'",
      null,
      /^the server runs as nobody .* may not read \/srv\/data\/db\.sqlite: make it readable by others/,
    ],
    [
      deno,
      'error: Uncaught NotCapable: Requires sys access to "hostname", run again with the --allow-sys flag',
      null,
      /^the sandbox refused sys access to hostname: declare the name in allow\.sys/,
    ],
    [
      deno,
      'error: npm package not found in cache: "left-pad", --cached-only is specified.',
      null,
      /^a package is missing from the Deno cache .*verity prepare/,
    ],
    [
      deno,
      "Error: connect failed",
      '{"v":1,"datetime":"x","permission":"net","value":"127.0.0.1:8123"}\n{"v":1,"datetime":"x","permission":"net","value":"api.example.com:443"}\n',
      /^the sandbox has no network \(it tried api\.example\.com:443\)/,
    ],
  ];
  for (const [launch, stderr, log, want] of cases) {
    assert.match(sandboxCause(launch, stderr, log) ?? "(null)", want, stderr);
  }
});

Deno.test("sandboxCause says nothing when the sandbox is not to blame", () => {
  // A server's own error, a missing file that is not hidden, a granted
  // address, and no sandbox at all.
  assert.equal(sandboxCause(bwrap(), "ValueError: bad config", null), null);
  assert.equal(
    sandboxCause(
      bwrap(),
      "FileNotFoundError: [Errno 2] No such file or directory: '/home/me/proj/missing.json'",
      null,
    ),
    null,
  );
  assert.equal(
    sandboxCause(
      deno,
      "boom",
      '{"v":1,"datetime":"x","permission":"net","value":"127.0.0.1:8123"}\n',
    ),
    null,
  );
  assert.equal(
    sandboxCause(
      { ...bwrap(), backend: "none" },
      "fork: Operation not permitted",
      null,
    ),
    null,
  );
});
