/**
 * One `tools/list` page checked against the audit: each tool hashed under
 * its audited recipe and compared with the audited contract, then passed
 * (with the audit's facts under `_meta`, and a refuted hint corrected by
 * policy), passed with a warning, or left out. Pure.
 *
 * @module
 */
import { needsOwnReader, parsePythonJson } from "../evidence/canonical.ts";
import { contractHash, type Recipe } from "../evidence/recipes.ts";
import { movedFields } from "../evidence/diff.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import type { Audited, AuditedTool } from "./audited.ts";
import type { GuardPolicy } from "./policy.ts";

/** The `_meta` key of the facts the guard adds to each passed tool. */
export const META_KEY = "io.verity/verdicts";

/** What the guard decided about one listed tool. */
export interface ToolDecision {
  name: string;
  action: "pass" | "warn" | "refuse";
  /** Why it is not a plain pass (the drift, not audited, listed twice); null for a pass. */
  reason: string | null;
  /** The listed contract's hash under `recipe` (the audited one, else 3). */
  hash: string;
  recipe: Recipe;
}

/** A checked page: the message the client gets, or why the page cannot be checked. */
export interface CheckedPage {
  /** The response with its tools filtered and annotated; null when `problem` is set. */
  message: Record<string, unknown> | null;
  decisions: ToolDecision[];
  /** Entries that were not tools (left out), or why the whole page was refused. */
  problems: string[];
}

function reasonOf(
  name: string,
  exact: Record<string, unknown>,
  a: AuditedTool | undefined,
  audited: Audited,
  hash: string,
): string | null {
  if (a === undefined) {
    return `not audited: ${audited.file} has no tool ${JSON.stringify(name)}`;
  }
  if (hash === a.hash) return null;
  const fields = movedFields(a.raw, exact, a.recipe).map((f) => f.field);
  return `contract drifted since the audit: ${
    fields.join(", ") || "its contract"
  } changed (recipe ${a.recipe}: audited ${a.hash}, listed ${hash})`;
}

/** The tool as the client sees it: the audit's facts under `_meta`, a refuted hint corrected. */
function withFacts(
  tool: Record<string, unknown>,
  a: AuditedTool | undefined,
  d: ToolDecision,
  audited: Audited,
  policy: GuardPolicy,
): Record<string, unknown> {
  const out = { ...tool };
  const verdicts = d.action === "pass" ? a?.verdicts ?? [] : [];
  const corrected: { hint: string; declared: boolean; now: boolean }[] = [];
  const ann = tool.annotations;
  if (policy.correctHints && isPlainObject(ann)) {
    const fixed = { ...ann };
    for (const v of verdicts) {
      const claim = v.declared === "TRUE";
      if (!v.outcome.startsWith("VIOLATION") || fixed[v.hint] !== claim) {
        continue;
      }
      fixed[v.hint] = !claim;
      corrected.push({ hint: v.hint, declared: claim, now: !claim });
    }
    if (corrected.length > 0) out.annotations = fixed;
  }
  const meta: Record<string, unknown> = {};
  // A server cannot speak for verity: its own io.verity/ keys are dropped.
  if (isPlainObject(tool._meta)) {
    for (const [k, v] of Object.entries(tool._meta)) {
      if (!k.startsWith("io.verity/")) meta[k] = v;
    }
  }
  meta[META_KEY] = {
    [audited.kind]: audited.digest,
    contract_hash: d.hash,
    contract_recipe: d.recipe,
    verdicts,
    corrected,
    warning: d.reason,
  };
  out._meta = meta;
  return out;
}

/**
 * Check one `tools/list` response (its raw text) against the audit.
 * `seen` holds the names listed so far in this listing (a tool listed
 * twice is drift); it is updated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const audited = { kind: "manifest" as const, file: "m.json", digest: "sha256:x", tools: new Map() };
 * const page = checkPage('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t"}]}}', audited,
 *   { drift: "refuse", correctHints: true }, new Set());
 * assert.equal(page.decisions[0]?.action, "refuse");
 * assert.deepEqual((page.message?.result as { tools: unknown[] }).tools, []);
 * ```
 */
export function checkPage(
  text: string,
  audited: Audited,
  policy: GuardPolicy,
  seen: Set<string>,
): CheckedPage {
  const refused = (p: string): CheckedPage => ({
    message: null,
    decisions: [],
    problems: [p],
  });
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    return refused(`not JSON: ${(e as Error).message}`);
  }
  const result = isPlainObject(msg) ? msg.result : undefined;
  const tools = isPlainObject(result) ? result.tools : undefined;
  if (!isPlainObject(msg) || !isPlainObject(result) || !Array.isArray(tools)) {
    return refused("result.tools is not an array");
  }
  // Numbers as Python reads them (`1.0`) where that differs: the hash a capture makes.
  let exact: unknown[] = tools;
  if (needsOwnReader(text)) {
    const r = parsePythonJson(text) as { result: { tools: unknown[] } };
    exact = r.result.tools;
  }
  const decisions: ToolDecision[] = [];
  const problems: string[] = [];
  const passed: Record<string, unknown>[] = [];
  tools.forEach((t, i) => {
    if (!isPlainObject(t) || typeof t.name !== "string") {
      problems.push(`tools[${i}] is not a tool with a string name: left out`);
      return;
    }
    const a = audited.tools.get(t.name);
    const recipe = a?.recipe ?? "3";
    const x = isPlainObject(exact[i]) ? exact[i] : t;
    let hash = "";
    let reason: string | null;
    try {
      hash = contractHash(x, recipe);
      reason = seen.has(t.name)
        ? "listed twice in one listing"
        : reasonOf(t.name, x, a, audited, hash);
    } catch (e) {
      // A lone surrogate has no canonical form, so no contract hash.
      reason = `its contract cannot be hashed: ${(e as Error).message}`;
    }
    seen.add(t.name);
    const action = reason === null
      ? "pass"
      : policy.drift === "warn"
      ? "warn"
      : "refuse";
    const d: ToolDecision = { name: t.name, action, reason, hash, recipe };
    decisions.push(d);
    if (action !== "refuse") passed.push(withFacts(t, a, d, audited, policy));
  });
  return {
    message: { ...msg, result: { ...result, tools: passed } },
    decisions,
    problems,
  };
}
