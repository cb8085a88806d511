/**
 * Verify one evidence document (an audit report, a reality report, a
 * capture manifest) by re-derivation and, when a ledger is given, by its
 * binding to the ledger head. Shared by `report verify` and
 * `attest verify`.
 *
 * Requires `--allow-read`.
 *
 * @module
 */
import { ENGINE_VERSION } from "../verdicts/engine.ts";
import { basename } from "node:path";
import { UsageError } from "../errors.ts";
import { type ParsedCommandLine, stringOption } from "./args.ts";
import { parseEvidenceJson } from "../evidence/canonical.ts";
import { bindToLedgerFile } from "../evidence/ledger.ts";
import { readEvidenceText, readTextDocument } from "../evidence/files.ts";
import { MANIFEST_FORMAT, readDeclaration } from "../evidence/manifest.ts";
import {
  REALITY_REPORT_SCHEMA,
  type RealityReport,
  rejudgeReport,
} from "../reality/report.ts";
import { REPORT_SCHEMAS } from "../report/report.ts";
import { verifyReport } from "../report/verify.ts";
import { seedReferenceOf } from "../report/pack.ts";
import { loadDefinition } from "../definition/load.ts";
import { rebuiltSeed } from "../state_io/seed_ref.ts";
import { snapshotDigest } from "../state/delta.ts";
import type { Snapshot } from "../state/types.ts";
import { exists } from "../common/exists.ts";

/** Which kind of document a file holds. */
export type DocumentKind = "report" | "reality" | "manifest";

/** Options for {@linkcode verifyDocument}. */
export interface VerifyDocumentOptions {
  /** The ledger file; null: re-derivation only. */
  ledger: string | null;
  expectedHead: string | null;
  expectedHeadFile: string | null;
  /**
   * The definition (directory or toml) a `verity.report/3` report's seed
   * is rebuilt from; null or absent: the file the report names, when it
   * exists.
   */
  definition?: string | null;
}

/** The {@linkcode VerifyDocumentOptions} of `--ledger`, `--expected-head`, `--expected-head-file` and `--definition`. */
export function documentOptions(
  values: ParsedCommandLine["values"],
): VerifyDocumentOptions {
  return {
    ledger: stringOption(values.ledger),
    expectedHead: stringOption(values["expected-head"]),
    expectedHeadFile: stringOption(values["expected-head-file"]),
    definition: stringOption(values.definition),
  };
}

/** What {@linkcode verifyDocument} found. */
export interface DocumentVerification {
  ok: boolean;
  kind: DocumentKind;
  /** `sha256:` of the (uncompressed) file bytes. */
  digest: string;
  /** The parsed document. */
  value: Record<string, unknown>;
  /** The ledger block recording the digest, when bound. */
  block:
    | { index: number; type: string; record: Record<string, unknown> }
    | null;
  head: string | null;
  lines: string[];
}

/** Read the head from `--expected-head` or `--expected-head-file`. */
export async function resolveHead(
  command: string,
  head: string | null,
  headFile: string | null,
): Promise<string> {
  if (head !== null && headFile !== null) {
    throw new UsageError(
      `${command}: give --expected-head or --expected-head-file, not both`,
    );
  }
  if (headFile !== null) head = (await readTextDocument(headFile)).text.trim();
  if (head === null) {
    throw new UsageError(
      `${command}: --expected-head is required with --ledger (or --expected-head-file): a ledger checked only against itself proves nothing to anyone else`,
    );
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(head)) {
    throw new UsageError(
      `${command}: expected head ${
        JSON.stringify(head)
      } is not sha256:<64 hex>`,
    );
  }
  return head;
}

/** Read and strictly parse an evidence document (gzip allowed); exit 2 when unreadable. */
export async function readDocument(
  path: string,
): Promise<{ value: unknown; text: string; digest: string }> {
  const { text, digest } = await readEvidenceText(path);
  try {
    return { value: parseEvidenceJson(text), text, digest };
  } catch (e) {
    throw new UsageError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}

/** Which kind of document a parsed value is, or null. */
export function documentKind(v: unknown): DocumentKind | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (REPORT_SCHEMAS.includes(o.schema as string)) return "report";
  if (o.schema === REALITY_REPORT_SCHEMA) return "reality";
  if (o.format === MANIFEST_FORMAT) return "manifest";
  return null;
}

function rederive(
  kind: DocumentKind,
  value: unknown,
  path: string,
  seed: Snapshot | null,
): string[] {
  if (kind === "report") {
    return verifyReport(value, { seed }).map((p) =>
      `MISMATCH ${p.where}: ${p.message}`
    );
  }
  if (kind === "reality") {
    try {
      return rejudgeReport(value as RealityReport).map((d) => `MISMATCH ${d}`);
    } catch (e) {
      return [`MISMATCH report: cannot re-derive: ${(e as Error).message}`];
    }
  }
  try {
    readDeclaration(value, path);
    return [];
  } catch (e) {
    return [`MISMATCH ${(e as Error).message}`];
  }
}

