import assert from "node:assert/strict";
import {
  generateKeyPair,
  importPrivateKey,
  importPublicKey,
  pae,
  PREDICATE_TYPE,
  signStatement,
  type Statement,
  STATEMENT_TYPE,
  verifyEnvelope,
} from "./attest.ts";

const statement: Statement = {
  _type: STATEMENT_TYPE,
  subject: [{ name: "report.json", digest: { sha256: "ab".repeat(32) } }],
  predicateType: PREDICATE_TYPE,
  predicate: { summary: { verdicts: 3 } },
};

Deno.test("PAE is DSSE's pre-authentication encoding (the spec's example)", () => {
  const got = new TextDecoder().decode(
    pae(
      "http://example.com/HelloWorld",
      new TextEncoder().encode("hello world"),
    ),
  );
  assert.equal(got, "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
});

Deno.test("sign and verify round trip; the key id is the public key's, from either half", async () => {
  const k = await generateKeyPair();
  assert.match(k.privatePem, /^-----BEGIN PRIVATE KEY-----\n/);
  assert.match(k.publicPem, /^-----BEGIN PUBLIC KEY-----\n/);
  const signer = await importPrivateKey(k.privatePem);
  const verifier = await importPublicKey(k.publicPem);
  assert.equal(signer.keyid, k.keyid);
  assert.equal(verifier.keyid, k.keyid);
  const env = await signStatement(statement, signer);
  const v = await verifyEnvelope(env, verifier);
  assert.equal(v.ok, true);
  if (v.ok) {
    assert.deepEqual(
      JSON.parse(new TextDecoder().decode(v.payload)),
      statement,
    );
  }
});

Deno.test("a wrong key, a flipped payload or signature byte, an extra envelope key are refused", async () => {
  const k = await generateKeyPair();
  const other = await generateKeyPair();
  const env = await signStatement(
    statement,
    await importPrivateKey(k.privatePem),
  );
  const pub = await importPublicKey(k.publicPem);
  const wrong = await verifyEnvelope(
    env,
    await importPublicKey(other.publicPem),
  );
  assert.equal(wrong.ok, false);
  if (!wrong.ok) assert.match(wrong.reason, /no signature verifies/);
  const body = atob(env.payload);
  const i = body.indexOf("ab");
  const flipped = btoa(body.slice(0, i) + "ac" + body.slice(i + 2));
  assert.equal(
    (await verifyEnvelope({ ...env, payload: flipped }, pub)).ok,
    false,
  );
  const sig = atob(env.signatures[0]!.sig);
  const badSig = btoa(
    String.fromCharCode(sig.charCodeAt(0) ^ 1) + sig.slice(1),
  );
  assert.equal(
    (await verifyEnvelope(
      { ...env, signatures: [{ keyid: k.keyid, sig: badSig }] },
      pub,
    )).ok,
    false,
  );
  const extra = await verifyEnvelope({ ...env, note: "x" }, pub);
  assert.equal(extra.ok, false);
  assert.equal(
    (await verifyEnvelope({ ...env, signatures: [] }, pub)).ok,
    false,
  );
});

Deno.test("keys in the wrong format are TypeErrors naming what was expected", async () => {
  const k = await generateKeyPair();
  await assert.rejects(importPrivateKey(k.publicPem), /PEM PRIVATE KEY/);
  await assert.rejects(importPublicKey("not a key"), /PEM PUBLIC KEY/);
  await assert.rejects(
    importPublicKey(
      "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    ),
    /not an Ed25519 SPKI key/,
  );
});
