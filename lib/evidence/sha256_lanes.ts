/**
 * SHA-256 of four messages at once, in WebAssembly SIMD: the bytes of a
 * small WebAssembly module, written here instruction by instruction, whose
 * one function hashes groups of four messages that lie in its memory, each
 * 32-bit lane of a 128-bit vector carrying one message's state.
 *
 * Why: a ledger verify hashes one short message per block (about 500
 * bytes), and through node:crypto each digest costs a copy of a hash
 * object, an update and a digest, most of which is the calls, not the
 * hashing. Here a call hashes many messages, and four rounds run in one
 * instruction stream; measured on this project's machine it hashes the
 * blocks of a ledger in about 0.7x the time node:crypto takes
 * (docs/benchmarks.md). The result is checked against node:crypto over
 * every length from 0 to 300 bytes and random ones (sha256_lanes_test.ts).
 *
 * The module imports a shared memory (`env.mem`, at most 65,536 pages) and
 * exports `many(list, groups, scratch)`. `list` holds `groups` records of
 * {@linkcode GROUP_BYTES} bytes: four (offset, length) pairs of 32-bit
 * little-endian integers, then the four digests, written by `many` as eight
 * 16-byte rows (row w holds word w of lanes 0 to 3, each a little-endian
 * 32-bit integer: the digest's bytes 4w to 4w + 3 read big-endian). A lane
 * not in use is given length 0. `scratch` is {@linkcode SCRATCH_BYTES} bytes
 * the call may write (each lane's padded last bytes). Messages are read,
 * never written. It also exports `compare(list, count, digits)`: how many
 * of the first `count` messages, counted from the first until one
 * differs, have a digest whose lowercase hex is exactly the 64 bytes at
 * `digits + 64 k` (message k is lane k mod 4 of group k / 4). Pure:
 * nothing here touches the process, clock or disk.
 *
 * @module
 */

import {
  emitter,
  I32,
  name,
  OP,
  section,
  SIMD,
  uleb,
  V128,
  vec,
} from "./wasm_emit.ts";
import { walkBody } from "./block_walk_wasm.ts";
import { SHA256_IV as IV, SHA256_K as K } from "../common/sha256_constants.ts";

/** Bytes per group record in the list `many` reads (see the module doc). */
export const GROUP_BYTES = 160;
/** Where a group's digests start in its record. */
export const DIGESTS_AT = 32;
/** Bytes of scratch memory a call of `many` writes. */
export const SCRATCH_BYTES = 512;

