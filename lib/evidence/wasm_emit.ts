/**
 * Writing WebAssembly by hand: the binary encoding of integers, vectors,
 * sections and names, the opcodes verity's modules use (core 2.0 and the
 * 128-bit SIMD proposal, prefix 0xfd), and an emitter of function bodies
 * with named labels. Used by `sha256_lanes.ts` and `block_walk_wasm.ts`.
 * Pure.
 *
 * @module
 */

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

export function sleb(n: number): number[] {
  const out: number[] = [];
  n |= 0;
  while (true) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** A signed 64-bit integer as a signed LEB128 (an i64.const's immediate). */
export function sleb64(n: bigint): number[] {
  const out: number[] = [];
  n = BigInt.asIntN(64, n);
  while (true) {
    const b = Number(n & 0x7fn);
    n >>= 7n;
    if ((n === 0n && (b & 0x40) === 0) || (n === -1n && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

export const vec = (items: number[][]): number[] => [
  ...uleb(items.length),
  ...items.flat(),
];
export const section = (id: number, body: number[]): number[] => [
  id,
  ...uleb(body.length),
  ...body,
];
export const name = (s: string): number[] => [
  ...uleb(s.length),
  ...[...s].map((c) => c.charCodeAt(0)),
];

// Value types and the opcodes used (WebAssembly core 2.0, SIMD prefix 0xfd).
export const I32 = 0x7f;
export const V128 = 0x7b;
export const OP = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  return: 0x0f,
  drop: 0x1a,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  select: 0x1b,
  localGet: 0x20,
  localSet: 0x21,
  i32Load: 0x28,
  i64Load: 0x29,
  i32Load8U: 0x2d,
  i32Load16U: 0x2f,
  i32Store: 0x36,
  i64Const: 0x42,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtS: 0x48,
  i32GtS: 0x4a,
  i32GeS: 0x4e,
  i32LeU: 0x4d,
  i64Ne: 0x52,
  i32Ctz: 0x68,
  i32Or: 0x72,
  i32Eqz: 0x45,
  i32Store8: 0x3a,
  i32Const: 0x41,
  i32LtU: 0x49,
  i32GtU: 0x4b,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Shl: 0x74,
  i32ShrU: 0x76,
} as const;
export const SIMD = {
  load: 0x00,
  store: 0x0b,
  const: 0x0c,
  shuffle: 0x0d,
  swizzle: 0x0e,
  splat: 0x11,
  replaceLane: 0x1c,
  i8Eq: 0x23,
  i8LtU: 0x26,
  i8GtU: 0x28,
  gtU: 0x3c,
  and: 0x4e,
  or: 0x50,
  xor: 0x51,
  bitselect: 0x52,
  i8AllTrue: 0x63,
  i8Bitmask: 0x64,
  i8ShrU: 0x6d,
  shl: 0xab,
  shrU: 0xad,
  add: 0xae,
} as const;

/** Instructions written into a function body, a few helpers to write them. */
export function emitter() {
  const code: number[] = [];
  const e = (...b: number[]) => {
    for (const x of b) code.push(x);
  };
  const simd = (op: number, ...rest: number[]) => e(0xfd, ...uleb(op), ...rest);
  // The open blocks, loops and ifs, innermost last, each with its label.
  const labels: string[] = [];
  const depth = (label: string) => {
    const i = labels.lastIndexOf(label);
    if (i < 0) throw new Error(`no open label ${label}`);
    return labels.length - 1 - i;
  };
  return {
    code,
    e,
    /** Open a block, loop or if (no result) labelled `label`. */
    open: (op: number, label = "") => {
      e(op, 0x40);
      labels.push(label);
    },
    close: () => {
      e(OP.end);
      labels.pop();
    },
    br: (label: string) => e(OP.br, ...uleb(depth(label))),
    brIf: (label: string) => e(OP.brIf, ...uleb(depth(label))),
    get: (l: number) => e(OP.localGet, ...uleb(l)),
    set: (l: number) => e(OP.localSet, ...uleb(l)),
    i32: (n: number) => e(OP.i32Const, ...sleb(n)),
    simd,
    memarg: (align: number, offset: number) => [
      ...uleb(align),
      ...uleb(offset),
    ],
    /** A v128 constant of 16 bytes. */
    bytes16: (b: number[]) => simd(SIMD.const, ...b),
    /** A v128 constant of four equal 32-bit lanes. */
    splat32: (x: number) => {
      const b: number[] = [];
      for (let k = 0; k < 4; k++) {
        b.push(x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, x >>> 24);
      }
      simd(SIMD.const, ...b);
    },
  };
}
