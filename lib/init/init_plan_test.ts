import assert from "node:assert/strict";
import { planInit } from "./init_plan.ts";

Deno.test("init reads `deno run` value flags with the sandbox's list (--min-dep-age takes a value)", () => {
  for (const flag of ["--min-dep-age", "--node-modules-linker", "--config"]) {
    const plan = planInit({
      command: ["deno", "run", flag, "3", "srv/server.ts"],
      env: {},
      cwd: "/work",
      home: null,
      pathKinds: { "/work/srv/server.ts": "file" },
    });
    assert.equal(plan.kind, "deno", flag);
    assert.deepEqual(
      plan.command,
      ["{deno}", "run", flag, "3", "/work/srv/server.ts"],
      flag,
    );
  }
});
