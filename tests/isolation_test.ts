/**
 * Session isolation for a non-root auditor (hardening, round three): run
 * as an unprivileged user, verity's servers run as that same uid, so file
 * permissions cannot keep one session's server out of another session's
 * state directory; the sandbox must. Under `--jobs 2` the `peek` server
 * (tests/hostile/peek) tries to list the run's work directory and read
 * every sibling session's `state/mine.txt`. It must read nothing, under the
 * deno backend and under bubblewrap, with the work directory outside /tmp
 * (bubblewrap's /tmp is a fresh tmpfs anyway). Without a sandbox it reads
 * its siblings: the probe can see what it looks for.
 *
 * Needs root (to become uid 65534 with setpriv), setpriv and bwrap; skipped
 * otherwise.
 */
import assert from "node:assert/strict";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const PEEK = new URL("./hostile/peek/", import.meta.url).pathname;
const dec = new TextDecoder();
const NOBODY = 65534;

function has(p: string): boolean {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
}

const usable = Deno.uid() === 0 && has("/usr/bin/setpriv") &&
  (has("/usr/bin/bwrap") || has("/bin/bwrap"));

async function sh(cmd: string, args: string[]): Promise<void> {
  const o = await new Deno.Command(cmd, { args, stderr: "piped" }).output();
  if (!o.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${dec.decode(o.stderr)}`);
  }
}

/** Every peek answer of a `verity run --json` as nobody. */
async function peekAnswers(
  root: string,
  definition: string,
  extra: string[] = [],
): Promise<string[]> {
  const out = await new Deno.Command("/usr/bin/setpriv", {
    args: [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      // Deno as nobody can run it: npm puts it under the 0700 /root.
      `${root}/bin/deno`,
      "run",
      "--allow-all",
      MAIN,
      "run",
      definition,
      "--audit",
      "--jobs",
      "2",
      "--json",
      "--runs-dir",
      `${root}/runs`,
      ...extra,
    ],
    env: {
      // Not an ancestor of the work directory: bubblewrap hides the home.
      HOME: `${root}/home`,
      TMPDIR: `${root}/work`,
      DENO_DIR: `${root}/denodir`,
      PATH: `${root}/bin:/usr/local/bin:/usr/bin:/bin`,
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = dec.decode(out.stdout);
  assert.ok(stdout.startsWith("{"), dec.decode(out.stderr).slice(-800));
  const report = JSON.parse(stdout);
  // An unprivileged auditor gets no overlay: said in the headline, never a
  // silent PASS.
  const writes = report.observations.definition.writes;
  assert.equal(writes.observed, false);
  assert.match(
    writes.why,
    extra.includes("--no-sandbox") ? /no sandbox/ : /verity is not root/,
  );
  assert.equal(report.summary.claims.unobservedWrites, writes.why);
  const tool = report.observations.tools[0];
  return [...tool.once, ...tool.twice].flatMap((o: {
    calls: { status: string; response?: string }[];
  }) =>
    o.calls.map((c) => {
      assert.equal(c.status, "ok", JSON.stringify(c));
      return JSON.parse(c.response!).content[0].text as string;
    })
  );
}

Deno.test({
  name:
    "isolation: as an unprivileged auditor under --jobs 2, no session's server reads another session's state (deno and bubblewrap backends)",
  ignore: !usable,
  async fn() {
    // Outside /tmp, readable by nobody: its own DENO_DIR (root's is in 0700 /root).
    const root = await Deno.makeTempDir({
      dir: "/var/tmp",
      prefix: "verity-isolation-",
    });
    try {
      await Deno.mkdir(`${root}/work`);
      await Deno.mkdir(`${root}/home`);
      await Deno.mkdir(`${root}/runs`);
      await Deno.mkdir(`${root}/bwrap`);
      await Deno.mkdir(`${root}/bin`);
      await Deno.copyFile(Deno.execPath(), `${root}/bin/deno`);
      await Deno.chmod(`${root}/bin/deno`, 0o755);
      const denoDir = Deno.env.get("DENO_DIR") ??
        `${Deno.env.get("HOME")}/.cache/deno`;
      await sh("cp", ["-a", denoDir, `${root}/denodir`]);
      await Deno.copyFile(`${PEEK}server.ts`, `${root}/bwrap/server.ts`);
      const toml = await Deno.readTextFile(`${PEEK}target.toml`);
      await Deno.writeTextFile(
        `${root}/bwrap/target.toml`,
        toml.replace(
          'command = ["{deno}", "run", "server.ts"]',
          'command = ["{deno}", "run", "server.ts"]\nsandbox = "bubblewrap"',
        ),
      );
      await sh("chown", ["-R", `${NOBODY}:${NOBODY}`, root]);
      await Deno.chmod(root, 0o755);

      // The probe works: with no sandbox it reads its siblings.
      const open = await peekAnswers(root, PEEK, ["--no-sandbox"]);
      assert.ok(
        open.some((a) => /read=\S+/.test(a)),
        `no sibling seen without a sandbox: ${open.join(" | ")}`,
      );
      for (const def of [PEEK, `${root}/bwrap`]) {
        const answers = await peekAnswers(root, def);
        assert.equal(answers.length, 9, answers.join(" | "));
        for (const a of answers) assert.match(a, /read=$/, `${def}: ${a}`);
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
