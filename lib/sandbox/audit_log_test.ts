/**
 * Deno's permission audit log as evidence: parsed tolerantly, grouped into
 * attempts, refused ones told from granted ones, call attempts told from
 * what every session does anyway.
 */
import assert from "node:assert/strict";
import {
  classifyEvents,
  launchEvidence,
  networkAttempts,
  parseAuditLog,
  readAuditLog,
  refusedAttempts,
} from "./audit_log.ts";
import type { Launch, LaunchPolicy } from "./types.ts";

const LOG = [
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"env","value":"VERITY_STATE_DIR"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"read","value":"/state/state.db"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"net","value":"127.0.0.1:45678"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"net","value":"127.0.0.1:45678"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"write","value":"/home/me/.ssh/x"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"env","value":"AWS_SECRET_ACCESS_KEY"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"env","value":null}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"read","value":"/proc/4242/environ"}`,
  `{"v":1,"datetime":"2026-11-29T23:49:03Z","permission":"write","value":"/state/state.db"}`,
].join("\n") + "\n";

const POLICY: LaunchPolicy = {
  writable: ["/state"],
  readable: ["/def", "/state"],
  env: ["HOME", "PATH", "VERITY_STATE_DIR"],
};

Deno.test("audit log: every check in order, with null for 'all'", () => {
  const events = readAuditLog(LOG);
  assert.equal(events.length, 9);
  assert.deepEqual(events[2], { permission: "net", value: "127.0.0.1:45678" });
  assert.deepEqual(events[6], { permission: "env", value: null });
});

Deno.test("audit log: a line cut short by a kill is a problem, not a crash", () => {
  const log = parseAuditLog(
    LOG + `{"v":1,"datetime":"2026-11-29T23:49:04Z","permission":"ne`,
  );
  assert.equal(log.events.length, 9);
  assert.equal(log.problems.length, 1);
  assert.match(log.problems[0]!, /^line 10: not JSON/);
  assert.deepEqual(
    parseAuditLog(`[1]\n{"value":"x"}\n{"permission":"net","value":5}\n`)
      .problems.length,
    3,
  );
  assert.deepEqual(parseAuditLog("").events, []);
});

Deno.test("attempts: grouped, counted, and refused unless the launch grants them", () => {
  const attempts = classifyEvents(readAuditLog(LOG), POLICY);
  const net = attempts.find((a) => a.permission === "net")!;
  assert.deepEqual(net, {
    permission: "net",
    value: "127.0.0.1:45678",
    granted: false,
    count: 2,
  });
  const refused = refusedAttempts(readAuditLog(LOG), POLICY).map((a) =>
    `${a.permission} ${a.value}`
  );
  assert.deepEqual(refused, [
    "env null",
    "env AWS_SECRET_ACCESS_KEY",
    "net 127.0.0.1:45678",
    "read /proc/4242/environ",
    "write /home/me/.ssh/x",
  ]);
});

Deno.test("attempts: a path is inside a granted directory only below it, not beside it", () => {
  const a = classifyEvents([
    { permission: "write", value: "/state" },
    { permission: "write", value: "/state/sub/file" },
    { permission: "write", value: "/state-other/file" },
  ], POLICY);
  assert.deepEqual(a.map((x) => [x.value, x.granted]), [
    ["/state", true],
    ["/state-other/file", false],
    ["/state/sub/file", true],
  ]);
});

Deno.test("network attempts: unique destinations", () => {
  assert.deepEqual(
    networkAttempts([
      { permission: "net", value: "b:1" },
      { permission: "net", value: "a:2" },
      { permission: "net", value: "b:1" },
      { permission: "env", value: "HOME" },
    ]),
    ["a:2", "b:1"],
  );
});

Deno.test("launch evidence: backend, exact command, refused attempts; none for backends that cannot see", () => {
  const deno: Launch = {
    spawn: {
      command: ["deno", "run", "--deny-net", "s.ts"],
      env: { HOME: "/state" },
      cwd: "/def",
    },
    backend: "deno",
    auditLog: "/ev/once.permissions.jsonl",
    seesNetwork: true,
    policy: POLICY,
    observes: ["net", "read", "write", "env"],
  };
  const ev = launchEvidence(deno, LOG);
  assert.equal(ev.backend, "deno");
  assert.deepEqual(ev.command, deno.spawn.command);
  assert.equal(ev.attempts?.length, 5);
  assert.deepEqual(ev.network, ["127.0.0.1:45678"]);
  assert.deepEqual(launchEvidence(deno, null).problems, [
    "audit log /ev/once.permissions.jsonl is missing",
  ]);
  const bw = launchEvidence({
    ...deno,
    backend: "bubblewrap",
    auditLog: null,
    seesNetwork: false,
    observes: [],
  }, null);
  assert.equal(bw.attempts, null);
  assert.equal(bw.network, null);
  assert.deepEqual(bw.problems, []);
});
