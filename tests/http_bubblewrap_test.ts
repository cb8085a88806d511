/**
 * A local HTTP server under bubblewrap: it gets a network namespace of its
 * own (loopback only) and verity reaches it through the relay (an nsenter'd
 * relay process serving a Unix socket, verity listening on the chosen port).
 * The http-store ground truth must hold over it, except open_world, which
 * bubblewrap cannot observe (INCONCLUSIVE:NO_NETWORK_OBSERVATION, as over
 * stdio), and no relay or server may outlive the run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const dec = new TextDecoder();

function bwrapWorks(): boolean {
  try {
    return new Deno.Command("bwrap", {
      args: ["--ro-bind", "/", "/", "--unshare-net", "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test({
  name: "bubblewrap: the http-store battery over HTTP through the relay",
  ignore: Deno.build.os !== "linux" || !bwrapWorks(),
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "verity-http-bwrap-" });
    const runsDir = Deno.makeTempDirSync({ prefix: "verity-http-bwrap-runs-" });
    try {
      const src = Deno.readTextFileSync(
        join(ROOT, "fixtures/http-store/fixture.toml"),
      );
      const toml = src
        .replace('name = "http-store"', 'name = "http-store-bubblewrap"')
        .replace(
          '"server.ts"',
          `${JSON.stringify(join(ROOT, "fixtures/http-store/server.ts"))}`,
        )
        // The whole checkout is readable: the fixture resolves its imports
        // through the repository's deno.json, and bubblewrap hides /tmp,
        // where a CI clone may live.
        .replace(
          'transport = "http"',
          `transport = "http"\nsandbox = "bubblewrap"\nread = [${
            JSON.stringify(ROOT)
          }]`,
        )
        .replaceAll(
          /\[tools\.expected\.open_world\]\nverdict = "[A-Z_:]+"/g,
          '[tools.expected.open_world]\nverdict = "INCONCLUSIVE:NO_NETWORK_OBSERVATION"',
        );
      assert.notEqual(toml, src);
      Deno.writeTextFileSync(join(dir, "fixture.toml"), toml);
      Deno.copyFileSync(
        join(ROOT, "fixtures/http-store/seed.sql"),
        join(dir, "seed.sql"),
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-all",
          join(ROOT, "main.ts"),
          "run",
          dir,
          "--json",
          "--concurrent-attempts",
          "3",
          "--runs-dir",
          runsDir,
        ],
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const stdout = dec.decode(out.stdout);
      assert.ok(
        stdout.trim().startsWith("{"),
        dec.decode(out.stderr).slice(-800),
      );
      const report = JSON.parse(stdout);
      const failed = report.expectations.results.filter((
        e: { matched: boolean },
      ) => !e.matched);
      assert.deepEqual(failed, []);
      assert.equal(report.expectations.total, 20);
      for (const s of report.sessions) {
        assert.equal(s.backend, "bubblewrap");
      }
      const first = report.sessions.find((s: { command: string[] }) =>
        s.command.length > 0
      );
      assert.ok(first.command.includes("--unshare-net"));
      const ps = dec.decode(
        new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" })
          .outputSync().stdout,
      );
      assert.ok(
        !ps.split("\n").some((l) => l.includes(dir)),
        "a process of this run outlived it",
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
      Deno.removeSync(runsDir, { recursive: true });
    }
  },
});
