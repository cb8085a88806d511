/**
 * Report formats at the command line: `verity report --format` and
 * `verity run --html/--sarif/--junit`. The renderers are pure; this file
 * supplies what SARIF needs from the disk (the repository root, the
 * definition's line numbers) and writes files atomically.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors.ts";
import { isDirectory } from "../common/exists.ts";
import type { Report } from "../report/report.ts";
import { renderText } from "../report/text.ts";
// The HTML, JUnit and SARIF renderers load when a report is rendered in
// their format: a run without --html/--sarif/--junit never loads them.
import type { SarifOptions } from "../report/sarif.ts";
import { gitTopLevel, writeFileAtomic } from "./_io.ts";

/** The formats `verity report --format` accepts. */
export const REPORT_FORMATS = [
  "text",
  "json",
  "html",
  "sarif",
  "junit",
  "markdown",
] as const;

/** One report format. */
export type ReportFormat = typeof REPORT_FORMATS[number];

/** Check a `--format` value (UsageError, exit 2, when unknown). */
export function parseReportFormat(command: string, v: unknown): ReportFormat {
  const s = v === undefined ? "text" : String(v);
  if (!(REPORT_FORMATS as readonly string[]).includes(s)) {
    throw new UsageError(
      `verity ${command}: --format must be one of ${
        REPORT_FORMATS.join(", ")
      }, got ${JSON.stringify(s)}`,
    );
  }
  return s as ReportFormat;
}

/**
 * What SARIF needs from the disk and the environment: the repository
 * holding the definition file (its git top level, else the current
 * directory), each tool's line in the definition (read where it was, or,
 * for a report from another machine, at its path under the root; none
 * when neither is here) and `VERITY_DOCS_URL` (verity's docs/ directory,
 * for each rule's `helpUri`). Requires `--allow-read`, `--allow-env` and
 * `--allow-run=git`.
 */
export async function sarifContext(report: Report): Promise<SarifOptions> {
  const file = resolve(report.provenance.definition.file);
  const { definitionPath, definitionToolLines } = await import(
    "../report/sarif.ts"
  );
  const root = await gitTopLevel(dirname(file)) ?? Deno.cwd();
  let toolLines: Record<string, number> = {};
  for (const f of [file, resolve(root, definitionPath(file, root))]) {
    try {
      toolLines = definitionToolLines(await Deno.readTextFile(f));
      break;
    } catch {
      // not here: every result points at line 1
    }
  }
  const docsUrl = Deno.env.get("VERITY_DOCS_URL") || null;
  if (docsUrl !== null && !URL.canParse(docsUrl)) {
    throw new UsageError(
      `VERITY_DOCS_URL must be an absolute URL (verity's docs/ directory), got ${
        JSON.stringify(docsUrl)
      }`,
    );
  }
  return { root, toolLines, docsUrl };
}

/** Render a report in one format. Requires what {@linkcode sarifContext} does for SARIF. */
export async function renderReport(
  report: Report,
  format: ReportFormat,
): Promise<string> {
  switch (format) {
    case "text":
      return renderText(report) + "\n";
    case "json":
      return JSON.stringify(report, null, 1) + "\n";
    case "html":
      return (await import("../report/html.ts")).renderHtml(report);
    case "sarif": {
      const { renderSarif } = await import("../report/sarif.ts");
      return renderSarif(report, await sarifContext(report));
    }
    case "junit":
      return (await import("../report/junit.ts")).renderJunit(report);
    case "markdown":
      return (await import("../report/markdown.ts")).renderMarkdown(report);
  }
}

/** Files `verity run` writes beside the report, by format. */
export type ReportOutputs = Partial<Record<"html" | "sarif" | "junit", string>>;

/**
 * Read `--html/--sarif/--junit FILE` and check, before anything runs, that
 * each can be written: its directory exists and the path is not a
 * directory. Bad paths are a UsageError (exit 2). Requires `--allow-read`.
 */
export async function reportOutputs(
  command: string,
  values: Record<string, unknown>,
): Promise<ReportOutputs> {
  const out: ReportOutputs = {};
  const seen = new Map<string, string>();
  for (const format of ["html", "sarif", "junit"] as const) {
    const v = values[format];
    if (v === undefined) continue;
    const path = String(v);
    if (path === "") {
      throw new UsageError(`verity ${command}: --${format} needs a file path`);
    }
    const abs = resolve(path);
    const other = seen.get(abs);
    if (other) {
      throw new UsageError(
        `verity ${command}: --${other} and --${format} both write ${path}`,
      );
    }
    seen.set(abs, format);
    if (!await isDirectory(dirname(abs))) {
      throw new UsageError(
        `verity ${command}: --${format} ${path}: directory ${
          dirname(abs)
        } does not exist`,
      );
    }
    if (await isDirectory(abs)) {
      throw new UsageError(
        `verity ${command}: --${format} ${path} is a directory`,
      );
    }
    out[format] = abs;
  }
  return out;
}

/**
 * Write each requested rendering atomically (temp file + rename); returns
 * the paths written. Requires `--allow-write` (and what SARIF needs).
 */
export async function writeReportOutputs(
  report: Report,
  outputs: ReportOutputs,
): Promise<string[]> {
  const written: string[] = [];
  for (const format of ["html", "sarif", "junit"] as const) {
    const path = outputs[format];
    if (path === undefined) continue;
    await writeFileAtomic(path, await renderReport(report, format));
    written.push(path);
  }
  return written;
}
