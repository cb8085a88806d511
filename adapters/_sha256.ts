/**
 * Incremental SHA-256 (FIPS 180-4) in plain TypeScript, for hashing large
 * state files chunk by chunk in bounded memory inside the read-only
 * snapshot worker, where WebCrypto has no streaming digest and no Node
 * compatibility layer is loaded. Pure.
 *
 * @module
 */
import { SHA256_IV, SHA256_K } from "../lib/common/sha256_constants.ts";

const K = new Uint32Array(SHA256_K);

/**
 * A running SHA-256: `update` with chunks of any size, then `hex`.
 *
 * @example
 * ```ts
 * import { Sha256 } from "./_sha256.ts";
 * const h = new Sha256();
 * h.update(new TextEncoder().encode("ab"));
 * h.update(new TextEncoder().encode("c"));
 * console.assert(h.hex() === "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
 * ```
 */
export class Sha256 {
  #h = new Uint32Array(SHA256_IV);
  #w = new Uint32Array(64);
  #block = new Uint8Array(64);
  #fill = 0;
  #length = 0;
  #done = false;

  /** Add bytes. */
  update(bytes: Uint8Array): this {
    if (this.#done) throw new TypeError("Sha256: update after hex()");
    this.#length += bytes.length;
    let i = 0;
    if (this.#fill > 0) {
      const take = Math.min(64 - this.#fill, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#fill);
      this.#fill += take;
      i = take;
      if (this.#fill < 64) return this;
      this.#compress(this.#block, 0);
      this.#fill = 0;
    }
    for (; i + 64 <= bytes.length; i += 64) this.#compress(bytes, i);
    if (i < bytes.length) {
      this.#block.set(bytes.subarray(i));
      this.#fill = bytes.length - i;
    }
    return this;
  }

  /** Finish and return the digest as lower-case hex. */
  hex(): string {
    if (!this.#done) {
      const bits = this.#length * 8;
      const pad = new Uint8Array(
        ((this.#fill < 56 ? 56 : 120) - this.#fill) + 8,
      );
      pad[0] = 0x80;
      const view = new DataView(pad.buffer);
      view.setUint32(pad.length - 8, Math.floor(bits / 0x100000000));
      view.setUint32(pad.length - 4, bits >>> 0);
      const len = this.#length;
      this.update(pad);
      this.#length = len;
      this.#done = true;
    }
    let s = "";
    for (const x of this.#h) s += x.toString(16).padStart(8, "0");
    return s;
  }

  #compress(b: Uint8Array, o: number): void {
    const w = this.#w;
    for (let t = 0; t < 16; t++) {
      const j = o + t * 4;
      w[t] = (b[j]! << 24) | (b[j + 1]! << 16) | (b[j + 2]! << 8) | b[j + 3]!;
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15]!;
      const y = w[t - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^
        (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^
        (y >>> 10);
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0;
    }
    const h = this.#h;
    let a = h[0]!, bb = h[1]!, c = h[2]!, d = h[3]!;
    let e = h[4]!, f = h[5]!, g = h[6]!, hh = h[7]!;
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^
        ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + K[t]! + w[t]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^
        ((a >>> 22) | (a << 10));
      const maj = (a & bb) ^ (a & c) ^ (bb & c);
      const t2 = (S0 + maj) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    h[0] = h[0]! + a;
    h[1] = h[1]! + bb;
    h[2] = h[2]! + c;
    h[3] = h[3]! + d;
    h[4] = h[4]! + e;
    h[5] = h[5]! + f;
    h[6] = h[6]! + g;
    h[7] = h[7]! + hh;
  }
}
