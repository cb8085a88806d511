/**
 * What the guard holds a live server to: each audited tool's contract hash
 * under its recipe, the tool as audited, and the audit's verdicts on it.
 * Read from a capture manifest (contracts only) or from an audit report
 * (its raw `tools/list` pages hashed under recipe 3, and its verdicts).
 * Pure.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import { buildManifest, readDeclaration } from "../evidence/manifest.ts";
import type { Recipe } from "../evidence/recipes.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** One verdict of the audit on a tool (one argument set, one test). */
export interface AuditedVerdict {
  test: string;
  hint: string;
  /** The hint as declared: `TRUE`, `FALSE`, `ABSENT` or `MALFORMED`. */
  declared: string;
  /** e.g. `PASS`, `VIOLATION`, `INCONCLUSIVE:CALL_ERROR`. */
  outcome: string;
  variant: string | null;
}

/** One audited tool. */
export interface AuditedTool {
  recipe: Recipe;
  hash: string;
  /** The tool as audited (to name what moved). */
  raw: Record<string, unknown>;
  verdicts: AuditedVerdict[];
}

/** The audit evidence a guard session checks against. */
export interface Audited {
  kind: "manifest" | "report";
  file: string;
  /** `sha256:` of the evidence file (for a report, the attested subject). */
  digest: string;
  tools: ReadonlyMap<string, AuditedTool>;
}

/**
 * The audited contracts of a capture manifest (verity's or
 * mcp-evidence-validator's declared form). Throws
 * {@linkcode DefinitionError} naming the file and key for anything
 * `verity diff` would refuse.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = auditedManifest({ tools: [{ name: "t" }], contract_recipe: "1" }, "m.json", "sha256:" + "0".repeat(64));
 * assert.equal(a.tools.get("t")?.recipe, "1");
 * ```
 */
export function auditedManifest(
  doc: unknown,
  file: string,
  digest: string,
): Audited {
  const d = readDeclaration(doc, file);
  const tools = new Map<string, AuditedTool>();
  for (const t of d.tools) {
    tools.set(t.name, {
      recipe: t.recipe,
      hash: t.hash,
      raw: t.tool,
      verdicts: [],
    });
  }
  return { kind: "manifest", file, digest, tools };
}

function text(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/**
 * The audited contracts and verdicts of an audit report: its raw
 * `tools/list` pages hashed under recipe 3, every verdict on each tool. A
 * tool listed twice is left out (which contract was audited is ambiguous).
 * Throws {@linkcode DefinitionError} naming the file and key when the
 * report has no listing or verdicts to read.
 */
export function auditedReport(
  doc: unknown,
  file: string,
  digest: string,
): Audited {
  const fail = (key: string, msg: string): never => {
    throw new DefinitionError(file, key, msg);
  };
  if (!isPlainObject(doc)) return fail("", "must be a verity audit report");
  const pages = isPlainObject(doc.protocol) ? doc.protocol.toolsList : null;
  if (!Array.isArray(pages) || pages.some((p) => typeof p !== "string")) {
    fail("protocol.toolsList", "must be the raw tools/list pages (strings)");
  }
  if (!Array.isArray(doc.verdicts)) fail("verdicts", "must be an array");
  const m = buildManifest({
    pageTexts: pages as string[],
    serverInfo: null,
    protocolVersion: null,
    command: [],
    capturedAt: "",
    recipe: "3",
  });
  const count = new Map<string, number>();
  for (const t of m.tools) count.set(t.name, (count.get(t.name) ?? 0) + 1);
  const tools = new Map<string, AuditedTool>();
  for (const t of m.tools) {
    if (count.get(t.name) !== 1) continue;
    tools.set(t.name, {
      recipe: "3",
      hash: t.contract_hash,
      raw: t.raw,
      verdicts: [],
    });
  }
  (doc.verdicts as unknown[]).forEach((v, i) => {
    if (!isPlainObject(v)) return fail(`verdicts[${i}]`, "must be an object");
    const t = tools.get(String(v.tool));
    const [test, hint, declared, outcome] = [
      text(v.test),
      text(v.hint),
      text(v.declared),
      text(v.outcome),
    ];
    if (!t || !test || !hint || !declared || !outcome) return;
    t.verdicts.push({
      test,
      hint,
      declared,
      outcome,
      variant: text(v.variant),
    });
  });
  return { kind: "report", file, digest, tools };
}
