import assert from "node:assert/strict";
import {
  bundleName,
  isAppFile,
  LAUNCHER,
  platformName,
  RELEASE_PREDICATE,
} from "../scripts/release.ts";
import {
  generateKeyPair,
  importPrivateKey,
  signStatement,
  STATEMENT_TYPE,
} from "../lib/evidence/attest.ts";

Deno.test("release: names, contents and the offline launcher", () => {
  assert.equal(platformName("linux", "x86_64"), "linux-x64");
  assert.equal(platformName("darwin", "aarch64"), "darwin-arm64");
  assert.equal(platformName("windows", "x86_64"), "win32-x64");
  assert.equal(bundleName("0.1.0", "linux-x64"), "verity-0.1.0-linux-x64");
  assert.ok(isAppFile("main.ts"));
  assert.ok(isAppFile("lib/runner/runner.ts"));
  assert.ok(isAppFile("fixtures/liar-readonly/server.ts"));
  assert.ok(!isAppFile("lib/runner/runner_test.ts"));
  assert.ok(!isAppFile("tests/docs_commands_test.ts"));
  assert.ok(!isAppFile("results/memory-2026-11-30/report.json.gz"));
  assert.match(LAUNCHER, /--cached-only/);
  assert.match(LAUNCHER, /DENO_DIR="\$\{here\}\/deno_dir"/);
});

const ROOT = new URL("..", import.meta.url).pathname;

/** `verity attest verify` on a bundle's envelope, as a user with no checkout would. */
async function attestVerify(envelope: string, key: string) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}main.ts`,
      "attest",
      "verify",
      envelope,
      "--key",
      key,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("release: verity attest verify checks the bundle's envelope: signature and the tarball's digest", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const tarball = `${dir}/verity-0.1.0-linux-x64.tar.gz`;
    await Deno.writeFile(tarball, new Uint8Array([1, 2, 3]));
    const pair = await generateKeyPair();
    const digest = [
      ...new Uint8Array(
        await crypto.subtle.digest("SHA-256", new Uint8Array([1, 2, 3])),
      ),
    ].map((b) => b.toString(16).padStart(2, "0")).join("");
    const env = await signStatement({
      _type: STATEMENT_TYPE,
      subject: [{
        name: "verity-0.1.0-linux-x64.tar.gz",
        digest: { sha256: digest },
      }],
      predicateType: RELEASE_PREDICATE,
      predicate: {},
    }, await importPrivateKey(pair.privatePem));
    await Deno.writeTextFile(`${tarball}.intoto.json`, JSON.stringify(env));
    await Deno.writeTextFile(`${dir}/pub.pem`, pair.publicPem);
    const good = await attestVerify(`${tarball}.intoto.json`, `${dir}/pub.pem`);
    assert.equal(good.code, 0, good.out);
    assert.match(
      good.out,
      /attestation verified: signature, subject \(the release bundle verity-0\.1\.0-linux-x64\.tar\.gz\)/,
    );
    // another key
    const other = await generateKeyPair();
    await Deno.writeTextFile(`${dir}/other.pem`, other.publicPem);
    const wrongKey = await attestVerify(
      `${tarball}.intoto.json`,
      `${dir}/other.pem`,
    );
    assert.equal(wrongKey.code, 1, wrongKey.out);
    assert.match(wrongKey.out, /REFUSED signature/);
    // a changed tarball
    await Deno.writeFile(tarball, new Uint8Array([1, 2, 4]));
    const changed = await attestVerify(
      `${tarball}.intoto.json`,
      `${dir}/pub.pem`,
    );
    assert.equal(changed.code, 1, changed.out);
    assert.match(
      changed.out,
      /REFUSED subject: the statement is about verity-0\.1\.0-linux-x64\.tar\.gz sha256:[0-9a-f]{64}, .* sha256:[0-9a-f]{64}/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
