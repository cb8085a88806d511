/**
 * Publish the audits under results/ as evidence you can hand over: for each
 * audit directory, a ledger (`ledger.json`) with one `report` block per
 * report (created once, then only appended to), its head (`ledger.head`),
 * and an attestation per report (`<report>.intoto.json`: an in-toto
 * statement in a DSSE envelope, Ed25519) signed with the maintainers'
 * private key, whose public half is keys/verity-results.pub.pem.
 *
 *   deno run -A scripts/publish_results.ts --key /path/to/private.pem results/memory-2026-11-30 ...
 *
 * Re-signing needs the maintainers' private key, which is never in the
 * repository; checking needs only the public key (tests/results_test.ts).
 *
 * @module
 */
import { basename, join, relative } from "node:path";
import { parseArgs } from "./_args.ts";
import { appendBlock } from "../lib/evidence/ledger.ts";
import { readEvidenceText } from "../lib/evidence/files.ts";
import { verifyLedgerText } from "../lib/evidence/chain.ts";
import { exists } from "../lib/common/exists.ts";

const REPORTS = [
  "report.json",
  "report.json.gz",
  "offline/report.json",
  "offline/report.json.gz",
];

async function verity(args: string[]): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../main.ts", import.meta.url).pathname,
      ...args,
    ],
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`verity ${args.join(" ")}: ${text}`);
  console.log(text.trimEnd());
}

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: { key: { type: "string" } },
  allowPositionals: true,
});
if (!values.key || positionals.length === 0) {
  console.error("usage: publish_results.ts --key PRIVATE.pem <results/dir>...");
  Deno.exit(2);
}
for (const dir of positionals) {
  const ledger = join(dir, "ledger.json");
  const headFile = join(dir, "ledger.head");
  let text = "";
  if (await exists(ledger)) text = await Deno.readTextFile(ledger);
  for (const rel of REPORTS) {
    const path = join(dir, rel);
    if (!(await exists(path))) continue;
    const { digest, text: reportText } = await readEvidenceText(path);
    if (!text.includes(digest)) {
      const runId = (JSON.parse(reportText) as { runId: string }).runId;
      const r = await appendBlock(ledger, "report", {
        run_id: runId,
        report: rel.replace(/\.gz$/, ""),
        digest,
      });
      await Deno.writeTextFile(headFile, r.head + "\n");
      text = await Deno.readTextFile(ledger);
      console.log(`${ledger}: block ${r.index} records ${rel} (${digest})`);
    }
  }
  const head = (await Deno.readTextFile(headFile)).trim();
  if (!verifyLedgerText(text, head).ok) {
    throw new Error(`${ledger} does not verify against ${headFile}`);
  }
  for (const rel of REPORTS) {
    const path = join(dir, rel);
    if (!(await exists(path))) continue;
    const def = join(
      "targets",
      basename(dir).replace(/-\d{4}-\d{2}-\d{2}$/, ""),
      "target.toml",
    );
    await verity([
      "attest",
      path,
      "--key",
      values.key,
      "--ledger",
      ledger,
      "--expected-head-file",
      headFile,
      ...(await exists(def) ? ["--definition", def] : []),
      "--out",
      join(dir, rel.replace(/\.gz$/, "") + ".intoto.json"),
    ]);
    console.log(`signed ${relative(".", path)}`);
  }
}
