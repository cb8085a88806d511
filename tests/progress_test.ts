/**
 * `verity run` progress on stderr: a live line (sessions done/total, tool,
 * ETA) only on a terminal (a pseudo-terminal from util-linux `script`);
 * nothing of it when stderr is a pipe; no progress at all with --quiet or
 * --json.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = join(ROOT, "main.ts");
const dec = new TextDecoder();

async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "verity-progress-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        MAIN,
        "run",
        "liar-readonly",
        "--runs-dir",
        join(dir, "runs"),
        ...args,
      ],
      stdout: "null",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    return { code: out.code, stderr: dec.decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("progress: stderr not a terminal: phase lines only, no live line or escape codes", async () => {
  const r = await run([]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^verity: reset: verified$/m);
  // deno-lint-ignore no-control-regex -- the progress line is made of escape codes
  assert.doesNotMatch(r.stderr, /[\r\x1b]/);
  assert.doesNotMatch(r.stderr, /sessions \d+\/\d+/);
});

Deno.test("progress: --quiet and --json print no progress at all", async () => {
  for (const flag of ["--quiet", "--json"]) {
    const r = await run([flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "", `${flag}: ${r.stderr}`);
  }
});

const hasScript = await new Deno.Command("sh", {
  args: ["-c", "command -v script"],
  stdout: "null",
})
  .output().then((o) => o.success).catch(() => false);

Deno.test({
  name:
    "progress: on a terminal, a live line with sessions done/total, the tool and an ETA, cleared at the end",
  ignore: !hasScript,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "verity-progress-tty-" });
    try {
      const log = join(dir, "tty.log");
      const cmd = [
        Deno.execPath(),
        "run",
        "--allow-all",
        MAIN,
        "run",
        "liar-readonly",
        "--runs-dir",
        join(dir, "runs"),
      ]
        .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
      // stdout to /dev/null: only stderr reaches the pseudo-terminal
      const out = await new Deno.Command("script", {
        args: ["-qec", `${cmd} >/dev/null`, log],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      assert.equal(out.code, 0, dec.decode(out.stderr));
      const tty = await Deno.readTextFile(log);
      const frames = [
        ...tty.matchAll(
          // deno-lint-ignore no-control-regex -- the progress line is made of escape codes
          /\r\x1b\[2Kverity: sessions (\d+)\/(\d+) · ([a-z]+)([^\r]*)/g,
        ),
      ];
      assert.ok(frames.length >= 2, tty);
      const last = frames.at(-1)!;
      assert.equal(last[1], last[2], "the last frame is all sessions done");
      assert.ok(
        frames.some((f) => /· ETA \d+s/.test(f[4]!)),
        "an ETA once a session finished",
      );
      assert.ok(
        frames.some((f) => f[3] === "sequential" && /· get_item/.test(f[4]!)),
        "the current tool",
      );
      assert.match(tty, /verity: reset: verified/);
      // cleared at the end: nothing of the line stays on the terminal
      const tail = tty.slice(last.index! + last[0].length);
      assert.ok(
        tail.startsWith("\r\x1b[2K"),
        JSON.stringify(tail.slice(0, 40)),
      );
      assert.doesNotMatch(tail, /verity: sessions/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
