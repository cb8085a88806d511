/**
 * Depth and size bounds for values a server sent. Pure: takes a value,
 * returns a value.
 *
 * A server controls every byte of its answers, so a value from it may nest
 * deeper than anything that later walks it recursively (a report writer, an
 * indenting `JSON.stringify`, a recursive reader) can follow. The wire
 * client bounds every parsed message with {@linkcode boundDepth} before it
 * is stored; places that keep a server value in a report (its `serverInfo`)
 * also bound its size with {@linkcode boundSize}.
 *
 * @module
 */

/** Deepest nesting verity keeps from a server (objects and arrays). */
export const MAX_VALUE_DEPTH = 64;

/** The marker that replaces a value nested deeper than the bound. */
export function depthMarker(maxDepth: number): string {
  return `[verity: nested deeper than ${maxDepth} levels, not kept]`;
}

/**
 * How deep `value` nests (a scalar is 0, `[]` is 1), without recursion, and
 * stopping as soon as `limit + 1` is reached.
 *
 * @example
 * ```ts
 * import { valueDepth } from "./bound.ts";
 * console.assert(valueDepth({ a: [1] }, 10) === 2);
 * ```
 */
export function valueDepth(value: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    const here = d + 1;
    if (here > max) max = here;
    if (max > limit) return max;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) {
      if (typeof c === "object" && c !== null) stack.push([c, here]);
    }
  }
  return max;
}

/**
 * `value` with everything nested deeper than `maxDepth` replaced by
 * {@linkcode depthMarker}; the value itself when it is shallow enough.
 * Never recurses deeper than `maxDepth`.
 *
 * @example
 * ```ts
 * import { boundDepth } from "./bound.ts";
 * const v = boundDepth({ a: { b: { c: 1 } } }, 2) as { a: { b: unknown } };
 * console.assert(typeof v.a.b === "string");
 * ```
 */
export function boundDepth(
  value: unknown,
  maxDepth = MAX_VALUE_DEPTH,
): unknown {
  if (valueDepth(value, maxDepth) <= maxDepth) return value;
  const marker = depthMarker(maxDepth);
  const copy = (v: unknown, d: number): unknown => {
    if (typeof v !== "object" || v === null) return v;
    if (d >= maxDepth) return marker;
    if (Array.isArray(v)) return v.map((c) => copy(c, d + 1));
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(v)) {
      Object.defineProperty(out, k, {
        value: copy(c, d + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  return copy(value, 0);
}

/**
 * `value` bounded in depth, and replaced by a marker object carrying its
 * first characters when its JSON text is longer than `maxChars`: what a
 * report keeps of a free-form server value such as `serverInfo`.
 *
 * @example
 * ```ts
 * import { boundSize } from "./bound.ts";
 * const v = boundSize({ name: "x".repeat(100) }, 50) as Record<string, unknown>;
 * console.assert(v.truncated === true);
 * ```
 */
export function boundSize(
  value: unknown,
  maxChars: number,
): unknown {
  const bounded = boundDepth(value);
  const text = JSON.stringify(bounded);
  if (text === undefined || text.length <= maxChars) return bounded;
  return {
    truncated: true,
    chars: text.length,
    head: text.slice(0, Math.min(maxChars, 1024)),
  };
}
