/**
 * action.yml and .github/workflows/*.yml validate against the GitHub Actions
 * schemas (npm @action-validator/cli, run through npx; needs the npm
 * registry once).
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;
const VALIDATOR = "@action-validator/cli@0.6.0";

async function validate(path: string): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("npx", {
    args: ["--loglevel=error", "-y", VALIDATOR, path],
    env: { NPM_CONFIG_UPDATE_NOTIFIER: "false" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("action.yml, the release and census workflows validate", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // 0.6.0's workflow schema predates the `attestations` permission that
    // actions/attest-build-provenance needs; validate the rest of the file.
    const release = await Deno.readTextFile(
      `${ROOT}.github/workflows/release.yml`,
    );
    const lines = release.split("\n");
    const without = lines.filter((l) => l.trim() !== "attestations: write");
    assert.equal(without.length, lines.length - 1, "one attestations: write");
    await Deno.writeTextFile(`${dir}/release.yml`, without.join("\n"));
    for (
      const f of [
        `${ROOT}action.yml`,
        `${dir}/release.yml`,
        `${ROOT}.github/workflows/census.yml`,
      ]
    ) {
      const r = await validate(f);
      assert.equal(r.code, 0, `${f}: ${r.out}`);
    }
    // the validator does refuse a broken file
    await Deno.writeTextFile(
      `${dir}/bad.yml`,
      release.replace("runs-on: ${{ matrix.runner }}", "runs_on: x"),
    );
    assert.notEqual((await validate(`${dir}/bad.yml`)).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
