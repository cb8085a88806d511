/**
 * The check of `canonical_text.ts` made on UTF-8 bytes: whether a piece of
 * JSON, as it sits in a file's bytes, already is canonical JSON (the exact
 * text `canonicalJson` would write, as Python reads it), in one scan and
 * without decoding it to a string. Pure.
 *
 * When it is, those bytes are exactly the UTF-8 of the canonical form, so a
 * ledger walk can hash them as they stand. Invalid UTF-8 is never canonical.
 *
 * @module
 */
import { compareCodePoints, pythonFloatRepr } from "./canonical.ts";

/** The bytes being checked, and a view of them for reading four at a time. */
let BYTES: Uint8Array = new Uint8Array(0);
let VIEW: DataView = new DataView(BYTES.buffer);

/**
 * The offset of the first byte at or after `i` that is not plain string
 * text (a quote, a backslash, a control character or a byte above 0x7f),
 * or of the end of the bytes: four bytes at a time, then one at a time.
 */
function plainEnd(b: Uint8Array, i: number): number {
  const end = b.length - 4;
  const v = VIEW;
  while (i <= end) {
    const w = v.getInt32(i);
    // A byte below 0x20, a byte equal to 0x22 or 0x5c, or a high bit set
    // (the usual zero-byte tests, exact for whether any byte matches).
    const q = w ^ 0x22222222;
    const k = w ^ 0x5c5c5c5c;
    if (
      (((w - 0x20202020) & ~w) | ((q - 0x01010101) & ~q) |
        ((k - 0x01010101) & ~k) | w) & 0x80808080
    ) break;
    i += 4;
  }
  let c = b[i]!;
  while (CLASS[c] === 0) c = b[++i]!;
  return i;
}

/** Set by str(): whether the string just read had an escape. */
let ESCAPED = false;
/** Set when an object key `contract_recipe` or `contract_recipes` was seen. */
let RECIPE_KEY = false;

// Byte classes inside a string: 0 plain ASCII, 1 quote, 2 backslash,
// 3 control (or the end), 4 a UTF-8 lead byte to check, 5 never valid.
const CLASS = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  CLASS[c] = c < 0x20
    ? 3
    : c === 0x22
    ? 1
    : c === 0x5c
    ? 2
    : c < 0x80
    ? 0
    : c >= 0xc2 && c <= 0xf4
    ? 4
    : 5;
}

/** The UTF-8 sequence at b[i] whose lead byte is `c`: its length, or 0 when invalid (overlong, surrogate, above U+10FFFF, truncated). */
function utf8(b: Uint8Array, i: number, c: number): number {
  const b1 = b[i + 1]!;
  if (c <= 0xdf) return (b1 & 0xc0) === 0x80 ? 2 : 0;
  if (c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    if (!(b1 >= lo && b1 <= hi)) return 0;
    return (b[i + 2]! & 0xc0) === 0x80 ? 3 : 0;
  }
  const lo = c === 0xf0 ? 0x90 : 0x80;
  const hi = c === 0xf4 ? 0x8f : 0xbf;
  if (!(b1 >= lo && b1 <= hi)) return 0;
  return (b[i + 2]! & 0xc0) === 0x80 && (b[i + 3]! & 0xc0) === 0x80 ? 4 : 0;
}

function hexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66);
}

