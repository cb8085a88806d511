import assert from "node:assert/strict";
import { runVerity } from "./_verity.ts";

const DATA = new URL("./data/", import.meta.url).pathname;

async function verity(...args: string[]) {
  return await runVerity(["verify-reset", ...args]);
}

Deno.test("verify-reset: a reproducible reset exits 0 and shows the seeded state", async () => {
  const r = await verity(`${DATA}items`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /reset: verified/);
  assert.match(r.stdout, /sqlite state\.db:items\s+business\s+2 records/);
  assert.match(r.stdout, /coverage: complete/);
});

Deno.test("verify-reset: a random seed exits 1 and names the differing record", async () => {
  const r = await verity(`${DATA}random-seed`);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /reset: NOT verified/);
  assert.match(
    r.stdout,
    /business: changed state\.db:sessions \[1\]: token "[0-9A-F]{16}" -> "[0-9A-F]{16}"/,
  );
  const json = await verity(`${DATA}random-seed`, "--json");
  assert.equal(json.code, 1);
  const v = JSON.parse(json.stdout);
  assert.equal(v.verified, false);
  assert.deepEqual(
    v.delta.business.changed[0].fields.map((f: { field: string }) => f.field),
    ["token"],
  );
});

Deno.test("verify-reset: a declared mask makes the same random seed verify", async () => {
  const r = await verity(`${DATA}random-seed-masked`, "--json");
  assert.equal(r.code, 0, r.stderr);
  const v = JSON.parse(r.stdout);
  assert.equal(v.verified, true);
  assert.equal(v.digests[0], v.digests[1]);
});

Deno.test("verify-reset: an invalid definition exits 2 with one line naming the file and key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/fixture.toml`,
      '[fixture]\nname = "x"\ncommand = ["y"]\ncolour = "red"\n[state]\nlocations = []\n',
    );
    const r = await verity(dir);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr.trim(),
      `${dir}/fixture.toml: fixture.colour: unknown key (allowed here: name, command, env, timeouts, sandbox, read, cwd, allow, transport, url)`,
    );
    const usage = await verity();
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /expected exactly one definition/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