/** The body of `many` (locals and instructions). */
function manyBody(): number[] {
  const { code, e, get, set, i32, simd, memarg, splat32 } = emitter();

  // Parameters 0 list, 1 groups, 2 scratch; then i32 locals, then v128.
  let next = 3;
  const local = () => next++;
  const four = () => [local(), local(), local(), local()];
  const G = local();
  const JOB = local();
  const MAXT = local();
  const I = local();
  const TMP = local();
  const PTR = four();
  const LEN = four();
  const FULL = four();
  const TOT = four();
  const SCR = four();
  const P = four();
  const i32Count = next - 3;
  const vStart = next;
  const H = Array.from({ length: 8 }, local);
  const S = Array.from({ length: 8 }, local);
  const W = Array.from({ length: 16 }, local);
  const T1 = local();
  const T2 = local();
  const MASK = local();
  const TOTV = local();
  const R = four();
  const U = four();
  const v128Count = next - vStart;

  // x >>> a ^ x >>> b ^ x >>> c ^ x << 32 - a ^ x << 32 - b (^ x << 32 - c
  // when c is a rotation too): SHA-256's Σ and σ functions.
  const sigma = (x: number, a: number, b: number, c: number, rotC: boolean) => {
    get(x), i32(a), simd(SIMD.shrU);
    get(x), i32(b), simd(SIMD.shrU), simd(SIMD.xor);
    get(x), i32(c), simd(SIMD.shrU), simd(SIMD.xor);
    get(x), i32(32 - a), simd(SIMD.shl), simd(SIMD.xor);
    get(x), i32(32 - b), simd(SIMD.shl), simd(SIMD.xor);
    if (rotC) get(x), i32(32 - c), simd(SIMD.shl), simd(SIMD.xor);
  };

  // for (g = 0; g < groups; g++)
  i32(0), set(G);
  e(OP.block, 0x40, OP.loop, 0x40);
  get(G), get(1), e(OP.i32GeU, OP.brIf, 1);
  get(0), get(G), i32(GROUP_BYTES), e(OP.i32Mul, OP.i32Add), set(JOB);
  i32(0), set(MAXT);
  for (let L = 0; L < 4; L++) {
    get(JOB), e(OP.i32Load, ...memarg(2, 8 * L)), set(PTR[L]!);
    get(JOB), e(OP.i32Load, ...memarg(2, 8 * L + 4)), set(LEN[L]!);
    get(LEN[L]!), i32(6), e(OP.i32ShrU), set(FULL[L]!);
    get(LEN[L]!), i32(63), e(OP.i32And), set(TMP);
    get(2), i32(128 * L), e(OP.i32Add), set(SCR[L]!);
    // The lane's padded last bytes, in its 128 bytes of scratch: the
    // bytes after its last full 64, 0x80, zeros, and its length in bits
    // as a big-endian 64-bit integer ending a 64-byte chunk.
    get(SCR[L]!), i32(0), i32(128), e(0xfc, ...uleb(11), 0x00); // fill
    get(SCR[L]!), get(PTR[L]!), get(FULL[L]!), i32(6);
    e(OP.i32Shl, OP.i32Add), get(TMP), e(0xfc, ...uleb(10), 0x00, 0x00); // copy
    get(SCR[L]!), get(TMP), e(OP.i32Add), i32(0x80);
    e(OP.i32Store8, ...memarg(0, 0));
    // Chunks in all: the full ones, then one more, or two when the last
    // bytes leave no room for 0x80 and the length.
    get(FULL[L]!), i32(1), i32(2), get(TMP), i32(56), e(OP.i32LtU);
    e(OP.select, OP.i32Add), set(TOT[L]!);
    get(SCR[L]!), get(TOT[L]!), get(FULL[L]!), e(OP.i32Sub), i32(6);
    e(OP.i32Shl, OP.i32Add), i32(8), e(OP.i32Sub), set(TMP);
    get(TMP), get(LEN[L]!), i32(29), e(OP.i32ShrU);
    e(OP.i32Store8, ...memarg(0, 3));
    for (let k = 0; k < 4; k++) {
      get(TMP), get(LEN[L]!), i32(3), e(OP.i32Shl), i32(24 - 8 * k);
      e(OP.i32ShrU, OP.i32Store8, ...memarg(0, 4 + k));
    }
    get(TOT[L]!), get(MAXT), get(TOT[L]!), get(MAXT), e(OP.i32GtU);
    e(OP.select), set(MAXT);
  }
  get(TOT[0]!), simd(SIMD.splat);
  for (let L = 1; L < 4; L++) get(TOT[L]!), simd(SIMD.replaceLane, L);
  set(TOTV);
  for (let j = 0; j < 8; j++) splat32(IV[j]!), set(H[j]!);

  // for (i = 0; i < the most chunks of a lane; i++): compress chunk i of
  // every lane that has one (the others keep their state: MASK).
  i32(0), set(I);
  e(OP.block, 0x40, OP.loop, 0x40);
  get(I), get(MAXT), e(OP.i32GeU, OP.brIf, 1);
  get(TOTV), get(I), simd(SIMD.splat), simd(SIMD.gtU), set(MASK);
  for (let L = 0; L < 4; L++) {
    // i < full: the message's own bytes; else its scratch (clamped for a
    // lane with no chunk i, whose result is masked off).
    get(PTR[L]!), get(I), i32(6), e(OP.i32Shl, OP.i32Add);
    get(SCR[L]!), get(I), get(FULL[L]!), e(OP.i32Sub), i32(6);
    e(OP.i32Shl, OP.i32Add);
    get(SCR[L]!), get(I), get(TOT[L]!), e(OP.i32LtU, OP.select);
    get(I), get(FULL[L]!), e(OP.i32LtU, OP.select);
    set(P[L]!);
  }
  // Load the chunk of each lane and transpose: W[j] holds word j of the
  // four lanes, each made big-endian (the byte order is turned in the
  // first shuffle).
  const swapped = (w: number, src: number) =>
    [3, 2, 1, 0].map((k) => 4 * w + k + 16 * src);
  const pairs = (w0: number, w1: number) => [
    ...swapped(w0, 0),
    ...swapped(w0, 1),
    ...swapped(w1, 0),
    ...swapped(w1, 1),
  ];
  const low = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
  const high = low.map((x) => x + 8);
  for (let r = 0; r < 4; r++) {
    for (let L = 0; L < 4; L++) {
      get(P[L]!), simd(SIMD.load, ...memarg(0, 16 * r)), set(R[L]!);
    }
    get(R[0]!), get(R[1]!), simd(SIMD.shuffle, ...pairs(0, 1)), set(U[0]!);
    get(R[0]!), get(R[1]!), simd(SIMD.shuffle, ...pairs(2, 3)), set(U[1]!);
    get(R[2]!), get(R[3]!), simd(SIMD.shuffle, ...pairs(0, 1)), set(U[2]!);
    get(R[2]!), get(R[3]!), simd(SIMD.shuffle, ...pairs(2, 3)), set(U[3]!);
    get(U[0]!), get(U[2]!), simd(SIMD.shuffle, ...low), set(W[4 * r]!);
    get(U[0]!), get(U[2]!), simd(SIMD.shuffle, ...high), set(W[4 * r + 1]!);
    get(U[1]!), get(U[3]!), simd(SIMD.shuffle, ...low), set(W[4 * r + 2]!);
    get(U[1]!), get(U[3]!), simd(SIMD.shuffle, ...high), set(W[4 * r + 3]!);
  }
  for (let j = 0; j < 8; j++) get(H[j]!), set(S[j]!);
  // The 64 rounds, unrolled; `st` names the locals holding a to h.
  let st = [...S];
  for (let t = 0; t < 64; t++) {
    const w = W[t % 16]!;
    if (t >= 16) {
      // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]
      sigma(W[(t - 2) % 16]!, 17, 19, 10, false);
      get(W[(t - 7) % 16]!), simd(SIMD.add);
      sigma(W[(t - 15) % 16]!, 7, 18, 3, false), simd(SIMD.add);
      get(w), simd(SIMD.add), set(w);
    }
    const [a, b, c, d, ee, f, g, h] = st as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    // T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]; Ch is a bit select.
    get(h), sigma(ee, 6, 11, 25, true), simd(SIMD.add);
    get(f), get(g), get(ee), simd(SIMD.bitselect), simd(SIMD.add);
    splat32(K[t]!), simd(SIMD.add), get(w), simd(SIMD.add), set(T1);
    // T2 = Σ0(a) + Maj(a, b, c): Maj is b where a and c differ, else a.
    sigma(a, 2, 13, 22, true);
    get(b), get(a), get(a), get(c), simd(SIMD.xor), simd(SIMD.bitselect);
    simd(SIMD.add), set(T2);
    get(d), get(T1), simd(SIMD.add), set(d);
    get(T1), get(T2), simd(SIMD.add), set(h);
    st = [h, a, b, c, d, ee, f, g];
  }
  for (let j = 0; j < 8; j++) {
    get(H[j]!), get(st[j]!), simd(SIMD.add), get(H[j]!), get(MASK);
    simd(SIMD.bitselect), set(H[j]!);
  }
  get(I), i32(1), e(OP.i32Add), set(I);
  e(OP.br, 0, OP.end, OP.end);
  for (let j = 0; j < 8; j++) {
    get(JOB), get(H[j]!), simd(SIMD.store, ...memarg(0, DIGESTS_AT + 16 * j));
  }
  get(G), i32(1), e(OP.i32Add), set(G);
  e(OP.br, 0, OP.end, OP.end, OP.end);
  return [
    ...vec([[...uleb(i32Count), I32], [...uleb(v128Count), V128]]),
    ...code,
  ];
}

