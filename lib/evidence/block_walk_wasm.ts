/**
 * The walk of a segment's block lines in WebAssembly, for the common case
 * only: the body of the lanes module's `walk` function (`sha256_lanes.ts`
 * assembles the module). It checks what `VerityByteWalker` checks of a
 * block line, in a strict subset of what that walker accepts, and leaves
 * each block's parts where `LaneHasher.check` finds them; anything outside
 * the subset (or any problem) makes it answer -1, and the segment is then
 * walked by `VerityByteWalker`, which accepts, refuses and names problems
 * as always. So it may refuse what is valid, never accept what the walker
 * would not.
 *
 * `walk(start, end, base, at, maxBlocks, out, maxRuns, stack)`: the bytes
 * `[start, end)` of the memory must be whole block lines, each
 *
 * `{"index":N,"prev_hash":"P","type":T,"record":R,"hash":"sha256:D"},\n`
 *
 * with N decimal (at most nine digits, no leading zero), the first line's
 * N written to `out`, each next line's one more; P 71 bytes beginning
 * `sha256:`, each line's equal to the line before's `sha256:D` (the first
 * line's printable ASCII with no quote or backslash; the join checks it
 * against the segment before); T a JSON string of printable ASCII without `"` or `\`,
 * at most 73 bytes with its quotes; D 64 bytes (checked later, as the
 * lowercase hex of the block's digest, by `compare`); and R canonical JSON
 * in this subset: objects whose keys (printable ASCII strings, no escapes)
 * strictly increase byte by byte and none of which starts with
 * `contract_recipe` (a recipe: the walker collects those), arrays, such
 * strings, integers (`-`? then `0` or a digit 1-9 and digits; `-0` and
 * anything followed by `.`, `e` or `E` are not in it), `true`, `false`,
 * `null`, nested at most 64 deep. For block i it writes four 32-bit words
 * at `at + 16 i`: where T starts and ends, where R ends and where D starts,
 * each less `base`. At `out + 4` it writes how many runs of equal types
 * there were, and at `out + 8 + 12 r` run r's first block, and where its T
 * starts and ends (at most `maxRuns`): {@linkcode walkOutBytes} bytes in
 * all. `stack` is {@linkcode WALK_STACK_BYTES} bytes of scratch.
 * Returns the number of blocks (at most `maxBlocks`), or -1.
 *
 * Pure: nothing here touches the process, clock or disk.
 *
 * @module
 */
import {
  emitter,
  I32,
  OP,
  SIMD,
  sleb64,
  uleb,
  V128,
  vec,
} from "./wasm_emit.ts";

/** Deepest nesting of a record's arrays and objects the walk takes. */
const MAX_DEPTH = 64;

/** Bytes of the stack `walk` is given: per depth a kind and a key's start and end. */
export const WALK_STACK_BYTES = 12 * MAX_DEPTH;

/** Bytes `walk` writes at `out` for at most `maxRuns` runs of equal types. */
export function walkOutBytes(maxRuns: number): number {
  return 8 + 12 * maxRuns;
}

