/**
 * Hostile definitions: each is bad input, refused with a DefinitionError
 * (exit 2) that names the file and the key, in one short line.
 */
import assert from "node:assert/strict";
import { DefinitionError } from "../errors.ts";
import { loadDefinition } from "./load.ts";

const BASE = (extra = "", adapter = 'seed = "seed.sql"', tool = "") => `
[fixture]
name = "t"
command = ["{deno}", "run", "server.ts"]
${extra}

[state]
locations = ["sqlite:state.db"]

[[adapters]]
kind = "sqlite"
label = "state.db"
${adapter}

[[tools]]
name = "put"
${tool}
`;

async function refused(
  toml: string | Uint8Array,
  keyPath: string,
  message: RegExp,
  prepare: (dir: string) => Promise<void> = async () => {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "verity-hostile-def-" });
  try {
    const file = `${dir}/fixture.toml`;
    if (typeof toml === "string") await Deno.writeTextFile(file, toml);
    else await Deno.writeFile(file, toml);
    await Deno.writeTextFile(`${dir}/seed.sql`, "CREATE TABLE t (a);");
    await prepare(dir);
    await assert.rejects(() => loadDefinition(dir), (e: unknown) => {
      assert.ok(e instanceof DefinitionError, String(e));
      assert.equal(e.file, file);
      assert.equal(e.keyPath, keyPath);
      assert.match(e.message, message);
      assert.ok(e.message.length < 400, `short: ${e.message.length} chars`);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("hostile definition: a seed outside the definition directory (.., absolute, symlink)", async () => {
  await refused(
    BASE("", 'seed = "../outside.sql"'),
    "adapters[0].seed",
    /must not contain ".."/,
  );
  await refused(
    BASE("", 'seed = "/etc/passwd"'),
    "adapters[0].seed",
    /must be relative/,
  );
  const outside = await Deno.makeTempFile({ suffix: ".sql" });
  try {
    await Deno.chmod(outside, 0o600);
    await refused(
      BASE("", 'seed = "linked.sql"'),
      "adapters[0].seed",
      /resolves outside the definition's directory/,
      (dir) => Deno.symlink(outside, `${dir}/linked.sql`),
    );
  } finally {
    await Deno.remove(outside);
  }
});

Deno.test("hostile definition: bytes that are not UTF-8 are refused, not replaced", async () => {
  const text = new TextEncoder().encode(BASE());
  const bad = new Uint8Array([
    ...text.subarray(0, 20),
    0xff,
    0xfe,
    ...text.subarray(20),
  ]);
  await refused(bad, "", /not valid UTF-8 \(at or after byte 20\)/);
});

Deno.test("hostile definition: a timeout beyond an hour (1e10 s) is refused", async () => {
  await refused(
    BASE("timeouts = { call = 1e10 }"),
    "fixture.timeouts.call",
    /up to 3600, got 10000000000/,
  );
});

Deno.test("hostile definition: env may not take over DENO_DIR, HOME or VERITY_STATE_DIR", async () => {
  await refused(
    BASE('env = { DENO_DIR = "/tmp/x" }'),
    "fixture.env.DENO_DIR",
    /set by verity's sandbox/,
  );
  await refused(
    BASE('env = { HOME = "/root" }'),
    "fixture.env.HOME",
    /inside the state directory/,
  );
  await refused(
    BASE('env = { VERITY_STATE_DIR = "/tmp" }'),
    "fixture.env.VERITY_STATE_DIR",
    /declare it as "\{state\}"/,
  );
});

Deno.test("hostile definition: a 10 MB name is refused in a short line", async () => {
  await refused(
    BASE().replace('name = "t"', `name = "${"x".repeat(10 * 1024 * 1024)}"`),
    "fixture.name",
    /at most 100 characters, got 10485760/,
  );
});

Deno.test("hostile definition: nan and inf tool arguments are refused, not sent as null", async () => {
  await refused(
    BASE("", 'seed = "seed.sql"', "arguments = { x = nan }"),
    "tools[0].arguments.x",
    /NaN cannot be sent as JSON/,
  );
  await refused(
    BASE("", 'seed = "seed.sql"', "arguments = { x = [1, -inf] }"),
    "tools[0].arguments.x[1]",
    /-Infinity cannot be sent as JSON/,
  );
});
