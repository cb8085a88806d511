/**
 * A one-pass check that a piece of JSON text already is canonical JSON (the
 * exact text `canonicalJson` would write for the value it denotes, as Python
 * reads it), without parsing it into values. Pure.
 *
 * It lets ledger verification hash a verity ledger's record text directly:
 * when the text is canonical, hashing it is hashing the canonical form.
 *
 * @module
 */
import { compareCodePoints, pythonFloatRepr } from "./canonical.ts";

let S = "";
let I = 0;
let SAW_SURROGATE = false;

// Runs of string characters that need no attention.
// deno-lint-ignore no-control-regex -- control characters are what it must stop at
const PLAIN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const CONTROL_ESCAPE = /^00[01][0-9a-f]$/;

// Set by str(): whether the string just read had an escape or a surrogate pair.
let ESCAPED = false;

/** At an opening quote: consume a canonically written string; false if it is not canonical. */
function str(): boolean {
  I++;
  ESCAPED = false;
  SAW_SURROGATE = false;
  while (true) {
    PLAIN.lastIndex = I;
    PLAIN.test(S);
    I = PLAIN.lastIndex;
    const c = S.charCodeAt(I);
    if (c === 0x22) {
      I++;
      return true;
    }
    if (c === 0x5c) {
      ESCAPED = true;
      const e = S.charCodeAt(I + 1);
      // \" \\ \b \f \n \r \t: the short escapes Python writes.
      if (
        e === 0x22 || e === 0x5c || e === 0x62 || e === 0x66 || e === 0x6e ||
        e === 0x72 || e === 0x74
      ) {
        I += 2;
        continue;
      }
      if (e === 0x75) {
        // \u00xx, lowercase, only for a control character without a short escape.
        const hex = S.slice(I + 2, I + 6);
        if (!CONTROL_ESCAPE.test(hex)) return false;
        const code = parseInt(hex, 16);
        if (
          code === 8 || code === 9 || code === 10 || code === 12 || code === 13
        ) return false;
        I += 6;
        continue;
      }
      return false; // \/ or anything else Python never writes
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = S.charCodeAt(I + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        SAW_SURROGATE = true;
        I += 2;
        continue;
      }
      return false;
    }
    return false; // a raw control character, a lone low surrogate, or the end of the text
  }
}

/** Whether the key at S[a0, a1) sorts strictly before the key at S[b0, b1) (each range includes its quotes). */
function keyBefore(
  a0: number,
  a1: number,
  aPlain: boolean,
  b0: number,
  b1: number,
  bPlain: boolean,
): boolean {
  if (aPlain && bPlain) {
    // No escapes and no surrogates: compare the characters between the quotes in place.
    const la = a1 - a0 - 2;
    const lb = b1 - b0 - 2;
    const n = Math.min(la, lb);
    for (let k = 1; k <= n; k++) {
      const x = S.charCodeAt(a0 + k);
      const y = S.charCodeAt(b0 + k);
      if (x !== y) return x < y;
    }
    return la < lb;
  }
  const a = JSON.parse(S.slice(a0, a1)) as string;
  const b = JSON.parse(S.slice(b0, b1)) as string;
  return compareCodePoints(a, b) < 0;
}

function num(): boolean {
  // Plain integers, the common case, without the regular expression.
  let j = I;
  if (S.charCodeAt(j) === 0x2d) j++;
  const first = S.charCodeAt(j);
  if (first >= 0x31 && first <= 0x39) {
    j++;
    let c = S.charCodeAt(j);
    while (c >= 0x30 && c <= 0x39) c = S.charCodeAt(++j);
    if (c !== 0x2e && c !== 0x65 && c !== 0x45) {
      I = j;
      return true;
    }
  } else if (first === 0x30) {
    const c = S.charCodeAt(j + 1);
    if (c !== 0x2e && c !== 0x65 && c !== 0x45 && !(c >= 0x30 && c <= 0x39)) {
      if (j !== I) return false; // -0: Python's int -0 is 0
      I = j + 1;
      return true;
    }
  }
  NUMBER.lastIndex = I;
  const m = NUMBER.exec(S);
  if (m === null) return false;
  I = NUMBER.lastIndex;
  const lex = m[0];
  if (m[1] === undefined && m[2] === undefined) return lex !== "-0";
  const v = Number(lex);
  return Number.isFinite(v) && pythonFloatRepr(v) === lex;
}

function value(): boolean {
  const c = S.charCodeAt(I);
  switch (c) {
    case 0x7b: // {
      return obj();
    case 0x5b: // [
      return arr();
    case 0x22:
      return str();
    case 0x74:
      if (S.startsWith("true", I)) {
        I += 4;
        return true;
      }
      return false;
    case 0x66:
      if (S.startsWith("false", I)) {
        I += 5;
        return true;
      }
      return false;
    case 0x6e:
      if (S.startsWith("null", I)) {
        I += 4;
        return true;
      }
      return false;
    default:
      return (c === 0x2d || (c >= 0x30 && c <= 0x39)) && num();
  }
}

function arr(): boolean {
  I++;
  if (S.charCodeAt(I) === 0x5d) {
    I++;
    return true;
  }
  while (true) {
    if (!value()) return false;
    const c = S.charCodeAt(I);
    if (c === 0x2c) {
      I++;
      continue;
    }
    if (c === 0x5d) {
      I++;
      return true;
    }
    return false;
  }
}

function obj(): boolean {
  I++;
  if (S.charCodeAt(I) === 0x7d) {
    I++;
    return true;
  }
  let p0 = -1;
  let p1 = -1;
  let pPlain = true;
  while (true) {
    if (S.charCodeAt(I) !== 0x22) return false;
    const k0 = I;
    if (!str()) return false;
    const k1 = I;
    const kPlain = !ESCAPED && !SAW_SURROGATE;
    if (p0 >= 0 && !keyBefore(p0, p1, pPlain, k0, k1, kPlain)) return false;
    p0 = k0;
    p1 = k1;
    pPlain = kPlain;
    if (S.charCodeAt(I) !== 0x3a) return false;
    I++;
    if (!value()) return false;
    const c = S.charCodeAt(I);
    if (c === 0x2c) {
      I++;
      continue;
    }
    if (c === 0x7d) {
      I++;
      return true;
    }
    return false;
  }
}

/**
 * If the text at `start` begins with one value written exactly in canonical
 * form, return the offset just after it; otherwise -1. Never throws.
 *
 * @example
 * ```ts
 * canonicalValueEnd('{"a":1.0,"b":[]}', 0); // 16
 * canonicalValueEnd('{"b":1,"a":2}', 0); // -1 (keys out of order)
 * ```
 */
export function canonicalValueEnd(text: string, start: number): number {
  S = text;
  I = start;
  try {
    return value() ? I : -1;
  } catch {
    return -1; // an escape JSON.parse refuses: not canonical
  } finally {
    S = "";
  }
}

/**
 * Whether `text` is exactly the canonical JSON of the value it denotes (as
 * Python reads it): `canonicalJson(parsePythonJson(text)) === text`, decided
 * without building the value.
 */
export function isCanonicalText(text: string): boolean {
  return canonicalValueEnd(text, 0) === text.length;
}
