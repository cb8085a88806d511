/**
 * Appending each report's digest to `<runs-dir>/ledger.json`. Effectful.
 *
 * @module
 */
import { basename, join } from "node:path";
import { sha256Hex } from "../evidence/canonical.ts";
import { appendBlock } from "../evidence/ledger.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { UsageError } from "../errors.ts";

/**
 * Append a `report` block (run id and the report file's `sha256:` digest)
 * and return the new head.
 */
export async function appendReportToLedger(
  runsDir: string,
  runId: string,
  report: { digest: string },
): Promise<{ path: string; index: number; head: string }> {
  const path = join(runsDir, "ledger.json");
  const r = await appendBlock(path, "report", {
    run_id: runId,
    report: `${runId}/report.json`,
    digest: report.digest,
  });
  return { path, index: r.index, head: r.head };
}

/**
 * Write an evidence file of `capture` or `reality` (`--out`) atomically;
 * with `--ledger`, append a block recording it (type `manifest` or
 * `reality`: the file's name and the SHA-256 of its text) and print the
 * new head on stderr. A file that cannot be written is a
 * {@linkcode UsageError}; so is a ledger that is not verity's or whose
 * chain does not verify.
 */
export async function writeDocument(
  command: string,
  type: "manifest" | "reality",
  out: string,
  text: string,
  ledger: string | null,
): Promise<void> {
  try {
    await writeTextFileAtomic(out, text);
  } catch (e) {
    throw new UsageError(
      `verity ${command}: --out ${out}: cannot write: ${(e as Error).message}`,
    );
  }
  if (ledger === null) return;
  const digest = `sha256:${sha256Hex(text)}`;
  const r = await appendBlock(ledger, type, { file: basename(out), digest });
  console.error(
    `ledger: ${ledger} block ${r.index} records ${out} (${digest}), head ${r.head}`,
  );
}
