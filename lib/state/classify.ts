/**
 * How a definition classifies a region: a table or path named in an
 * adapter's `business` or `append_only` list, exactly or by a pattern
 * (`mcp_*`, `.results/**`), is of that class; anything else is
 * unclassified. A pattern may match nothing in the seed (a table created
 * on first use, a result file written by a call); a plain name must name
 * something seeded (`lib/state_io/seeded.ts`). Pure.
 *
 * Patterns: `*` matches any characters but `/`, `**` any characters
 * including `/`, `?` one character but `/`; `dir/**` also matches `dir`
 * itself. An exact name wins over a pattern; among patterns the first
 * listed wins, business before append-only.
 *
 * @module
 */
import type { AdapterDef } from "../definition/types.ts";
import type { Category } from "./types.ts";

/**
 * Whether a classification entry is a pattern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isPattern("mcp_*"), true);
 * assert.equal(isPattern("items"), false);
 * ```
 */
export function isPattern(entry: string): boolean {
  return entry.includes("*") || entry.includes("?");
}

const compiled = new Map<string, RegExp>();

function patternRegExp(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re !== undefined) return re;
  let src = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      // "dir/**" also matches "dir": the slash before ** is optional.
      if (src.endsWith("\\/") && i + 2 === pattern.length) {
        src = src.slice(0, -2) + "(?:\\/.*)?";
      } else src += ".*";
      i++;
    } else if (c === "*") src += "[^/]*";
    else if (c === "?") src += "[^/]";
    else src += c.replace(/[.+^${}()|[\]\\/]/g, "\\$&");
  }
  re = new RegExp(`^${src}$`, "s");
  compiled.set(pattern, re);
  return re;
}

/**
 * Whether `name` matches a pattern (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(matchesPattern(".results/**", ".results/2026_q.csv"), true);
 * assert.equal(matchesPattern(".results/**", ".results"), true);
 * assert.equal(matchesPattern("mcp_*", "mcp_insights"), true);
 * assert.equal(matchesPattern("logs/*", "logs/a/b.log"), false);
 * ```
 */
export function matchesPattern(pattern: string, name: string): boolean {
  return patternRegExp(pattern).test(name);
}

/**
 * The class of a region (a table name, or a path relative to the state
 * directory for fs), by the adapter's lists.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = { business: ["items", "mcp_*"], append_only: ["log_*"] };
 * assert.equal(categoryOf(a, "mcp_insights"), "business");
 * assert.equal(categoryOf(a, "log_2026"), "append_only");
 * assert.equal(categoryOf(a, "cache"), "unclassified");
 * ```
 */
export function categoryOf(
  a: Pick<AdapterDef, "business" | "append_only">,
  name: string,
): Category {
  return classifyingEntry(a, name)?.category ?? "unclassified";
}

/**
 * The list entry that classifies `name`: an exact name first, then the
 * first matching pattern (business before append-only); null when none.
 */
export function classifyingEntry(
  a: Pick<AdapterDef, "business" | "append_only">,
  name: string,
): { entry: string; category: Category } | null {
  if (a.business.includes(name)) return { entry: name, category: "business" };
  if (a.append_only.includes(name)) {
    return { entry: name, category: "append_only" };
  }
  for (
    const [list, category] of [[a.business, "business"], [
      a.append_only,
      "append_only",
    ]] as const
  ) {
    for (const p of list) {
      if (isPattern(p) && matchesPattern(p, name)) {
        return { entry: p, category };
      }
    }
  }
  return null;
}
