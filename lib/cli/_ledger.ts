/**
 * Appending each report's digest to `<runs-dir>/ledger.json`. Effectful.
 *
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../evidence/canonical.ts";
import { appendBlock } from "../evidence/ledger.ts";

/** Append a `report` block (run id and the report file's SHA-256) and return the new head. */
export async function appendReportToLedger(
  runsDir: string,
  runId: string,
  reportText: string,
): Promise<{ path: string; index: number; head: string }> {
  const digest = `sha256:${sha256Hex(reportText)}`;
  const path = join(runsDir, "ledger.json");
  const r = await appendBlock(path, "report", {
    run_id: runId,
    report: `${runId}/report.json`,
    digest,
  });
  return { path, index: r.index, head: r.head };
}
