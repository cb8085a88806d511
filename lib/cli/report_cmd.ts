/**
 * `verity report`: show a saved report, or re-derive and check it.
 *
 * Requires `--allow-read`.
 *
 * @module
 */
import { join } from "node:path";
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { type Report, REPORT_SCHEMAS } from "../report/report.ts";
import { openReport, reportText } from "../report/pack.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import {
  documentOptions,
  readDocument,
  verifyDocument,
} from "./_verify_document.ts";
import { parseReportFormat, renderReport } from "./_formats.ts";
import { terminalText } from "../common/show_controls.ts";

async function locate(ref: string, runsDir: string): Promise<string> {
  for (
    const cand of [
      ref,
      join(ref, "report.json"),
      join(ref, "report.json.gz"),
      join(runsDir, ref, "report.json"),
    ]
  ) {
    if (await Deno.stat(cand).then((s) => s.isFile, () => false)) return cand;
  }
  throw new UsageError(
    `verity report: no report found for ${
      JSON.stringify(ref)
    } (looked in ${runsDir})`,
  );
}

/** Run `verity report`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("report", argv, {
    format: { type: "string" },
    "runs-dir": { type: "string" },
    ledger: { type: "string" },
    "expected-head": { type: "string" },
    "expected-head-file": { type: "string" },
    definition: { type: "string" },
  });
  const runsDir = String(p.values["runs-dir"] ?? "runs");
  if (p.positionals[0] === "verify") {
    if (p.positionals.length !== 2) {
      throw new UsageError("verity report verify: expected one file");
    }
    const path = await locate(p.positionals[1]!, runsDir);
    const result = await verifyDocument(path, documentOptions(p.values));
    for (const line of result.lines) console.log(terminalText(line));
    return result.ok ? 0 : 1;
  }
  if (
    p.values.ledger !== undefined || p.values["expected-head"] !== undefined
  ) {
    throw new UsageError(
      "verity report: --ledger and --expected-head apply to verity report verify",
    );
  }
  if (p.values.definition !== undefined) {
    throw new UsageError(
      "verity report: --definition applies to verity report verify",
    );
  }
  if (p.positionals.length !== 1) {
    throw new UsageError("verity report: expected one run id or path");
  }
  const format = parseReportFormat("report", p.values.format);
  const path = await locate(p.positionals[0]!, runsDir);
  const stored = (await readDocument(path)).value;
  if (
    !isPlainObject(stored) || !REPORT_SCHEMAS.includes(String(stored.schema))
  ) {
    throw new UsageError(
      `${path}: not a verity report (schema ${REPORT_SCHEMAS.join(" or ")})`,
    );
  }
  if (format === "json") {
    // The stored form as it is.
    const out = Deno.stdout.writable.getWriter();
    await out.write(new TextEncoder().encode(reportText(stored)));
    out.releaseLock();
    return 0;
  }
  const opened = openReport(stored);
  if ("problem" in opened) {
    throw new UsageError(
      `${path}: cannot rebuild the report: ${opened.problem} (verity report verify names every problem)`,
    );
  }
  const r = opened.report as unknown as Report;
  const rendered = (await renderReport(r, format)).replace(/\n$/, "");
  console.log(format === "text" ? terminalText(rendered) : rendered);
  return 0;
}
