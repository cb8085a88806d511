/**
 * `verity run --audit -- <command>` on bad input: one line, exit 2, no
 * learned directory left in the runs directory.
 */
import assert from "node:assert/strict";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;

for (
  const [what, args, line] of [
    [
      "a program that does not exist",
      ["--audit", "--", "no-such-server-xyz"],
      /^verity run: cannot start "no-such-server-xyz": no such executable$/,
    ],
    [
      "no --audit",
      ["--", "deno", "run", "x.ts"],
      /^verity run: a server with no definition has no expectations: add --audit$/,
    ],
    [
      "a definition as well",
      ["--audit", "liar-readonly", "--", "deno", "run", "x.ts"],
      /^verity run: a server after -- is audited with no definition: give no definition as well$/,
    ],
    [
      "a server that dies before it answers",
      ["--audit", "--", "deno", "run", "fixtures/cannot-start/server.ts"],
      /^verity run: \{deno\} run \S+cannot-start\/server\.ts: server exited before answering \(exit code 1\); stderr: .*NOTES_DB_URL is not set/,
    ],
    [
      "a server that floods its state directory",
      ["--audit", "--", "deno", "run", "tests/data/zero-flood/server.ts"],
      /^verity run: the server left more than 20000 entries in its state directory: not learned$/,
    ],
  ] as const
) {
  Deno.test(`run --audit -- <command>: ${what} is one line, exit 2`, async () => {
    const runs = await Deno.makeTempDir({ prefix: "verity-zero-bad-" });
    try {
      const r = await runVerity(["run", "--runs-dir", runs, ...args], {
        cwd: ROOT,
      });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      // Progress lines ("verity: listed …") aside, the error is one line.
      const lines = r.stderr.trim().split("\n")
        .filter((l) => !l.startsWith("verity: "));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, line);
      assert.deepEqual([...Deno.readDirSync(runs)], []);
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  });
}
