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
import { type Report, REPORT_SCHEMA, verifyReport } from "../report/report.ts";
import { parseReportFormat, renderReport } from "./_formats.ts";
import { readTextMaybeGzip } from "../common/read_text.ts";

export const HELP =
  `verity report <run-id|path> [--format text|json|html|sarif|junit] [--runs-dir DIR]
verity report verify <report.json | report.json.gz>

Show a saved report, or verify one: re-derive every verdict and the
expectation check from the evidence inside the report with the same pure
engine, and re-hash every snapshot. Exit 1 on any difference.

Options:
  --format FORMAT      text (default), json, html (one self-contained page),
                       sarif (SARIF 2.1.0, for code scanning) or junit (JUnit XML)
  --runs-dir DIR       where run ids are looked up (default runs/)
  -h, --help           show this help`;

async function readReport(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readTextMaybeGzip(path);
  } catch (e) {
    throw new UsageError(
      e instanceof SyntaxError
        ? e.message
        : `${path}: cannot read report (${
          e instanceof Deno.errors.NotFound
            ? "no such file"
            : (e as Error).message
        })`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${path}: not JSON (${(e as Error).message})`);
  }
}

async function locate(ref: string, runsDir: string): Promise<string> {
  for (
    const cand of [
      ref,
      join(ref, "report.json"),
      join(ref, "report.json.gz"),
      join(runsDir, ref, "report.json"),
    ]
  ) {
    try {
      if ((await Deno.stat(cand)).isFile) return cand;
    } catch {
      // next
    }
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
  });
  if (p.values.help) {
    console.log(HELP);
    return 0;
  }
  const runsDir = String(p.values["runs-dir"] ?? "runs");
  if (p.positionals[0] === "verify") {
    if (p.positionals.length !== 2) {
      throw new UsageError("verity report verify: expected one report path");
    }
    const path = await locate(p.positionals[1]!, runsDir);
    const problems = verifyReport(await readReport(path));
    if (problems.length === 0) {
      console.log(
        `report verified: ${path}: every verdict, snapshot digest and the expectation check re-derived from its evidence`,
      );
      return 0;
    }
    for (const pr of problems) {
      console.log(`MISMATCH ${pr.where}: ${pr.message}`);
    }
    console.log(`report NOT verified: ${problems.length} difference(s)`);
    return 1;
  }
  if (p.positionals.length !== 1) {
    throw new UsageError("verity report: expected one run id or path");
  }
  const format = parseReportFormat("report", p.values.format);
  const path = await locate(p.positionals[0]!, runsDir);
  const r = await readReport(path) as Report;
  if (r?.schema !== REPORT_SCHEMA) {
    throw new UsageError(`${path}: not a ${REPORT_SCHEMA} report`);
  }
  console.log((await renderReport(r, format)).replace(/\n$/, ""));
  return 0;
}
