import assert from "node:assert/strict";
import { privilegeUse, sliceLog } from "./privilege.ts";

const policy = {
  writable: ["/s"],
  readable: ["/s", "/code"],
  env: ["HOME"],
};
const line = (permission: string, value: string | null) =>
  JSON.stringify({
    v: 1,
    datetime: "2026-11-30T00:00:00Z",
    permission,
    value,
  }) +
  "\n";

Deno.test("privilege use: each call's slice of the log, sorted by kind, relative to the state, allowed or refused", () => {
  const startup = line("read", "/code/package.json") + line("env", "HOME");
  const call1 = line("read", "/s/a.json") + line("write", "/s/a.json") +
    line("write", "/s/a.json") + line("env", "AWS_SECRET_ACCESS_KEY");
  const call2 = line("net", "example.com") + line("read", "/etc/shadow") +
    line("sys", "hostname") + line("write", "/code/cache");
  const bytes = new TextEncoder().encode(startup + call1 + call2);
  const a = startup.length;
  const b = a + call1.length;
  const [one, two] = sliceLog(bytes, [
    { from: a, to: b },
    { from: b, to: bytes.length },
  ]).map((t) => privilegeUse(t, { backend: "deno", policy }, "/s"));
  assert.deepEqual(one!.reads, [
    { path: "{state}/a.json", in_state: true, allowed: true, count: 1 },
  ]);
  assert.deepEqual(one!.writes, [
    { path: "{state}/a.json", in_state: true, allowed: true, count: 2 },
  ]);
  assert.deepEqual(one!.env, [
    {
      permission: "env",
      value: "AWS_SECRET_ACCESS_KEY",
      allowed: false,
      count: 1,
    },
  ]);
  // Start-up checks belong to no call.
  assert.ok(!one!.reads.some((r) => r.path === "/code/package.json"));
  assert.deepEqual(two!.net.map((n) => [n.value, n.allowed]), [[
    "example.com",
    false,
  ]]);
  assert.deepEqual(two!.reads.map((r) => [r.path, r.in_state, r.allowed]), [[
    "/etc/shadow",
    false,
    false,
  ]]);
  assert.deepEqual(two!.writes.map((w) => [w.path, w.allowed]), [[
    "/code/cache",
    false,
  ]]);
  assert.deepEqual(two!.other.map((o) => o.permission), ["sys"]);
  assert.match(two!.unseen[0]!, /subprocess/);
});

Deno.test("privilege use: a backend without a log says what it cannot see", () => {
  const u = privilegeUse(null, { backend: "bubblewrap", policy }, "/s");
  assert.equal(u.seen, false);
  assert.deepEqual([u.reads, u.writes, u.env, u.net, u.other], [
    [],
    [],
    [],
    [],
    [],
  ]);
  assert.match(u.unseen[0]!, /bubblewrap confines .* but records no attempt/);
  assert.match(
    privilegeUse(null, { backend: "none" }, null).unseen[0]!,
    /no sandbox/,
  );
  // A line cut short by a kill is said, not a crash.
  const cut = privilegeUse(
    '{"permission":"wri',
    { backend: "deno", policy },
    "/s",
  );
  assert.match(cut.unseen.join(" "), /unreadable log line/);
});