/**
 * The body of `compare(list, count, digits)`: how many of the first
 * `count` messages of the groups at `list` (whose digests `many` wrote)
 * have digests whose lowercase hex is exactly the 64 bytes at `digits + 64
 * k` for message k, counted from the first until one differs.
 */
function compareBody(): number[] {
  const { code, e, get, set, i32, simd, memarg, bytes16 } = emitter();
  // Parameters 0 list, 1 count, 2 digits; i32 locals k, out, d; then v128.
  const K_ = 3;
  const OUT = 4;
  const D = 5;
  const V = [6, 7];
  const HI = 8;
  const LO = 9;
  const ACC = 10;
  const HEX = [..."0123456789abcdef"].map((c) => c.charCodeAt(0));
  // Each 32-bit lane's bytes reversed: the digest's bytes in order.
  const BSWAP = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];
  const first = [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23];
  const second = first.map((x) => x + 8);
  i32(0), set(K_);
  e(OP.block, 0x40, OP.loop, 0x40);
  get(K_), get(1), e(OP.i32GeU, OP.brIf, 1);
  // out = list + (k >> 2) * GROUP_BYTES + 4 (k & 3); d = digits + 64 k
  get(0), get(K_), i32(2), e(OP.i32ShrU), i32(GROUP_BYTES), e(OP.i32Mul);
  e(OP.i32Add), get(K_), i32(3), e(OP.i32And), i32(2), e(OP.i32Shl);
  e(OP.i32Add), set(OUT);
  get(2), get(K_), i32(6), e(OP.i32Shl, OP.i32Add), set(D);
  for (let half = 0; half < 2; half++) {
    // The lane's words 4 half to 4 half + 3, gathered from the rows.
    const w0 = 4 * half;
    get(OUT), e(OP.i32Load, ...memarg(2, DIGESTS_AT + 16 * w0));
    simd(SIMD.splat);
    for (let q = 1; q < 4; q++) {
      get(OUT), e(OP.i32Load, ...memarg(2, DIGESTS_AT + 16 * (w0 + q)));
      simd(SIMD.replaceLane, q);
    }
    set(V[half]!);
    // Its 16 bytes in order, their high and low halves as hex digits,
    // interleaved, compared with the published digits.
    get(V[half]!), get(V[half]!), simd(SIMD.shuffle, ...BSWAP), set(V[half]!);
    bytes16(HEX), get(V[half]!), i32(4), simd(SIMD.i8ShrU);
    simd(SIMD.swizzle), set(HI);
    bytes16(HEX), get(V[half]!), bytes16(Array(16).fill(0x0f)), simd(SIMD.and);
    simd(SIMD.swizzle), set(LO);
    get(HI), get(LO), simd(SIMD.shuffle, ...first);
    get(D), simd(SIMD.load, ...memarg(0, 32 * half)), simd(SIMD.i8Eq);
    get(HI), get(LO), simd(SIMD.shuffle, ...second);
    get(D), simd(SIMD.load, ...memarg(0, 32 * half + 16)), simd(SIMD.i8Eq);
    simd(SIMD.and);
    if (half === 1) get(ACC), simd(SIMD.and);
    set(ACC);
  }
  get(ACC), simd(SIMD.i8AllTrue), e(OP.i32Eqz, OP.brIf, 1);
  get(K_), i32(1), e(OP.i32Add), set(K_);
  e(OP.br, 0, OP.end, OP.end);
  get(K_);
  e(OP.end);
  return [...vec([[3, I32], [5, V128]]), ...code];
}

