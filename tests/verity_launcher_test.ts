/**
 * The `./verity` launcher with no `deno` on PATH (as after the README's
 * set-up commands): it uses the Deno it resolved before (remembered under
 * $XDG_CACHE_HOME/verity), puts it on PATH for server commands, and runs
 * from any directory.
 */
import assert from "node:assert/strict";
import { pathWithoutDeno } from "./_path.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("launcher: no deno on PATH, the remembered Deno runs verity and the server command", async () => {
  const cache = await Deno.makeTempDir();
  const cwd = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${cache}/verity`);
    await Deno.writeTextFile(
      `${cache}/verity/deno-2.9.6.path`,
      `${Deno.execPath()}\n`,
    );
    const path = await pathWithoutDeno(cache);
    const run = (args: string[]) =>
      new Deno.Command(`${ROOT}verity`, {
        args,
        cwd,
        env: {
          PATH: path,
          XDG_CACHE_HOME: cache,
          VERITY_NO_WARM: "1",
          // Deno's own cache as warmed for the tests
          DENO_DIR: Deno.env.get("DENO_DIR") ??
            `${Deno.env.get("HOME")}/.cache/deno`,
        },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
    const v = await run(["--version"]);
    assert.equal(v.code, 0, new TextDecoder().decode(v.stderr));
    assert.match(new TextDecoder().decode(v.stdout), /^verity \d/);
    const t = await run([
      "tools",
      "--json",
      "--",
      "deno",
      "run",
      `${ROOT}fixtures/liar-readonly/server.ts`,
    ]);
    assert.equal(t.code, 0, new TextDecoder().decode(t.stderr));
    assert.match(new TextDecoder().decode(t.stdout), /"get_item"/);
  } finally {
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("launcher: without Deno and without npx it says what to install (exit 2)", async () => {
  const cache = await Deno.makeTempDir();
  const empty = await Deno.makeTempDir();
  try {
    const r = await new Deno.Command("/bin/sh", {
      args: [`${ROOT}verity`, "--version"],
      env: { PATH: `${empty}:/nonexistent`, XDG_CACHE_HOME: cache },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 2, err);
    assert.match(err, /needs Deno 2\.9\.6 or Node\/npm \(npx\)/);
  } finally {
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(empty, { recursive: true });
  }
});
