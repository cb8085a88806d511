/**
 * Shards of a census: a deterministic partition of the servers that does
 * not depend on the list's order (a server's shard is a function of its id
 * alone), and the `k/N` spec that names one shard. Pure.
 *
 * @module
 */
import { CensusError } from "../errors.ts";
import { sha256Hex } from "../evidence/canonical.ts";

/** One shard: `k` of `n`, 1-based. */
export interface ShardSpec {
  k: number;
  n: number;
}

/** Most shards a census may be split into. */
export const MAX_SHARDS = 100_000;

/**
 * Parse `k/N` (1 ≤ k ≤ N). Throws `CensusError` naming the flag and value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseShardSpec("2/4", "--shard"), { k: 2, n: 4 });
 * ```
 */
export function parseShardSpec(text: string, where: string): ShardSpec {
  const m = /^([1-9][0-9]*)\/([1-9][0-9]*)$/.exec(text);
  const bad = (why: string): never => {
    throw new CensusError(
      `verity census: ${where} ${JSON.stringify(text)}: ${why}`,
    );
  };
  if (m === null) bad("expected k/N with 1 <= k <= N (e.g. 1/4)");
  const k = Number(m![1]);
  const n = Number(m![2]);
  if (n > MAX_SHARDS) bad(`at most ${MAX_SHARDS} shards`);
  if (k > n) bad(`shard ${k} of ${n} does not exist (1 <= k <= N)`);
  return { k, n };
}

/** `k/N` text of a shard. */
export function shardText(s: ShardSpec): string {
  return `${s.k}/${s.n}`;
}

/**
 * The 1-based shard of `n` a server id falls in: the first 48 bits of
 * SHA-256 of the id, modulo `n`, plus one. Stable across list order and
 * machines.
 *
 * @example
 * ```ts
 * console.assert(shardOf("a@1.0.0", 1) === 1);
 * ```
 */
export function shardOf(id: string, n: number): number {
  const h = parseInt(sha256Hex(id).slice(0, 12), 16);
  return (h % n) + 1;
}

/** The items of `items` (by id) that fall in shard `s`, in their given order. */
export function inShard<T extends { id: string }>(
  items: readonly T[],
  s: ShardSpec,
): T[] {
  return items.filter((x) => shardOf(x.id, s.n) === s.k);
}