/** At an opening quote b[i]: the offset after a canonically written string, or -1. Sets ESCAPED. */
function str(b: Uint8Array, i: number): number {
  i++;
  ESCAPED = false;
  while (true) {
    i = plainEnd(b, i);
    const c = b[i]!;
    const k = CLASS[c];
    if (k === 1) return i + 1;
    if (k === 2) {
      ESCAPED = true;
      const e = b[i + 1]!;
      // \" \\ \b \f \n \r \t: the short escapes Python writes.
      if (
        e === 0x22 || e === 0x5c || e === 0x62 || e === 0x66 || e === 0x6e ||
        e === 0x72 || e === 0x74
      ) {
        i += 2;
        continue;
      }
      if (e === 0x75) {
        // \u00xx, lowercase, only for a control character without a short escape.
        const h2 = b[i + 4]!;
        const h3 = b[i + 5]!;
        if (
          b[i + 2] !== 0x30 || b[i + 3] !== 0x30 ||
          (h2 !== 0x30 && h2 !== 0x31) || !hexDigit(h3)
        ) return -1;
        const code = (h2 - 0x30) * 16 + (h3 <= 0x39 ? h3 - 0x30 : h3 - 0x57);
        if (
          code === 8 || code === 9 || code === 10 || code === 12 || code === 13
        ) return -1;
        i += 6;
        continue;
      }
      return -1; // \/ or anything else Python never writes
    }
    if (k === 4) {
      const n = utf8(b, i, c);
      if (n === 0) return -1;
      i += n;
      continue;
    }
    return -1; // a raw control character, invalid UTF-8, or the end of the bytes
  }
}

const DECODER = new TextDecoder("utf-8", { fatal: true });

