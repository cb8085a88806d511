/**
 * The npm package: `npm pack` output installed into an empty directory runs
 * verity through its `verity` bin on the Deno runtime of the `deno` npm
 * package (`npx verity-mcp ...`), including its demo (a bundled fixture
 * server). Needs the npm registry (or its cache) for the deno dependency.
 */
import assert from "node:assert/strict";
import { pathWithoutDeno } from "./_path.ts";
import { pack, PACKAGE_NAME, packageJson } from "../scripts/npm_pack.ts";
import { DENO_VERSION } from "../scripts/release.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("npm package: manifest pins the deno runtime and exposes the verity bin", () => {
  const p = packageJson("1.2.3");
  assert.equal(p.name, PACKAGE_NAME);
  assert.equal(p.version, "1.2.3");
  assert.deepEqual(p.bin, { verity: "bin/verity.cjs" });
  assert.deepEqual(p.dependencies, { deno: DENO_VERSION });
});

Deno.test("npm package: npm pack, installed into an empty directory, runs verity", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const tgz = await pack(`${dir}/out`);
    const app = `${dir}/app`;
    await Deno.mkdir(app);
    // as root the sandboxed server runs as an unprivileged uid, which must
    // be able to reach the Deno binary under node_modules
    await Deno.chmod(dir, 0o755);
    await Deno.chmod(app, 0o755);
    const dec = new TextDecoder();
    // No deno of ours on PATH: the package brings its own.
    const path = await pathWithoutDeno(dir);
    const sh = async (cmd: string, args: string[]) => {
      const r = await new Deno.Command(cmd, {
        args,
        cwd: app,
        env: {
          NPM_CONFIG_UPDATE_NOTIFIER: "false",
          PATH: path,
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return {
        code: r.code,
        out: dec.decode(r.stdout),
        err: dec.decode(r.stderr),
      };
    };
    const inst = await sh("npm", [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      tgz,
    ]);
    assert.equal(inst.code, 0, inst.err);
    const v = await sh("npx", ["--no-install", PACKAGE_NAME, "--version"]);
    assert.equal(v.code, 0, v.err);
    assert.match(v.out, /^verity \d+\.\d+\.\d+/);
    const t = await sh("npx", [
      "--no-install",
      PACKAGE_NAME,
      "tools",
      "--json",
      "--",
      "deno",
      "run",
      `${ROOT}fixtures/liar-readonly/server.ts`,
    ]);
    assert.equal(t.code, 0, t.err);
    assert.match(t.out, /"get_item"/);
    // the demo: a bundled fixture server, run from the app's copy outside
    // node_modules (Deno runs no fixture from inside it)
    const demo = await sh("npx", [
      "--no-install",
      PACKAGE_NAME,
      "demo",
      "--runs-dir",
      `${dir}/runs`,
    ]);
    assert.equal(demo.code, 0, demo.out + demo.err);
    assert.match(
      demo.out,
      /register\s+concurrent_idempotence\s+true\s+VIOLATION/,
    );
    assert.match(demo.out, /expectations: 5\/5 matched/);
    assert.doesNotMatch(demo.err, /not a dependency/);
    const bad = await sh("npx", [
      "--no-install",
      PACKAGE_NAME,
      "no-such-command",
    ]);
    assert.equal(bad.code, 2, bad.err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
