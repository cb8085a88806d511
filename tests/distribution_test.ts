/**
 * docs/distribution.md's commands run as written: the shell blocks of its
 * "Offline bundle" and "npm package" sections, in order, each with
 * `bash -euo pipefail`, in a fresh copy of the checkout (its tracked files,
 * committed, as a user's clone). The offline bundle is built, checked offline
 * (scripts/bundle_check.sh), its download verified by its own
 * `verity attest verify` and run; the npm package is packed, installed from
 * the tarball and runs its demo. Needs the npm registry (or its cache), root
 * for `unshare --net`, and bubblewrap; takes minutes (the build).
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

/** The ```bash blocks of a `## ` section. */
function blocks(md: string, section: string): string[] {
  const at = md.indexOf(`\n## ${section}\n`);
  assert.ok(at >= 0, `no section ${section}`);
  const end = md.indexOf("\n## ", at + 1);
  const text = md.slice(at, end === -1 ? undefined : end);
  return [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

async function sh(script: string, cwd: string) {
  const r = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", script],
    cwd,
    env: { NO_COLOR: "1", NPM_CONFIG_UPDATE_NOTIFIER: "false" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test({
  name:
    "docs/distribution.md: the offline bundle and npm package commands run as written",
  sanitizeResources: false,
  fn: async () => {
    const md = await Deno.readTextFile(`${ROOT}docs/distribution.md`);
    const bundle = blocks(md, "Offline bundle");
    const npm = blocks(md, "npm package");
    assert.equal(bundle.length, 2, "build and check; check the download, run");
    assert.equal(npm.length, 2, "pack; install and run the demo");
    // a user's clone: the tracked files, committed (the build lists them with git)
    const clone = await Deno.makeTempDir({ prefix: "verity-docs-dist-" });
    await Deno.chmod(clone, 0o755); // as root the server runs as uid 65534
    try {
      const copy = await sh(
        `git -C "${ROOT}" ls-files -z | (cd "${ROOT}" && xargs -0 cp --parents -t "${clone}") && git init -q && git add -A && git -c user.email=d@example.org -c user.name=d commit -qm copy`,
        clone,
      );
      assert.equal(copy.code, 0, copy.out);
      for (const [what, script] of [...bundle, ...npm].entries()) {
        const r = await sh(script, clone);
        assert.equal(r.code, 0, `block ${what}:\n${script}\n${r.out}`);
        if (script.includes("attest verify")) {
          assert.match(
            r.out,
            /attestation verified: signature, subject \(the release bundle verity-[^ ]+\.tar\.gz\)/,
          );
          assert.match(r.out, /expectations: 5\/5 matched/);
        }
        if (script.includes("verity-mcp demo")) {
          assert.match(
            r.out,
            /register\s+concurrent_idempotence\s+true\s+VIOLATION/,
          );
          assert.match(r.out, /expectations: 5\/5 matched/);
        }
        if (script.includes("bundle_check.sh")) {
          assert.match(r.out, /bundle check: verity-[^ ]+ ran offline/);
        }
      }
    } finally {
      await Deno.remove(clone, { recursive: true });
    }
  },
});