/** The functions of the lanes module (see the module doc and `block_walk_wasm.ts`). */
export interface Lanes {
  many(list: number, groups: number, scratch: number): void;
  compare(list: number, count: number, digits: number): number;
  walk(
    start: number,
    end: number,
    base: number,
    at: number,
    maxBlocks: number,
    out: number,
    maxRuns: number,
    stack: number,
  ): number;
}

/** The lanes module compiled (once per thread that asks). */
let MODULE: WebAssembly.Module | null = null;

/** The lanes module, compiled once. Throws where WebAssembly SIMD is missing. */
export function lanesModule(): WebAssembly.Module {
  return MODULE ??= new WebAssembly.Module(sha256LanesWasm());
}

/** An instance of `module` (the lanes module by default) over the shared `memory`. */
export function instantiateLanes(
  memory: WebAssembly.Memory,
  module: WebAssembly.Module = lanesModule(),
): Lanes {
  return new WebAssembly.Instance(module, { env: { mem: memory } })
    .exports as unknown as Lanes;
}

let BYTES: Uint8Array | null = null;

/** The module's bytes (made once). */
export function sha256LanesWasm(): Uint8Array<ArrayBuffer> {
  if (BYTES === null) {
    const body = manyBody();
    const cmp = compareBody();
    const walk = walkBody();
    BYTES = new Uint8Array([
      0x00,
      0x61,
      0x73,
      0x6d,
      0x01,
      0x00,
      0x00,
      0x00,
      ...section(
        1,
        vec([
          [0x60, ...vec([[I32], [I32], [I32]]), 0x00],
          [0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])],
          [
            0x60,
            ...vec(Array.from({ length: 8 }, () => [I32])),
            ...vec([[I32]]),
          ],
        ]),
      ),
      // import env.mem: a shared memory of 1 to 65,536 pages
      ...section(
        2,
        vec([[
          ...name("env"),
          ...name("mem"),
          0x02,
          0x03,
          ...uleb(1),
          ...uleb(65536),
        ]]),
      ),
      ...section(3, vec([[0], [1], [2]])),
      ...section(
        7,
        vec([
          [...name("many"), 0x00, 0],
          [...name("compare"), 0x00, 1],
          [...name("walk"), 0x00, 2],
        ]),
      ),
      ...section(
        10,
        vec([
          [...uleb(body.length), ...body],
          [...uleb(cmp.length), ...cmp],
          [...uleb(walk.length), ...walk],
        ]),
      ),
    ]);
  }
  return BYTES as Uint8Array<ArrayBuffer>;
}
