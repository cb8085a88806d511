/**
 * `import()` of a literal path reads no host file (issue 32, "Escapes" 3).
 * tests/hostile/import-secret's read-only tool imports
 * `../../../secret.json`; `deno info` lists that file, and Deno loads its
 * static graph without a permission check. Run from `<tmp>/a/b/c/` with the
 * secret at `<tmp>/secret.json`: the secret reaches no file verity writes,
 * the server is refused, and the attempt is a refused read in the call's
 * privilege record.
 */
import assert from "node:assert/strict";
import { packageModuleFiles } from "../lib/sandbox/sandbox.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const FIXTURE = new URL("./hostile/import-secret", import.meta.url).pathname;

Deno.test({
  name:
    "import escape: a literal import() of a file outside the server's package is refused and recorded as a refused read",
  sanitizeResources: false,
  async fn() {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "verity-import-escape-" }),
    );
    try {
      const canary = `secret-${crypto.randomUUID()}`;
      await Deno.writeTextFile(
        `${root}/secret.json`,
        JSON.stringify({ token: canary }),
      );
      await Deno.mkdir(`${root}/a/b`, { recursive: true });
      const def = `${root}/a/b/c`;
      await Deno.mkdir(`${def}/seed/data`, { recursive: true });
      for (const f of ["server.ts", "fixture.toml", "seed/data/note.txt"]) {
        await Deno.copyFile(`${FIXTURE}/${f}`, `${def}/${f}`);
      }
      // As root the server runs as nobody: its files must be readable.
      for (const d of [root, `${root}/a`, `${root}/a/b`, def]) {
        await Deno.chmod(d, 0o755);
      }
      await Deno.chmod(`${root}/secret.json`, 0o644);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", MAIN, "run", def, "--runs-dir", `${root}/runs`],
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const reportPath = /^report: (.*)$/m.exec(stdout)![1]!;
      const text = await Deno.readTextFile(reportPath);
      assert.ok(!text.includes(canary), "the secret reached report.json");
      assert.ok(!stdout.includes(canary));
      // The server was refused (Deno's NotCapable message)...
      assert.match(
        text,
        /refused: \w+: Requires read access to \\+"[^"\\]*\/secret\.json/,
      );
      // ...and the calls that made the attempt record it as a refused read.
      const refusedRead = JSON.stringify({
        path: `${root}/secret.json`,
        in_state: false,
        allowed: false,
      }).slice(0, -1);
      assert.ok(text.includes(`"reads":[${refusedRead}`), "no refused read");
      assert.ok(
        !text.includes(`${root}/secret.json","in_state":false,"allowed":true`),
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("import escape: the confined backend binds only the server's package of its module graph", () => {
  const r = packageModuleFiles(
    {
      modules: [
        "/repo/fixtures/x/server.ts",
        "/repo/fixtures/_shared/state.ts",
        "/srv/lib/util.ts",
        "/tmp/t/secret.json",
      ],
      config: "/repo/deno.json",
      scriptDir: "/repo/fixtures/x",
      packageRoot: "/repo",
    },
    {
      definitionDir: "/repo/fixtures/x",
      readPaths: ["/srv/lib"],
      home: "/root",
    },
  );
  assert.deepEqual(r.bound, [
    "/repo/fixtures/x/server.ts",
    "/repo/fixtures/_shared/state.ts",
    "/srv/lib/util.ts",
    "/repo/deno.json",
  ]);
  assert.deepEqual(r.refused, ["/tmp/t/secret.json"]);
  // A package.json marks the package: its sibling directories load.
  const npmish = packageModuleFiles(
    {
      modules: ["/srv/app/src/server.ts", "/srv/app/lib/db.ts", "/srv/x.json"],
      config: null,
      scriptDir: "/srv/app/src",
      packageRoot: "/srv/app",
    },
    { definitionDir: "/audits/app", readPaths: [], home: "/root" },
  );
  assert.deepEqual(npmish.refused, ["/srv/x.json"]);
  // A config at or above the auditor's home is no package boundary.
  const home = packageModuleFiles(
    {
      modules: ["/root/p/server.ts", "/root/.config/gh/hosts.json"],
      config: "/root/deno.json",
      scriptDir: "/root/p",
      packageRoot: "/root",
    },
    { definitionDir: "/root/p", readPaths: [], home: "/root" },
  );
  assert.deepEqual(home.refused, ["/root/.config/gh/hosts.json"]);
});
