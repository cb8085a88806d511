/**
 * `verity keygen`, `verity attest` and `verity attest verify` end to end on
 * a real audit report (results/memory-2026-11-30), with a ledger built
 * here: the round trip, and a wrong key, flipped bytes, a swapped report
 * and a wrong head refused with their exit codes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendBlock } from "../lib/evidence/ledger.ts";
import { sha256Hex } from "../lib/evidence/canonical.ts";
import { runVerity } from "./_verity.ts";

const RESULT = new URL("../results/memory-2026-11-30/", import.meta.url)
  .pathname;
const dec = new TextDecoder();

async function verity(args: string[]) {
  return await runVerity(args);
}

async function reportText(): Promise<string> {
  for (const name of ["report.json", "report.json.gz"]) {
    try {
      const raw = await Deno.readFile(join(RESULT, name));
      if (!name.endsWith(".gz")) return dec.decode(raw);
      const s = new Blob([raw]).stream().pipeThrough(
        new DecompressionStream("gzip"),
      );
      return await new Response(s).text();
    } catch {
      // next
    }
  }
  throw new Error("no memory report under results/");
}

Deno.test("keygen, attest, attest verify: round trip and every refusal", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-attest-" });
  try {
    const k = await verity(["keygen", "--out", join(dir, "k")]);
    assert.equal(k.code, 0, k.stderr);
    assert.equal((await Deno.stat(join(dir, "k.pem"))).mode! & 0o777, 0o600);
    assert.equal(
      (await verity(["keygen", "--out", join(dir, "k")])).code,
      2,
      "keygen never overwrites",
    );
    assert.equal((await verity(["keygen", "--out", join(dir, "o")])).code, 0);
    // never inside a git work tree, unless asked
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
    const inRepo = await verity(["keygen", "--out", join(repo, "release")]);
    assert.equal(inRepo.code, 2);
    assert.match(
      inRepo.stderr,
      /^verity keygen: .*release\.pem would be inside the git work tree .*repo, one `git add` from publishing a private key: write it elsewhere \(--out ~\/\.config\/verity\/release\), or pass --inside-work-tree$/m,
    );
    await assert.rejects(Deno.stat(join(repo, "release.pem")));
    const asked = await verity([
      "keygen",
      "--out",
      join(repo, "release"),
      "--inside-work-tree",
    ]);
    assert.equal(asked.code, 0, asked.stderr);

    const text = await reportText();
    const report = join(dir, "report.json");
    await Deno.writeTextFile(report, text);
    const runId = JSON.parse(text).runId;
    const ledger = join(dir, "ledger.json");
    await appendBlock(ledger, "declaration", { note: "an earlier block" });
    const { head, index } = await appendBlock(ledger, "report", {
      run_id: runId,
      report: "report.json",
      digest: `sha256:${sha256Hex(text)}`,
    });
    const env = join(dir, "report.json.intoto.json");
    const a = await verity([
      "attest",
      report,
      "--key",
      join(dir, "k.pem"),
      "--ledger",
      ledger,
      "--expected-head",
      head,
      "--out",
      env,
    ]);
    assert.equal(a.code, 0, a.stdout + a.stderr);
    const envelope = JSON.parse(await Deno.readTextFile(env));
    const statement = JSON.parse(atob(envelope.payload));
    assert.equal(statement._type, "https://in-toto.io/Statement/v1");
    assert.equal(statement.subject[0].digest.sha256, sha256Hex(text));
    assert.deepEqual(statement.predicate.ledger, { block: index, head });
    assert.equal(statement.predicate.summary.verdicts, 70);

    const all = (over: Partial<Record<string, string>> = {}) => [
      "attest",
      "verify",
      over.env ?? env,
      "--key",
      over.key ?? join(dir, "k.pub.pem"),
      "--report",
      over.report ?? report,
      "--ledger",
      over.ledger ?? ledger,
      "--expected-head",
      over.head ?? head,
    ];
    const ok = await verity(all());
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(
      ok.stdout,
      /attestation verified: signature, subject, re-derivation, ledger chain, block and head/,
    );
    const sigOnly = await verity([
      "attest",
      "verify",
      env,
      "--key",
      join(dir, "k.pub.pem"),
    ]);
    assert.equal(sigOnly.code, 0, sigOnly.stdout);

    // Wrong key.
    const wrong = await verity(all({ key: join(dir, "o.pub.pem") }));
    assert.equal(wrong.code, 1);
    assert.match(wrong.stdout, /REFUSED signature: no signature verifies/);
    // One byte of the payload flipped (the subject digest's first hex digit).
    const body = atob(envelope.payload);
    const at = body.indexOf(sha256Hex(text));
    const flip = body[at] === "0" ? "1" : "0";
    const flipped = join(dir, "flipped.json");
    await Deno.writeTextFile(
      flipped,
      JSON.stringify({
        ...envelope,
        payload: btoa(body.slice(0, at) + flip + body.slice(at + 1)),
      }),
    );
    const f = await verity(all({ env: flipped }));
    assert.equal(f.code, 1);
    assert.match(f.stdout, /REFUSED signature/);
    // One byte of the report changed: not the attested subject.
    const edited = join(dir, "edited.json");
    await Deno.writeTextFile(
      edited,
      text.replace('"wallMs": 3', '"wallMs": 4'),
    );
    const e = await verity(all({ report: edited }));
    assert.equal(e.code, 1);
    assert.match(e.stdout, /REFUSED subject/);
    // Another head than the one the ledger replays to.
    const h = await verity(all({ head: "sha256:" + "0".repeat(64) }));
    assert.equal(h.code, 1);
    assert.match(h.stdout, /LEDGER ledger head/);
    // Unreadable inputs: exit 2.
    assert.equal((await verity(all({ key: join(dir, "k.pem") }))).code, 2);
    await Deno.writeTextFile(join(dir, "bad.json"), "{not json");
    assert.equal((await verity(all({ env: join(dir, "bad.json") }))).code, 2);
    // attest refuses to sign a report that does not re-derive.
    const forged = join(dir, "forged.json");
    await Deno.writeTextFile(
      forged,
      text.replace('"kind": "NOT_APPLICABLE"', '"kind": "PASS"'),
    );
    const refused = await verity([
      "attest",
      forged,
      "--key",
      join(dir, "k.pem"),
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /does not verify: not signed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
