/**
 * The composite action's own script (action.yml, step `run`), run here with
 * the environment GitHub would give it: a fixture suite that meets its
 * expectations exits 0; the same fixture audited with fail-on-violation
 * records exit 1; both write SARIF and HTML into the reports directory.
 */
import assert from "node:assert/strict";
import { fixtureAsTarget } from "./_fixture_target.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The `run: |` script of the step with `id: <id>`, dedented. */
export function stepScript(actionYml: string, id: string): string {
  const lines = actionYml.split("\n");
  const at = lines.findIndex((l) => l.trim() === `id: ${id}`);
  assert.ok(at >= 0, `no step id ${id}`);
  const runAt = lines.findIndex((l, i) => i > at && l.trim() === "run: |");
  const indent = (lines[runAt + 1] ?? "").search(/\S/);
  const body: string[] = [];
  for (const l of lines.slice(runAt + 1)) {
    if (l.trim() !== "" && l.search(/\S/) < indent) break;
    body.push(l.slice(indent));
  }
  return body.join("\n");
}

async function runStep(env: Record<string, string>) {
  const script = stepScript(
    await Deno.readTextFile(`${ROOT}action.yml`),
    "run",
  );
  const out = await Deno.makeTempDir();
  const ghOut = `${out}/github_output`;
  await Deno.writeTextFile(ghOut, "");
  const r = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: ROOT,
    env: {
      VERITY: `${ROOT}verity`,
      JOBS: "2",
      FAIL_UNDER: "",
      PREPARE: "false",
      OUT: `${out}/reports`,
      GITHUB_OUTPUT: ghOut,
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: r.code,
    outputs: await Deno.readTextFile(ghOut),
    dir: `${out}/reports`,
    cleanup: () => Deno.remove(out, { recursive: true }),
    log: new TextDecoder().decode(r.stdout) +
      new TextDecoder().decode(r.stderr),
  };
}

Deno.test("action: the step script is found", async () => {
  const s = stepScript(await Deno.readTextFile(`${ROOT}action.yml`), "run");
  assert.match(s, /^set -uo pipefail\n/);
  assert.match(s, /"\$VERITY" run "\$def"/);
});

Deno.test("action: fixture suite passes; an audit with fail-on-violation fails", async () => {
  const suite = await runStep({
    DEFINITIONS: "fixtures/liar-readonly",
    AUDIT: "false",
    FAIL_ON_VIOLATION: "true",
  });
  try {
    assert.equal(suite.code, 0, suite.log);
    assert.match(suite.outputs, /^rc=0$/m, suite.log);
    assert.ok((await Deno.stat(`${suite.dir}/liar-readonly.sarif`)).isFile);
    assert.ok((await Deno.stat(`${suite.dir}/liar-readonly.html`)).isFile);
    assert.ok((await Deno.stat(`${suite.dir}/runs/ledger.json`)).isFile);
  } finally {
    await suite.cleanup();
  }
  // the same server as an audit target (audits refuse fixtures)
  const t = await fixtureAsTarget("liar-readonly");
  const target = t.dir;
  const audit = await runStep({
    DEFINITIONS: target,
    AUDIT: "true",
    FAIL_ON_VIOLATION: "true",
  });
  try {
    assert.match(audit.outputs, /^rc=1$/m, audit.log);
    assert.match(audit.log, /get_item\s+read_only\s+true\s+VIOLATION/);
    assert.ok(!audit.log.includes("SETUP FAILED"), audit.log);
    const sarif = JSON.parse(
      await Deno.readTextFile(
        `${audit.dir}/${target.split("/").pop()}.sarif`,
      ),
    );
    assert.ok(
      JSON.stringify(sarif).includes('"level":"error"'),
      "the VIOLATION is an error in SARIF",
    );
  } finally {
    await audit.cleanup();
    await t.cleanup();
  }
});