/** The body of `walk` (locals and instructions). */
export function walkBody(): number[] {
  const x = emitter();
  const { code, e, get, set, i32, simd, memarg, open, close, br, brIf } = x;
  // Parameters.
  const START = 0;
  const END = 1;
  const BASE = 2;
  const AT = 3;
  const MAX_BLOCKS = 4;
  const OUT = 5;
  const MAX_RUNS = 6;
  const STACK = 7;
  let next = 8;
  const local = () => next++;
  const P = local(); // the line (or byte) being read
  const I = local(); // blocks walked
  const N = local(); // the index read
  const INDEX0 = local();
  const Q = local();
  const C = local();
  const TS = local();
  const TE = local();
  const PTS = local();
  const PTE = local();
  const REC_END = local();
  const HEX = local();
  const PREV_PUB = local();
  const RUNS = local();
  const DEPTH = local();
  const STATE = local();
  const K0 = local();
  const K1 = local();
  const J = local();
  const M = local();
  const TOP = local();
  const T = local();
  const i32Count = next - 8;
  const V = next++; // the one v128 local

  const fail = () => {
    i32(-1), e(OP.return);
  };
  /** Unless `cond` (which leaves an i32) is zero, fail. */
  const failIf = (cond: () => void) => {
    cond();
    open(OP.if);
    fail();
    close();
  };
  const load8 = (ptr: number, offset = 0) => {
    get(ptr), e(OP.i32Load8U, ...memarg(0, offset));
  };
  /** Fail unless the bytes at `ptr + offset` are `text`. */
  const expect = (ptr: number, offset: number, text: string) => {
    const b = [...text].map((c) => c.charCodeAt(0));
    let k = 0;
    while (k < b.length) {
      const n = b.length - k >= 8 ? 8 : b.length - k >= 4 ? 4 : 1;
      let v = 0n;
      for (let q = n - 1; q >= 0; q--) v = (v << 8n) | BigInt(b[k + q]!);
      failIf(() => {
        get(ptr);
        if (n === 8) {
          e(OP.i64Load, ...memarg(0, offset + k), OP.i64Const, ...sleb64(v));
          e(OP.i64Ne);
        } else if (n === 4) {
          e(OP.i32Load, ...memarg(0, offset + k));
          i32(Number(BigInt.asIntN(32, v))), e(OP.i32Ne);
        } else {
          e(OP.i32Load8U, ...memarg(0, offset + k)), i32(Number(v));
          e(OP.i32Ne);
        }
      });
      k += n;
    }
  };
  const splat8 = (c: number) => simd(SIMD.const, ...Array(16).fill(c));
  /**
   * At a quote at `ptr`: move `ptr` past the string's closing quote, or
   * fail when a byte before it is not printable ASCII or is a backslash.
   * Sixteen bytes at a time (a line always ends with a newline, which
   * stops the scan, so it never runs past the line's end).
   */
  /** Of the 16 bytes in V, those that are a quote, a backslash, or not printable ASCII. */
  const special = () => {
    get(V), splat8(0x22), simd(SIMD.i8Eq);
    get(V), splat8(0x5c), simd(SIMD.i8Eq), simd(SIMD.or);
    get(V), splat8(0x20), simd(SIMD.i8LtU), simd(SIMD.or);
    get(V), splat8(0x7e), simd(SIMD.i8GtU), simd(SIMD.or);
  };
  const string = (ptr: number) => {
    get(ptr), i32(1), e(OP.i32Add), set(ptr);
    open(OP.loop, "s");
    get(ptr), simd(SIMD.load, ...memarg(0, 0)), set(V);
    special();
    simd(SIMD.i8Bitmask), set(M);
    get(M), e(OP.i32Eqz);
    open(OP.if);
    get(ptr), i32(16), e(OP.i32Add), set(ptr), br("s");
    close();
    close();
    get(ptr), get(M), e(OP.i32Ctz, OP.i32Add), set(ptr);
    failIf(() => {
      load8(ptr), i32(0x22), e(OP.i32Ne);
    });
    get(ptr), i32(1), e(OP.i32Add), set(ptr);
  };

  failIf(() => {
    get(START), get(END), e(OP.i32GeU);
  });
  get(START), set(P);
  i32(0), set(I);
  i32(0), set(RUNS);
  open(OP.loop, "line");
  failIf(() => {
    get(I), get(MAX_BLOCKS), e(OP.i32GeU);
  });
  expect(P, 0, '{"index":');
  // N: decimal, no leading zero, at most nine digits.
  get(P), i32(9), e(OP.i32Add), set(J);
  i32(0), set(N);
  open(OP.block, "digits");
  open(OP.loop, "digit");
  load8(J), i32(0x30), e(OP.i32Sub), set(C);
  get(C), i32(10), e(OP.i32GeU), brIf("digits");
  get(N), i32(10), e(OP.i32Mul), get(C), e(OP.i32Add), set(N);
  get(J), i32(1), e(OP.i32Add), set(J);
  br("digit");
  close();
  close();
  get(J), get(P), e(OP.i32Sub), i32(9), e(OP.i32Sub), set(T); // digits
  failIf(() => {
    get(T), i32(1), e(OP.i32LtS);
    get(T), i32(9), e(OP.i32GtS), e(OP.i32Or);
  });
  failIf(() => {
    load8(P, 9), i32(0x30), e(OP.i32Eq), get(T), i32(1), e(OP.i32GtS);
    e(OP.i32And);
  });
  get(I), e(OP.i32Eqz);
  open(OP.if);
  get(N), set(INDEX0);
  e(OP.else);
  failIf(() => {
    get(N), get(INDEX0), get(I), e(OP.i32Add, OP.i32Ne);
  });
  close();
  expect(J, 0, ',"prev_hash":"');
  get(J), i32(14), e(OP.i32Add), set(Q);
  expect(Q, 0, "sha256:");
  // P equals the line before's published hash (71 bytes: five overlapping
  // 16-byte compares); the first line's P is printable ASCII with no quote
  // or backslash (as the walker's segmentAt asks).
  const offsets = [0, 16, 32, 48, 55];
  get(I);
  open(OP.if);
  offsets.forEach((o, k) => {
    get(Q), simd(SIMD.load, ...memarg(0, o));
    get(PREV_PUB), simd(SIMD.load, ...memarg(0, o)), simd(SIMD.i8Eq);
    if (k > 0) simd(SIMD.and);
  });
  simd(SIMD.i8AllTrue);
  failIf(() => e(OP.i32Eqz));
  e(OP.else);
  offsets.forEach((o, k) => {
    get(Q), simd(SIMD.load, ...memarg(0, o)), set(V);
    special();
    if (k > 0) simd(SIMD.or);
  });
  simd(SIMD.i8Bitmask);
  failIf(() => {});
  close();
  expect(Q, 71, '","type":');
  get(Q), i32(80), e(OP.i32Add), set(TS);
  failIf(() => {
    load8(TS), i32(0x22), e(OP.i32Ne);
  });
  get(TS), set(TE);
  string(TE);
  failIf(() => {
    get(TE), get(TS), e(OP.i32Sub), i32(73), e(OP.i32GtU);
  });
  // A run of equal types starts here unless T is the line before's.
  open(OP.block, "same");
  open(OP.block, "new");
  get(I), e(OP.i32Eqz), brIf("new");
  get(TE), get(TS), e(OP.i32Sub), get(PTE), get(PTS), e(OP.i32Sub);
  e(OP.i32Ne), brIf("new");
  i32(0), set(J);
  open(OP.loop, "type");
  get(J), get(TE), get(TS), e(OP.i32Sub), e(OP.i32GeU), brIf("same");
  get(TS), get(J), e(OP.i32Add, OP.i32Load8U, ...memarg(0, 0));
  get(PTS), get(J), e(OP.i32Add, OP.i32Load8U, ...memarg(0, 0));
  e(OP.i32Ne), brIf("new");
  get(J), i32(1), e(OP.i32Add), set(J);
  br("type");
  close();
  close(); // new
  failIf(() => {
    get(RUNS), get(MAX_RUNS), e(OP.i32GeU);
  });
  get(OUT), get(RUNS), i32(12), e(OP.i32Mul, OP.i32Add), set(T);
  get(T), get(I), e(OP.i32Store, ...memarg(2, 8));
  get(T), get(TS), e(OP.i32Store, ...memarg(2, 12));
  get(T), get(TE), e(OP.i32Store, ...memarg(2, 16));
  get(RUNS), i32(1), e(OP.i32Add), set(RUNS);
  close(); // same
  get(TS), set(PTS);
  get(TE), set(PTE);
  expect(TE, 0, ',"record":');
  get(TE), i32(10), e(OP.i32Add), set(P);
  record();
  get(P), set(REC_END);
  expect(REC_END, 0, ',"hash":"sha256:');
  get(REC_END), i32(16), e(OP.i32Add), set(HEX);
  expect(HEX, 64, '"},\n');
  get(AT), get(I), i32(4), e(OP.i32Shl, OP.i32Add), set(T);
  for (const [k, l] of [[0, TS], [1, TE], [2, REC_END], [3, HEX]] as const) {
    get(T), get(l), get(BASE), e(OP.i32Sub, OP.i32Store, ...memarg(2, 4 * k));
  }
  get(HEX), i32(7), e(OP.i32Sub), set(PREV_PUB);
  get(HEX), i32(68), e(OP.i32Add), set(P);
  get(I), i32(1), e(OP.i32Add), set(I);
  get(P), get(END), e(OP.i32LtU), brIf("line");
  close(); // line
  failIf(() => {
    get(P), get(END), e(OP.i32Ne);
  });
  get(OUT), get(INDEX0), e(OP.i32Store, ...memarg(2, 0));
  get(OUT), get(RUNS), e(OP.i32Store, ...memarg(2, 4));
  get(I);
  e(OP.end);

  /**
   * R at P, in the subset: move P past it, or fail. A loop over three
   * states (a value expected, a key expected, after a value) with a stack
   * of open arrays and objects at STACK: per depth its kind (0 object, 1
   * array) and the last key's start and end (-1: none yet).
   */
  function record() {
    const VALUE = 0;
    const KEY = 1;
    const AFTER = 2;
    const top = () => {
      get(STACK), get(DEPTH), i32(12), e(OP.i32Mul, OP.i32Add), i32(12);
      e(OP.i32Sub), set(TOP);
    };
    const push = (kind: number) => {
      get(DEPTH), i32(1), e(OP.i32Add), set(DEPTH);
      failIf(() => {
        get(DEPTH), i32(MAX_DEPTH), e(OP.i32GtU);
      });
      top();
      get(TOP), i32(kind), e(OP.i32Store, ...memarg(2, 0));
      get(TOP), i32(-1), e(OP.i32Store, ...memarg(2, 4));
      get(P), i32(1), e(OP.i32Add), set(P);
    };
    const pop = () => {
      get(P), i32(1), e(OP.i32Add), set(P);
      get(DEPTH), i32(1), e(OP.i32Sub), set(DEPTH);
      i32(AFTER), set(STATE);
      br("value");
    };
    const to = (state: number) => {
      i32(state), set(STATE);
      br("value");
    };
    const isByte = (c: number) => {
      get(C), i32(c), e(OP.i32Eq);
    };
    i32(0), set(DEPTH);
    i32(VALUE), set(STATE);
    open(OP.block, "done");
    open(OP.loop, "value");
    // A value expected.
    get(STATE), i32(VALUE), e(OP.i32Eq);
    open(OP.if);
    load8(P), set(C);
    isByte(0x22);
    open(OP.if);
    string(P);
    to(AFTER);
    close();
    for (const [c, kind, closing] of [[0x7b, 0, 0x7d], [0x5b, 1, 0x5d]]) {
      isByte(c!);
      open(OP.if);
      push(kind!);
      load8(P), i32(closing!), e(OP.i32Eq);
      open(OP.if);
      pop();
      close();
      to(kind === 0 ? KEY : VALUE);
      close();
    }
    for (const word of ["true", "false", "null"]) {
      isByte(word.charCodeAt(0));
      open(OP.if);
      expect(P, 0, word);
      get(P), i32(word.length), e(OP.i32Add), set(P);
      to(AFTER);
      close();
    }
    // An integer: -? (0 | [1-9][0-9]*), not followed by '.', 'e', 'E'
    // (nor by a digit after a 0); -0 is not in the subset.
    get(P), set(J);
    isByte(0x2d);
    open(OP.if);
    get(J), i32(1), e(OP.i32Add), set(J);
    load8(J), set(C);
    close();
    get(C), i32(0x31), e(OP.i32Sub), i32(9), e(OP.i32LtU);
    open(OP.if);
    open(OP.loop, "int");
    get(J), i32(1), e(OP.i32Add), set(J);
    load8(J), i32(0x30), e(OP.i32Sub), i32(10), e(OP.i32LtU), brIf("int");
    close();
    e(OP.else);
    failIf(() => {
      get(C), i32(0x30), e(OP.i32Ne);
      get(J), get(P), e(OP.i32Ne), e(OP.i32Or);
    });
    get(J), i32(1), e(OP.i32Add), set(J);
    failIf(() => {
      load8(J), i32(0x30), e(OP.i32Sub), i32(10), e(OP.i32LtU);
    });
    close();
    load8(J), set(C);
    failIf(() => {
      isByte(0x2e), isByte(0x65), e(OP.i32Or), isByte(0x45), e(OP.i32Or);
    });
    get(J), set(P);
    to(AFTER);
    close(); // value expected
    // A key expected.
    get(STATE), i32(KEY), e(OP.i32Eq);
    open(OP.if);
    failIf(() => {
      load8(P), i32(0x22), e(OP.i32Ne);
    });
    get(P), set(K0);
    string(P);
    get(P), set(K1);
    // No key starting "contract_recipe (17 or 18 bytes with its quotes).
    failIf(() => {
      get(K1), get(K0), e(OP.i32Sub), i32(17), e(OP.i32Sub), i32(2);
      e(OP.i32LtU);
      get(K0), e(OP.i64Load, ...memarg(0, 1), OP.i64Const);
      e(...sleb64(le("contract")), OP.i64Ne, OP.i32Eqz, OP.i32And);
      get(K0), e(OP.i64Load, ...memarg(0, 8), OP.i64Const);
      e(...sleb64(le("t_recipe")), OP.i64Ne, OP.i32Eqz, OP.i32And);
    });
    top();
    // Keys strictly increase, byte by byte (a prefix first).
    get(TOP), e(OP.i32Load, ...memarg(2, 4)), set(T);
    get(T), i32(0), e(OP.i32GeS);
    open(OP.if);
    get(TOP), e(OP.i32Load, ...memarg(2, 8)), get(T), e(OP.i32Sub), set(M);
    get(K1), get(K0), e(OP.i32Sub), set(J);
    // M, J: the lengths with quotes; Q: the shorter.
    get(M), get(J), get(M), get(J), e(OP.i32LtU, OP.select), i32(2);
    e(OP.i32Sub), set(Q);
    i32(1), set(N);
    open(OP.block, "ordered");
    open(OP.loop, "byte");
    open(OP.block, "differ");
    get(N), get(Q), e(OP.i32GtU);
    open(OP.if);
    // Equal up to the shorter: the previous key must be the shorter one.
    failIf(() => {
      get(M), get(J), e(OP.i32GeU);
    });
    br("ordered");
    close();
    get(T), get(N), e(OP.i32Add, OP.i32Load8U, ...memarg(0, 0)), set(C);
    get(K0), get(N), e(OP.i32Add, OP.i32Load8U, ...memarg(0, 0));
    get(C), e(OP.i32Ne), brIf("differ");
    get(N), i32(1), e(OP.i32Add), set(N);
    br("byte");
    close(); // differ
    failIf(() => {
      get(C);
      get(K0), get(N), e(OP.i32Add, OP.i32Load8U, ...memarg(0, 0));
      e(OP.i32GeU);
    });
    br("ordered");
    close(); // byte
    close(); // ordered
    close(); // a previous key
    get(TOP), get(K0), e(OP.i32Store, ...memarg(2, 4));
    get(TOP), get(K1), e(OP.i32Store, ...memarg(2, 8));
    failIf(() => {
      load8(P), i32(0x3a), e(OP.i32Ne);
    });
    get(P), i32(1), e(OP.i32Add), set(P);
    to(VALUE);
    close(); // key expected
    // After a value.
    get(DEPTH), e(OP.i32Eqz), brIf("done");
    top();
    load8(P), set(C);
    isByte(0x2c);
    open(OP.if);
    get(P), i32(1), e(OP.i32Add), set(P);
    i32(VALUE), i32(KEY), get(TOP), e(OP.i32Load, ...memarg(2, 0));
    e(OP.select), set(STATE);
    br("value");
    close();
    for (const [c, kind] of [[0x7d, 0], [0x5d, 1]]) {
      isByte(c!);
      get(TOP), e(OP.i32Load, ...memarg(2, 0)), i32(kind!), e(OP.i32Eq);
      e(OP.i32And);
      open(OP.if);
      pop();
      close();
    }
    fail();
    close(); // value loop
    close(); // done
  }

  return [
    ...vec([[...uleb(i32Count), I32], [1, V128]]),
    ...code,
  ];
}

/** Eight ASCII bytes as a little-endian 64-bit integer. */
function le(s: string): bigint {
  let v = 0n;
  for (let k = s.length - 1; k >= 0; k--) {
    v = (v << 8n) | BigInt(s.charCodeAt(k));
  }
  return v;
}