/** Whether the key at b[a0, a1) sorts strictly before the key at b[b0, b1) (each range includes its quotes). */
function keyBefore(
  b: Uint8Array,
  a0: number,
  a1: number,
  aPlain: boolean,
  b0: number,
  b1: number,
  bPlain: boolean,
): boolean {
  if (aPlain && bPlain) {
    // No escapes: UTF-8 byte order is code point order.
    const la = a1 - a0 - 2;
    const lb = b1 - b0 - 2;
    const n = la < lb ? la : lb;
    for (let k = 1; k <= n; k++) {
      const x = b[a0 + k]!;
      const y = b[b0 + k]!;
      if (x !== y) return x < y;
    }
    return la < lb;
  }
  const x = JSON.parse(DECODER.decode(b.subarray(a0, a1))) as string;
  const y = JSON.parse(DECODER.decode(b.subarray(b0, b1))) as string;
  return compareCodePoints(x, y) < 0;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

/** At a number's first byte: the offset after it when canonical, or -1. */
function num(b: Uint8Array, i: number): number {
  // Plain integers, the common case.
  let j = i;
  if (b[j] === 0x2d) j++;
  const first = b[j]!;
  if (first >= 0x31 && first <= 0x39) {
    j++;
    let c = b[j]!;
    while (c >= 0x30 && c <= 0x39) c = b[++j]!;
    if (c !== 0x2e && c !== 0x65 && c !== 0x45) return j;
  } else if (first === 0x30) {
    const c = b[j + 1]!;
    if (c !== 0x2e && c !== 0x65 && c !== 0x45 && !(c >= 0x30 && c <= 0x39)) {
      return j !== i ? -1 : j + 1; // -0: Python's int -0 is 0
    }
  }
  // A float (or a malformed number): its characters, checked as canonical_text does.
  let e = i;
  while (true) {
    const c = b[e]!;
    if (
      (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e ||
      c === 0x65 || c === 0x45
    ) e++;
    else break;
  }
  let s = "";
  for (let k = i; k < e; k++) s += String.fromCharCode(b[k]!);
  NUMBER.lastIndex = 0;
  const m = NUMBER.exec(s);
  if (m === null) return -1;
  const lex = m[0];
  const end = i + NUMBER.lastIndex;
  if (m[1] === undefined && m[2] === undefined) return lex !== "-0" ? end : -1;
  const v = Number(lex);
  return Number.isFinite(v) && pythonFloatRepr(v) === lex ? end : -1;
}

function lit(b: Uint8Array, i: number, word: readonly number[]): number {
  for (let k = 0; k < word.length; k++) {
    if (b[i + k] !== word[k]) return -1;
  }
  return i + word.length;
}
const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/** At a value's first byte: the offset after it when canonical, or -1. */
function value(b: Uint8Array, i: number): number {
  const c = b[i]!;
  switch (c) {
    case 0x22:
      return str(b, i);
    case 0x7b: // {
      return obj(b, i);
    case 0x5b: // [
      return arr(b, i);
    case 0x74:
      return lit(b, i, TRUE);
    case 0x66:
      return lit(b, i, FALSE);
    case 0x6e:
      return lit(b, i, NULL);
    default:
      return (c === 0x2d || (c >= 0x30 && c <= 0x39)) ? num(b, i) : -1;
  }
}

function arr(b: Uint8Array, i: number): number {
  i++;
  if (b[i] === 0x5d) return i + 1;
  while (true) {
    i = value(b, i);
    if (i < 0) return -1;
    const c = b[i];
    if (c === 0x2c) {
      i++;
      continue;
    }
    return c === 0x5d ? i + 1 : -1;
  }
}

// "contract_recipe" without its closing quote.
const RECIPE = [...'"contract_recipe'].map((c) => c.charCodeAt(0));

function isRecipeKey(b: Uint8Array, k0: number, k1: number): boolean {
  for (let k = 0; k < RECIPE.length; k++) {
    if (b[k0 + k] !== RECIPE[k]) return false;
  }
  return k1 - k0 === 17 || b[k0 + 16] === 0x73; // "contract_recipe" or "contract_recipes"
}

function obj(b: Uint8Array, i: number): number {
  i++;
  if (b[i] === 0x7d) return i + 1;
  let p0 = -1;
  let p1 = -1;
  let pPlain = true;
  while (true) {
    if (b[i] !== 0x22) return -1;
    const k0 = i;
    // The key: plain ASCII up to its closing quote inline, anything else
    // through str().
    let j = plainEnd(b, k0 + 1);
    let c = b[j]!;
    let kPlain = true;
    if (c === 0x22) i = j + 1;
    else {
      i = str(b, k0);
      if (i < 0) return -1;
      kPlain = !ESCAPED;
    }
    if (p0 >= 0 && !keyBefore(b, p0, p1, pPlain, k0, i, kPlain)) return -1;
    if ((i - k0 === 17 || i - k0 === 18) && b[k0 + 1] === 0x63) {
      if (isRecipeKey(b, k0, i)) RECIPE_KEY = true;
    }
    p0 = k0;
    p1 = i;
    pPlain = kPlain;
    if (b[i] !== 0x3a) return -1;
    i++;
    if (b[i] === 0x22) {
      // A string value, the same way.
      j = plainEnd(b, i + 1);
      i = b[j] === 0x22 ? j + 1 : str(b, i);
    } else i = value(b, i);
    if (i < 0) return -1;
    c = b[i]!;
    if (c === 0x2c) {
      i++;
      continue;
    }
    return c === 0x7d ? i + 1 : -1;
  }
}

/**
 * If the bytes at `start` begin with one value written exactly in canonical
 * form (UTF-8), return the offset just after it; otherwise -1. The value
 * must be followed by a byte that cannot continue it (any byte outside the
 * value's syntax, such as `,` or a newline) before the end of `bytes`.
 * Never throws.
 *
 * @example
 * ```ts
 * const b = new TextEncoder().encode('{"a":1.0,"b":[]}\n');
 * canonicalBytesEnd(b, 0); // 16
 * canonicalBytesEnd(new TextEncoder().encode('{"b":1,"a":2}\n'), 0); // -1 (keys out of order)
 * ```
 */
export function canonicalBytesEnd(bytes: Uint8Array, start: number): number {
  RECIPE_KEY = false;
  if (bytes !== BYTES) {
    BYTES = bytes;
    VIEW = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  try {
    return value(bytes, start);
  } catch {
    return -1; // an escape JSON.parse refuses, or nesting too deep: not canonical
  }
}

/**
 * Whether the last value {@linkcode canonicalBytesEnd} checked has an
 * object key `contract_recipe` or `contract_recipes` (the keys that state a
 * contract recipe) anywhere in it.
 */
export function sawRecipeKey(): boolean {
  return RECIPE_KEY;
}
