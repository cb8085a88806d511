/**
 * Which bin of a published package a census runs. Pure.
 *
 * @module
 */
import { PrepareError } from "../errors.ts";

function unscoped(pkg: string): string {
  return pkg.replace(/^@[^/]+\//, "");
}

/**
 * Which bin to run and its script: the list's `bin`, else the only bin,
 * else the bin named like the package, else the first; no bin at all runs
 * the package's main module. Throws `PrepareError` for a named bin that does
 * not exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   chooseBin({ bin: { "mcp-server-memory": "dist/index.js" } }, "@modelcontextprotocol/server-memory", null),
 *   { bin: "mcp-server-memory", script: "dist/index.js" },
 * );
 * ```
 */
export function chooseBin(
  pkgJson: Record<string, unknown>,
  pkg: string,
  wanted: string | null,
): { bin: string | null; script: string } {
  const raw = pkgJson.bin;
  const bins: Record<string, string> = {};
  if (typeof raw === "string") bins[unscoped(pkg)] = raw;
  else if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw)) {
      if (typeof v === "string") bins[k] = v;
    }
  }
  const names = Object.keys(bins);
  const clean = (s: string) => s.replace(/^\.\//, "");
  if (wanted !== null) {
    const script = bins[wanted];
    if (script === undefined) {
      throw new PrepareError(
        `bin ${JSON.stringify(wanted)} is not a bin of ${pkg} (its bins: ${
          names.join(", ") || "none"
        })`,
      );
    }
    return { bin: wanted, script: clean(script) };
  }
  if (names.length === 0) {
    const main = typeof pkgJson.main === "string" ? pkgJson.main : "index.js";
    return { bin: null, script: clean(main) };
  }
  const name = names.length === 1
    ? names[0]!
    : names.includes(unscoped(pkg))
    ? unscoped(pkg)
    : names[0]!;
  return { bin: name, script: clean(bins[name]!) };
}
