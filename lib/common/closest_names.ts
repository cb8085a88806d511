/**
 * The names closest to a misspelt one, for "did you mean" messages. Pure.
 *
 * @module
 */

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Up to `limit` candidates nearest to `name` by edit distance, none
 * farther than `maxDistance` (ties keep the candidates' order; names
 * containing `name`, or contained in it, come first and always qualify).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   closestNames("search_node", ["read_graph", "search_nodes", "open_nodes"], 2),
 *   ["search_nodes", "open_nodes"],
 * );
 * ```
 */
export function closestNames(
  name: string,
  candidates: readonly string[],
  limit = 3,
  maxDistance = Infinity,
): string[] {
  const n = name.toLowerCase();
  return candidates.map((c, i) => {
    const l = c.toLowerCase();
    const near = l.includes(n) || n.includes(l) ? -1000 : 0;
    return { c, i, d: distance(n, l) + near };
  }).filter((x) => x.d <= maxDistance).sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, limit).map((x) => x.c);
}
