import assert from "node:assert/strict";
import {
  bundleName,
  isAppFile,
  LAUNCHER,
  platformName,
  RELEASE_PREDICATE,
  verifyBundle,
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

Deno.test("release: the bundle attestation binds the tarball's digest", async () => {
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
    assert.equal(await verifyBundle(tarball, pair.publicPem), null);
    // another key
    const other = await generateKeyPair();
    assert.notEqual(await verifyBundle(tarball, other.publicPem), null);
    // a changed tarball
    await Deno.writeFile(tarball, new Uint8Array([1, 2, 4]));
    assert.match(
      (await verifyBundle(tarball, pair.publicPem)) ?? "",
      /not about verity-0\.1\.0-linux-x64\.tar\.gz/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
