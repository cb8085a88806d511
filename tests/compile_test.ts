import assert from "node:assert/strict";
import { compileArgs, INCLUDES } from "../scripts/compile.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("compile: the arguments embed the worker and the overlap-timer entry", async () => {
  const args = compileArgs("dist/verity", "aarch64-apple-darwin");
  assert.deepEqual(args.slice(0, 4), [
    "compile",
    "--allow-all",
    "--unstable-worker-options",
    "--no-check",
  ]);
  for (const f of INCLUDES) {
    const i = args.indexOf(f);
    assert.ok(i > 0 && args[i - 1] === "--include", `--include ${f}`);
    assert.ok((await Deno.stat(`${ROOT}${f}`)).isFile, `${f} exists`);
  }
  assert.deepEqual(args.slice(-5), [
    "--output",
    "dist/verity",
    "--target",
    "aarch64-apple-darwin",
    "main.ts",
  ]);
  assert.ok(!compileArgs("x").includes("--target"));
  // the worker the code starts by URL is the one included
  const snapshot = await Deno.readTextFile(`${ROOT}lib/state_io/snapshot.ts`);
  assert.match(
    snapshot,
    /new URL\("\.\/snapshot_worker\.ts", import\.meta\.url\)/,
  );
  assert.ok(INCLUDES.includes("lib/state_io/snapshot_worker.ts"));
});

Deno.test("compile: builds a working binary, or says in one line why it cannot", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        `${ROOT}scripts/compile.ts`,
        "--output",
        `${dir}/verity`,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(r.stderr);
    if (r.code === 0) {
      // denort was fetched (a machine with network): the binary runs
      const v = await new Deno.Command(`${dir}/verity`, { args: ["--version"] })
        .output();
      assert.equal(v.code, 0);
      assert.match(new TextDecoder().decode(v.stdout), /^verity \d/);
      assert.match(
        await Deno.readTextFile(`${dir}/SHA256SUMS`),
        / {2}verity\n$/,
      );
    } else {
      // here: no denort and no network
      assert.equal(r.code, 1, err);
      assert.match(err, /^compile: deno compile failed: .*DENORT_BIN/);
      assert.equal(err.trim().split("\n").length, 1, err);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
