/**
 * The one JSON-object test: a non-null object that is not an array. Pure.
 *
 * @module
 */

/**
 * Whether a value is a JSON object (a non-null, non-array object).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isPlainObject({ a: 1 }), true);
 * assert.equal(isPlainObject([1]), false);
 * assert.equal(isPlainObject(null), false);
 * ```
 */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
