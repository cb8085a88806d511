/**
 * The cache of decoded SQLite leaf pages shared between snapshots.
 *
 * @module
 */
import type { StateRecord } from "../lib/state/types.ts";

/** A cache of decoded leaf pages, keyed by their exact bytes and the table's schema. */
export class PageCache {
  #entries = new Map<
    number,
    {
      sig: string;
      words: Int32Array;
      at: number;
      records: StateRecord[];
      gen: number;
    }
  >();
  #gen = 0;
  /** Generations a page survives without being seen. @default 2 */
  readonly keep: number;
  constructor(keep = 2) {
    this.keep = keep;
  }
  /** Records of an identical page seen before, or undefined. */
  get(
    hash: number,
    sig: string,
    words: Int32Array,
    at: number,
    len: number,
  ): StateRecord[] | undefined {
    const e = this.#entries.get(hash);
    if (!e || e.sig !== sig) return undefined;
    const w = e.words;
    const o = e.at;
    if (w !== words || o !== at) {
      for (let i = 0; i < len; i++) {
        if (w[o + i] !== words[at + i]) return undefined;
      }
    }
    e.gen = this.#gen;
    return e.records;
  }
  set(
    hash: number,
    sig: string,
    words: Int32Array,
    at: number,
    len: number,
    records: StateRecord[],
  ): void {
    // The page is kept by reference: images are private copies, never written after they are read.
    void len;
    this.#entries.set(hash, { sig, words, at, records, gen: this.#gen });
  }
  /** End of one observation: forget pages not seen in the last `keep` generations. */
  nextGeneration(): void {
    this.#gen++;
    for (const [k, e] of this.#entries) {
      if (e.gen < this.#gen - this.keep) this.#entries.delete(k);
    }
  }
  clear(): void {
    this.#entries.clear();
  }
  get size(): number {
    return this.#entries.size;
  }
}

/** The process-wide page cache used by snapshots. */
export const pageCache: PageCache = new PageCache();
