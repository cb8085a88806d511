/**
 * Strings a server sends are escaped in every file and terminal line
 * verity writes (issue 32, "Escapes" 1). tests/hostile/names/server.ts
 * lists a tool named `evil\n[target.allow]\nread = ["/root"]\n\u001b[2Ktool`
 * and puts the same into its description, schema keys and answers.
 */
import assert from "node:assert/strict";
import { DOMParser } from "@xmldom/xmldom";
import { parse } from "smol-toml";
import { runVerity } from "./_verity.ts";

const DEFINITION = new URL("./hostile/names", import.meta.url).pathname;
const SERVER = `${DEFINITION}/server.ts`;
/** Every control character but the line feed and tab (C0, DEL, C1). */
// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

async function verity(
  args: string[],
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args, cwd ? { cwd } : {});
}

Deno.test("init: a tool name with a newline and [target.allow] stays inside its comment; the target has no allow", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-names-init-" });
  try {
    const r = await verity(["init", "t", "--", "deno", "run", SERVER], cwd);
    assert.equal(r.code, 0, r.stderr);
    const text = await Deno.readTextFile(`${cwd}/t/target.toml`);
    assert.doesNotMatch(text, RAW_CONTROL);
    assert.doesNotMatch(text, /^\[target\.allow\]/m);
    const doc = parse(text) as {
      target: Record<string, unknown>;
      tools: { name: string }[];
    };
    assert.equal(doc.target.allow, undefined);
    assert.deepEqual(doc.tools.map((t) => t.name), [
      "get_note",
      'evil\n[target.allow]\nread = ["/root"]\n\u001b[2Ktool',
    ]);
    assert.match(text, /^# ---- evil\\n\[target\.allow\]\\nread = /m);
    assert.doesNotMatch(r.stdout + r.stderr, RAW_CONTROL);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("init --learn: the hostile name is one escaped TOML string, the learned target has no allow, the terminal lines no raw control", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-names-learn-" });
  try {
    const r = await verity(
      ["init", "t", "--learn", "--", "deno", "run", SERVER],
      cwd,
    );
    assert.equal(r.code, 0, r.stderr);
    const text = await Deno.readTextFile(`${cwd}/t/target.toml`);
    assert.doesNotMatch(text, RAW_CONTROL);
    assert.doesNotMatch(text, /^\[target\.allow\]/m);
    const doc = parse(text) as {
      target: Record<string, unknown>;
      tools: { name: string }[];
    };
    assert.equal(doc.target.allow, undefined);
    assert.deepEqual(doc.tools.map((t) => t.name).sort(), [
      'evil\n[target.allow]\nread = ["/root"]\n\u001b[2Ktool',
      "get_note",
    ]);
    assert.doesNotMatch(r.stdout + r.stderr, RAW_CONTROL);
    // It loads as a definition: verity run can take it as it is.
    const run = await verity(["verify-reset", "t"], cwd);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("tools: a hostile tool name is one escaped row, no raw ESC", async () => {
  const r = await verity(["tools", "--", "deno", "run", SERVER]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, RAW_CONTROL);
  assert.match(
    r.stdout,
    /^evil\\n\[target\.allow\]\\nread = \["\/root"\]\\n\\u\{1b\}\[2Ktool +TRUE/m,
  );
  assert.doesNotMatch(r.stdout, /^\[target\.allow\]/m);
  // --json: still the server's value, with DEL and C1 escaped too.
  const j = await verity(["tools", "--json", "--", "deno", "run", SERVER]);
  assert.doesNotMatch(j.stdout, RAW_CONTROL);
  const listed = JSON.parse(j.stdout) as {
    tools: { hints: { idempotentHint: { detail: string } } }[];
  };
  assert.ok(listed.tools[1]!.hints.idempotentHint.detail.includes("\u009b"));
});

Deno.test({
  name:
    "run: the verdict table shows a hostile tool name escaped on its own row; every report format still parses",
  sanitizeResources: false,
  async fn() {
    const runs = await Deno.makeTempDir({ prefix: "verity-names-runs-" });
    try {
      const r = await verity(["run", DEFINITION, "--runs-dir", runs]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, RAW_CONTROL);
      assert.doesNotMatch(r.stderr, RAW_CONTROL);
      assert.doesNotMatch(r.stdout, /^\[target\.allow\]|^read = /m);
      assert.match(
        r.stdout,
        /^ {2}evil\\n\[target\.allow\]\\nread = \["\/root"\]\\n\\u\{1b\}\[2Ktool +read_only +true +INCONCLUSIVE:CALL_ERROR/m,
      );
      const report = /^report: (.*)$/m.exec(r.stdout)![1]!;
      const text = await verity(["report", report, "--format", "text"]);
      assert.doesNotMatch(text.stdout, RAW_CONTROL);
      const junit = await verity(["report", report, "--format", "junit"]);
      assert.doesNotMatch(junit.stdout, RAW_CONTROL);
      const errors: string[] = [];
      new DOMParser({ onError: (_l, m) => void errors.push(m) })
        .parseFromString(junit.stdout, "text/xml");
      assert.deepEqual(errors, []);
      const html = await verity(["report", report, "--format", "html"]);
      assert.doesNotMatch(html.stdout, RAW_CONTROL);
      assert.ok(html.stdout.includes("evil\n[target.allow]"));
      const sarif = await verity(["report", report, "--format", "sarif"]);
      const names = JSON.stringify(JSON.parse(sarif.stdout));
      assert.ok(names.includes(String.raw`evil\n[target.allow]`));
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  },
});
