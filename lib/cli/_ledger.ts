/**
 * Appending each report's digest to `<runs-dir>/ledger.json`. Effectful.
 *
 * @module
 */
import { basename, join } from "node:path";
import { sha256Hex } from "../evidence/canonical.ts";
import { appendBlock } from "../evidence/ledger.ts";

/**
 * Append a `report` block (run id and the report file's SHA-256, given as
 * the file's text or as its `sha256:` digest) and return the new head.
 */
export async function appendReportToLedger(
  runsDir: string,
  runId: string,
  report: string | { digest: string },
): Promise<{ path: string; index: number; head: string }> {
  const digest = typeof report === "string"
    ? `sha256:${sha256Hex(report)}`
    : report.digest;
  const path = join(runsDir, "ledger.json");
  const r = await appendBlock(path, "report", {
    run_id: runId,
    report: `${runId}/report.json`,
    digest,
  });
  return { path, index: r.index, head: r.head };
}

/**
 * Append a block recording an evidence file written by `capture` or
 * `reality` (type `manifest` or `reality`: the file's name and the SHA-256
 * of its text) to `ledgerPath`, and return the new head. Throws
 * {@linkcode UsageError} for a ledger that is not verity's or whose chain
 * does not verify.
 */
export async function appendDocumentToLedger(
  ledgerPath: string,
  type: "manifest" | "reality",
  file: string,
  text: string,
): Promise<{ path: string; index: number; head: string; digest: string }> {
  const digest = `sha256:${sha256Hex(text)}`;
  const r = await appendBlock(ledgerPath, type, {
    file: basename(file),
    digest,
  });
  return { path: ledgerPath, index: r.index, head: r.head, digest };
}
