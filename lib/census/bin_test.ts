import assert from "node:assert/strict";
import { chooseBin } from "./bin.ts";
import { InputError } from "../errors.ts";

Deno.test("chooseBin: the named bin, the only one, the package's own name, else the first", () => {
  const two = { bin: { "a-cli": "./a.js", "server": "./s.js" } };
  assert.deepEqual(chooseBin(two, "@x/server", "a-cli"), {
    bin: "a-cli",
    script: "a.js",
  });
  assert.deepEqual(chooseBin(two, "@x/server", null), {
    bin: "server",
    script: "s.js",
  });
  assert.deepEqual(chooseBin(two, "other", null), {
    bin: "a-cli",
    script: "a.js",
  });
  assert.deepEqual(chooseBin({ bin: "dist/cli.js" }, "@x/tool", null), {
    bin: "tool",
    script: "dist/cli.js",
  });
  assert.deepEqual(chooseBin({ main: "lib/index.js" }, "p", null), {
    bin: null,
    script: "lib/index.js",
  });
  assert.deepEqual(chooseBin({}, "p", null), { bin: null, script: "index.js" });
  assert.throws(
    () => chooseBin(two, "@x/server", "nope"),
    (e: unknown) =>
      e instanceof InputError &&
      /"nope" is not a bin of @x\/server \(its bins: a-cli, server\)/.test(
        e.message,
      ),
  );
});
