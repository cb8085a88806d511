/**
 * A fixed-size pool of async workers over a list. Pure (no I/O of its own).
 *
 * @module
 */

/**
 * Map `items` through `fn` with at most `jobs` calls running at once; the
 * results keep the items' order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(await pool([1, 2, 3], 2, (x) => Promise.resolve(x * 2)), [2, 4, 6]);
 * ```
 */
export async function pool<T, R>(
  items: readonly T[],
  jobs: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, worker),
  );
  return out;
}
