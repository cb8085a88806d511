/**
 * The published audits under results/: each report re-derives with this
 * verity (a change to the verdict rules that would alter a published
 * verdict fails here, so the audits are re-run, or ENGINE_VERSION bumped,
 * with the change), and each audit's report, ledger, head and attestation
 * verify together with the committed public key
 * (keys/verity-results.pub.pem), in the one command a reviewer runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseEvidenceJson } from "../lib/evidence/canonical.ts";
import { readEvidenceText } from "../lib/evidence/files.ts";
import { verifyReport } from "../lib/report/verify.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const RESULTS = join(ROOT, "results");
const KEY = join(ROOT, "keys", "verity-results.pub.pem");
const MAIN = join(ROOT, "main.ts");

function existing(p: string): string | null {
  for (const cand of [p, `${p}.gz`]) {
    try {
      Deno.statSync(cand);
      return cand;
    } catch {
      // next
    }
  }
  return null;
}

const audits: { dir: string; reports: string[] }[] = [];
for (const dir of Deno.readDirSync(RESULTS)) {
  if (!dir.isDirectory) continue;
  const reports = ["report.json", "offline/report.json"]
    .map((rel) => existing(join(RESULTS, dir.name, rel)))
    .filter((p): p is string => p !== null);
  audits.push({ dir: join(RESULTS, dir.name), reports });
}

Deno.test("there are published audit reports", () => {
  assert.ok(
    audits.flatMap((a) => a.reports).length >= 2,
    `found ${audits.length}`,
  );
});

for (const { dir, reports } of audits.sort((a, b) => a.dir < b.dir ? -1 : 1)) {
  for (const path of reports) {
    const name = path.slice(RESULTS.length + 1);
    Deno.test(`published report re-derives: ${name}`, async () => {
      const report = parseEvidenceJson((await readEvidenceText(path)).text);
      assert.equal((report as { audit: boolean }).audit, true);
      assert.deepEqual(verifyReport(report), []);
    });
    Deno.test(`published report, ledger, head and attestation verify in one command: ${name}`, async () => {
      const envelope = path.replace(/\.gz$/, "") + ".intoto.json";
      assert.ok(
        existing(envelope) === envelope,
        `${name} has no signed attestation: the maintainers sign it with deno run -A scripts/publish_results.ts --key <their private key> ${
          dir.slice(ROOT.length)
        } (docs/evidence.md)`,
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          MAIN,
          "attest",
          "verify",
          envelope,
          "--key",
          KEY,
          "--report",
          path,
          "--ledger",
          join(dir, "ledger.json"),
          "--expected-head-file",
          join(dir, "ledger.head"),
        ],
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const text = new TextDecoder().decode(out.stdout) +
        new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, text);
      assert.match(
        text,
        /attestation verified: signature, subject, re-derivation, ledger chain, block and head/,
      );
    });
  }
}

Deno.test("results/RULES.md is what the current rules say of the published evidence", async () => {
  const { rederiveResults } = await import("../scripts/rederive_results.ts");
  // One section per report; a report published later (not yet listed) is
  // no failure here, only a listed section that no longer matches.
  const sections = (text: string) =>
    new Map(
      text.split(/^(?=## )/m).filter((x) => x.startsWith("## ")).map((x) => [
        x.split("\n")[0]!,
        x.trimEnd(),
      ]),
    );
  const committed = sections(
    await Deno.readTextFile(join(RESULTS, "RULES.md")),
  );
  const now = sections(await rederiveResults(RESULTS));
  assert.ok(committed.size > 0);
  for (const [head, body] of committed) {
    assert.equal(
      body,
      now.get(head),
      `${head}: re-generate with deno run -A scripts/rederive_results.ts > results/RULES.md`,
    );
  }
});