/**
 * Verify `path`: re-derive it from its evidence, then (with a ledger)
 * check the chain against the expected head and find the block that
 * records the file's digest. Throws {@linkcode UsageError} for unreadable
 * input (exit 2).
 */
export async function verifyDocument(
  path: string,
  options: VerifyDocumentOptions,
  command = "verity report verify",
): Promise<DocumentVerification> {
  const head = options.ledger === null && options.expectedHead === null &&
      options.expectedHeadFile === null
    ? null
    : await resolveHead(
      command,
      options.expectedHead,
      options.expectedHeadFile,
    );
  if (head !== null && options.ledger === null) {
    throw new UsageError(`${command}: --expected-head needs --ledger`);
  }
  const read = await readDocument(path);
  const digest = read.digest;
  let value = read.value;
  const kind = documentKind(value);
  if (kind === null) {
    throw new UsageError(
      `${path}: not a verity report, reality report or capture manifest`,
    );
  }
  // Manifests hash their declarations as Python reads numbers (1.0 stays a float).
  if (kind === "manifest") {
    value = parseEvidenceJson(read.text, { numbers: "python" });
  }
  // verity.report/3: the seed state is rebuilt from the definition and
  // must hash to the digest the report names; without the definition
  // nothing that reads the state can be checked, so verify refuses.
  let seed: Snapshot | null = null;
  const seedLines: string[] = [];
  let seedFailed = false;
  const ref = kind === "report"
    ? seedReferenceOf(value as object as Record<string, unknown>)
    : null;
  if (ref !== null) {
    const given = options.definition ?? null;
    const dir = given ??
      (await exists(ref.ref.file) ? ref.ref.file : null);
    if (dir === null) {
      throw new UsageError(
        `${path}: its seed state is kept by reference to definition ${ref.ref.definition} (${ref.ref.file}, not found here): give --definition DIR (that definition's directory) to rebuild and check it`,
      );
    }
    const def = await loadDefinition(dir);
    if (def.digest !== ref.ref.definition) {
      seedFailed = true;
      seedLines.push(
        `MISMATCH snapshots.${ref.digest}: the seed is kept by reference to definition ${ref.ref.definition}, but ${dir} has digest ${def.digest}: nothing that reads the state was checked`,
      );
    } else {
      const rebuilt = await rebuiltSeed(def);
      const digest = snapshotDigest(rebuilt);
      if (digest !== ref.digest) {
        seedFailed = true;
        seedLines.push(
          `MISMATCH snapshots.${ref.digest}: the seed state rebuilt from ${dir} hashes to ${digest}: nothing that reads the state was checked`,
        );
      } else {
        seed = rebuilt;
        seedLines.push(
          `seed: rebuilt from ${dir} (definition ${def.digest}); it hashes to ${ref.digest}, as the report says`,
        );
      }
    }
  }
  const lines = seedFailed ? seedLines : rederive(kind, value, path, seed);
  const rederived = lines.length === 0;
  let block: DocumentVerification["block"] = null;
  if (options.ledger !== null && head !== null) {
    const o = value as Record<string, unknown>;
    const expect = kind === "report" ? { run_id: o.runId } : {};
    // Streamed for verity's own layout (a ledger of any size).
    const b = await bindToLedgerFile(
      options.ledger,
      head,
      digest,
      [kind], // each kind is appended as a block of its own name
      expect,
    );
    for (const pr of b.problems) lines.push(`LEDGER ${pr}`);
    block = b.block;
    if (b.ok) {
      lines.push(
        `bound: ${basename(path)} (${digest}) is block ${
          b.block!.index
        } of ${options.ledger}, whose chain verifies against head ${head}`,
      );
    }
  }
  const ok = rederived && lines.every((l) => !l.startsWith("LEDGER "));
  const what = kind === "report"
    ? "every declaration, call outcome, snapshot digest, verdict and the expectation check"
    : kind === "reality"
    ? "every verdict and the score"
    : "every contract hash";
  if (rederived) {
    const engine = kind === "report"
      ? (value as { provenance?: { engine?: unknown } }).provenance?.engine
      : ENGINE_VERSION;
    lines.unshift(
      `re-derived: ${path}: ${what} agree with the raw evidence${
        engine !== ENGINE_VERSION
          ? ` (judged under verdict rules version ${engine}, and re-derived under them; this verity judges new runs under version ${ENGINE_VERSION})`
          : ""
      }`,
    );
  }
  if (!seedFailed) lines.splice(rederived ? 1 : 0, 0, ...seedLines);
  if (ok && head === null && kind === "report") {
    lines.push(
      "not bound: provenance, commands, timings and the raw evidence itself are covered only by the file's digest; give --ledger and --expected-head to check it",
    );
  }
  const problems =
    lines.filter((l) => l.startsWith("MISMATCH ") || l.startsWith("LEDGER "))
      .length;
  lines.push(
    ok
      ? `${kind} verified${head ? " and bound to the ledger head" : ""}`
      : `${kind} NOT verified: ${problems} problem(s)`,
  );
  return {
    ok,
    kind,
    digest,
    value: value as Record<string, unknown>,
    block,
    head,
    lines,
  };
}
