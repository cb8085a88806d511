/**
 * A small deterministic pseudo-random generator for reproducible argument
 * generation. Pure: no clock, no `Math.random`.
 *
 * @module
 */

/** The seed used when none is given (`--seed`). */
export const DEFAULT_SEED = 1;

/** A seeded source of pseudo-random choices. */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/** FNV-1a 32-bit hash of a string, used to derive seeds from names. */
export function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Create a mulberry32 generator. The same seed always yields the same
 * sequence.
 *
 * @example
 * ```ts
 * const a = createPrng(7).int(1, 100);
 * const b = createPrng(7).int(1, 100);
 * // a === b
 * ```
 */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  function next(): number {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  return {
    next,
    int(lo: number, hi: number): number {
      if (hi < lo) throw new RangeError(`empty range [${lo}, ${hi}]`);
      return lo + Math.floor(next() * (hi - lo + 1));
    },
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) {
        throw new RangeError("cannot pick from an empty list");
      }
      return items[Math.floor(next() * items.length)] as T;
    },
  };
}
