/**
 * Over-declarations per tool, over all its argument sets. Pure.
 *
 * A verdict says whether one argument set behaved safely under a permissive
 * declaration. A tool is over-declared for a hint only when every argument
 * set tested behaved safely for that hint and no call errored: one set that
 * was unsafe, unknown or errored is enough to leave the declaration alone.
 *
 * @module
 */
import type { Verdict } from "../verdicts/types.ts";

/** One tool whose permissive hint was safe in every argument set. */
export interface OverDeclaration {
  tool: string;
  hint: string;
  /** The argument sets (variants) it was tested with; null is the unnamed set. */
  variants: (string | null)[];
}

/** A concurrent verdict with no attempts run says nothing either way. */
function notRun(v: Verdict): boolean {
  return v.test === "concurrent_idempotence" && v.evidence.counts === undefined;
}

function errored(v: Verdict): boolean {
  return v.facts.call_errored === true || v.facts.repeat_errored === true ||
    v.reason === "CALL_ERROR" || v.secondary.includes("CALL_ERROR");
}

/**
 * The over-declarations of a report, one per (tool, hint).
 *
 * @example
 * ```ts ignore
 * overDeclarations(report.verdicts);
 * // [{ tool: "create_entities", hint: "idempotentHint", variants: ["new", "existing_name"] }]
 * ```
 */
export function overDeclarations(
  verdicts: readonly Verdict[],
): OverDeclaration[] {
  const groups = new Map<string, Verdict[]>();
  for (const v of verdicts) {
    if (v.reason !== "PERMISSIVE_DECLARATION" || notRun(v)) continue;
    const k = `${v.tool}\u0000${v.hint}`;
    groups.set(k, [...(groups.get(k) ?? []), v]);
  }
  const out: OverDeclaration[] = [];
  for (const vs of groups.values()) {
    const first = vs[0]!;
    const variants = [...new Set(vs.map((v) => v.variant))];
    const safe = vs.every((v) => v.overDeclared && !errored(v));
    if (!safe) continue;
    out.push({ tool: first.tool, hint: first.hint, variants });
  }
  return out;
}

/** `create_entities idempotentHint (argument sets: new, existing_name)`. */
export function overDeclarationText(o: OverDeclaration): string {
  const named = o.variants.filter((v) => v !== null);
  return `${o.tool} ${o.hint}${
    named.length
      ? ` (argument sets: ${o.variants.map((v) => v ?? "default").join(", ")})`
      : ""
  }`;
}
