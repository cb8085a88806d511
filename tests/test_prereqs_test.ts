import assert from "node:assert/strict";
import { installCommand, NEEDS, OPTIONAL } from "../scripts/test_prereqs.ts";

const SCRIPT = new URL("../scripts/test_prereqs.ts", import.meta.url).pathname;

Deno.test("test prerequisites: the install command names every package", () => {
  assert.equal(
    installCommand(["bubblewrap", "postgresql"], false),
    "sudo apt-get update && sudo apt-get install -y bubblewrap postgresql",
  );
  assert.equal(
    installCommand(["git"], true),
    "apt-get update && apt-get install -y git",
  );
  assert.deepEqual(NEEDS.map((n) => n.pkg), [
    "bubblewrap",
    "postgresql",
    "python3",
    "git",
    "chromium",
  ]);
  assert.deepEqual(OPTIONAL.map((n) => n.pkg), ["slurm-wlm"]);
});

Deno.test("test prerequisites: missing programs stop at once with the exact install command", async () => {
  const empty = await Deno.makeTempDir();
  try {
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-run",
        "--allow-read",
        "--allow-env",
        "--allow-sys=uid",
        SCRIPT,
        "--check",
      ],
      env: { PATH: empty },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 1, err);
    assert.match(
      err,
      /missing bwrap, .*python3, git, chromium \(the HTML report's browser test\); install them first: (sudo )?apt-get update && (sudo )?apt-get install -y bubblewrap .*python3 git chromium\n$/,
    );
    assert.equal(err.trim().split("\n").length, 1, err);
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("test prerequisites: this machine has them (exit 0)", async () => {
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-run",
      "--allow-read",
      "--allow-env",
      "--allow-sys=uid",
      SCRIPT,
      "--check",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
});
