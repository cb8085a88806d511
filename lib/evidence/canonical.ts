/**
 * Canonical JSON and SHA-256, byte-compatible with Python's
 * `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
 * encoded as UTF-8 (the form mcp-evidence-validator hashes). Pure.
 *
 * - Keys sorted by Unicode code point (Python's `sort_keys`), not by UTF-16
 *   code unit (they differ only for keys holding astral characters).
 * - No insignificant whitespace; non-ASCII written as itself; the same
 *   escapes as Python (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
 *   control characters as lowercase `\u00xx`).
 * - Numbers: an integral JS number below 1e21 prints as an integer; any other
 *   finite number prints the way Python's `repr(float)` does (`1e-05`,
 *   `1e+16`, `0.0001`). A {@linkcode PyFloat} prints as a Python float even
 *   when integral (`1.0`); a `bigint` prints as an exact integer.
 * - Refused with `TypeError` naming the JSON pointer: NaN, ±Infinity,
 *   `undefined` in an array, lone surrogates (not encodable as UTF-8),
 *   functions, symbols, and any object that is not a plain object or array
 *   (Date, Map, class instances). An object property whose value is
 *   `undefined` is omitted, as `JSON.stringify` does.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { DuplicateKeyError, readJson } from "../contracts/json_reader.ts";

export { DuplicateKeyError };

/**
 * A JSON number that was written as a float (it had a `.`, `e` or `E`) and
 * whose value is integral, such as `1.0`. JavaScript cannot tell `1.0` from
 * `1`; Python prints them differently, so values read from a Python-written
 * file keep the distinction in this wrapper.
 */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
    Object.freeze(this);
  }
  /** JSON.stringify form: the plain number (loses the `.0`). */
  toJSON(): number {
    return this.value;
  }
}

/**
 * Format a finite number exactly as Python's `repr(float)` does.
 *
 * @example
 * ```ts
 * pythonFloatRepr(1); // "1.0"
 * pythonFloatRepr(1e-5); // "1e-05"
 * pythonFloatRepr(1e16); // "1e+16"
 * ```
 */
export function pythonFloatRepr(n: number): string {
  if (!Number.isFinite(n)) {
    throw new TypeError(`canonical JSON refuses ${n}: not a finite number`);
  }
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  // toExponential() with no argument gives the shortest round-trip digits,
  // the same digits Python's repr chooses.
  const s = n.toExponential();
  const e = s.indexOf("e");
  let mant = s.slice(0, e);
  const exp = Number(s.slice(e + 1));
  let sign = "";
  if (mant.charCodeAt(0) === 45) {
    sign = "-";
    mant = mant.slice(1);
  }
  const digits = mant.length > 1 ? mant[0] + mant.slice(2) : mant;
  const decpt = exp + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
    if (decpt >= digits.length) {
      return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
    }
    return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  const m = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  const x = decpt - 1;
  return `${sign}${m}e${x < 0 ? "-" : "+"}${
    String(Math.abs(x)).padStart(2, "0")
  }`;
}

function numberText(n: number): string {
  if (Number.isInteger(n) && n < 1e21 && n > -1e21) return String(n);
  return pythonFloatRepr(n);
}

function stringText(s: string): string {
  if (!s.isWellFormed()) {
    throw new TypeError(
      `canonical JSON refuses a string with a lone surrogate (not UTF-8): ${
        JSON.stringify(s.slice(0, 40))
      }`,
    );
  }
  return JSON.stringify(s);
}

/**
 * Order two strings by Unicode code point (not UTF-16 unit), as canonical
 * JSON sorts object keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(compareCodePoints("\u{1F600}", "\uFFFF") > 0);
 * ```
 */
export function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  while (true) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}

function hasSurrogate(k: string): boolean {
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}

function sortedKeys(o: Record<string, unknown>): string[] {
  const keys = Object.keys(o);
  if (keys.length < 2) return keys;
  keys.sort();
  // UTF-16 order equals code point order unless a key holds a surrogate.
  for (let i = 0; i < keys.length; i++) {
    if (hasSurrogate(keys[i]!)) return keys.sort(compareCodePoints);
  }
  return keys;
}

const SURROGATE_TEXT = /[\uD800-\uDFFF]|\\u[dD][89abAB]/;

function at(path: readonly (string | number)[]): string {
  return path.length === 0 ? "/" : "/" + path.join("/");
}

function refuse(v: unknown, path: readonly (string | number)[]): never {
  if (typeof v === "number" || v instanceof PyFloat) {
    const n = typeof v === "number" ? v : v.value;
    throw new TypeError(
      `canonical JSON refuses ${n} at ${at(path)}: not a finite number`,
    );
  }
  if (v === undefined) {
    throw new TypeError(`canonical JSON refuses undefined at ${at(path)}`);
  }
  if (typeof v === "object" && v !== null) {
    const name = (v as { constructor?: { name?: string } }).constructor?.name ??
      "object";
    throw new TypeError(
      `canonical JSON refuses a ${name} at ${
        at(path)
      }: only plain objects and arrays`,
    );
  }
  throw new TypeError(`canonical JSON refuses a ${typeof v} at ${at(path)}`);
}

// `path` is a stack of keys pushed and popped on the way down, so no path
// string is built unless a value is refused.
function write(v: unknown, path: (string | number)[]): string {
  switch (typeof v) {
    case "string":
      return stringText(v);
    case "number":
      if (!Number.isFinite(v)) refuse(v, path);
      return numberText(v);
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) {
        const n = v.length;
        if (n === 0) return "[]";
        let out = "[";
        for (let i = 0; i < n; i++) {
          const x = v[i];
          path.push(i);
          if (x === undefined) refuse(x, path);
          out += (i > 0 ? "," : "") + write(x, path);
          path.pop();
        }
        return out + "]";
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        if (v instanceof PyFloat) {
          if (!Number.isFinite(v.value)) refuse(v, path);
          return pythonFloatRepr(v.value);
        }
        refuse(v, path);
      }
      const o = v as Record<string, unknown>;
      let out = "{";
      let first = true;
      for (const k of sortedKeys(o)) {
        const x = o[k];
        if (x === undefined) continue;
        path.push(k);
        out += (first ? "" : ",") + stringText(k) + ":" + write(x, path);
        path.pop();
        first = false;
      }
      return out + "}";
    }
    default:
      return refuse(v, path);
  }
}

/**
 * Serialize a value to canonical JSON (see the module doc for the rules).
 * Throws `TypeError` naming the JSON pointer of a value it refuses.
 *
 * @example
 * ```ts
 * canonicalJson({ b: [1, 2.5], a: "é" }); // '{"a":"é","b":[1,2.5]}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) {
    throw new TypeError("canonical JSON refuses undefined");
  }
  let native: unknown = NOT_NATIVE;
  if (nativeIsCanonical(value)) native = value;
  else native = sortedCopy(value);
  if (native !== NOT_NATIVE) {
    const s = JSON.stringify(native);
    // Any surrogate (an astral character, whose key order may differ by code
    // point, or a lone surrogate JSON.stringify escaped) takes the full path.
    if (!SURROGATE_TEXT.test(s)) return s;
  }
  return write(value, []);
}

const NOT_NATIVE: unique symbol = Symbol("not native");
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

/**
 * A copy of `v` with every object's keys inserted in sorted order, so that
 * `JSON.stringify` of it is canonical; or NOT_NATIVE when that cannot be
 * (a number Python prints differently, a PyFloat or bigint, an array-index
 * key, which JSON.stringify always puts first, or a value to refuse).
 */
function sortedCopy(v: unknown): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return (Number.isInteger(v)
          ? v < 1e21 && v > -1e21
          : Number.isFinite(v) && Math.abs(v) >= 1e-4)
        ? v
        : NOT_NATIVE;
    case "object": {
      if (v === null) return null;
      if (Array.isArray(v)) {
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) return NOT_NATIVE;
          const c = sortedCopy(x);
          if (c === NOT_NATIVE) return NOT_NATIVE;
          out[i] = c;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return NOT_NATIVE;
      const keys = Object.keys(v).sort();
      const out: Record<string, unknown> = {};
      for (const k of keys) {
        if (ARRAY_INDEX.test(k) || k === "__proto__") return NOT_NATIVE;
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined) continue;
        const c = sortedCopy(x);
        if (c === NOT_NATIVE) return NOT_NATIVE;
        out[k] = c;
      }
      return out;
    }
    default:
      return NOT_NATIVE;
  }
}

/**
 * Whether `JSON.stringify(v)` already is the canonical form, for a value
 * whose strings and keys hold no UTF-16 surrogate (an astral character or
 * a lone surrogate; {@linkcode canonicalJson} tests its output for those):
 * every object's keys in order, every number printed the same way by
 * JavaScript and Python, nothing to refuse. A check without building
 * strings, so the common case costs one walk plus the native serializer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(nativeIsCanonical({ a: 1, b: [0.5] }), true);
 * assert.equal(nativeIsCanonical({ b: 1, a: 2 }), false); // keys not sorted
 * assert.equal(nativeIsCanonical({ a: 1e-5 }), false); // Python writes 1e-05
 * ```
 */
export function nativeIsCanonical(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      // Integers below 1e21 print as integers in both; other numbers print
      // alike in fixed notation, which both use from 1e-4 up.
      return Number.isInteger(v)
        ? v < 1e21 && v > -1e21
        : Number.isFinite(v) && Math.abs(v) >= 1e-4;
    case "object": {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined || !nativeIsCanonical(x)) return false;
        }
        return true;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return false;
      // for-in visits own keys in Object.keys order (plain objects inherit
      // no enumerable keys) without allocating the key array.
      let prev: string | null = null;
      for (const k in v) {
        if (prev !== null && !(prev < k)) return false;
        const x = (v as Record<string, unknown>)[k];
        if (x !== undefined && !nativeIsCanonical(x)) return false;
        prev = k;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Whether `text`'s stretch from a to ae sorts before that from b to be. */
function keyBefore(
  text: string,
  a: number,
  ae: number,
  b: number,
  be: number,
): boolean {
  for (; a < ae && b < be; a++, b++) {
    const x = text.charCodeAt(a);
    const y = text.charCodeAt(b);
    if (x !== y) return x < y;
  }
  return a === ae && b < be;
}

const FLOAT_LEXEME = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/**
 * Where the JSON value at `at` in `text` ends, when it is already in
 * canonical form, for text that is printable ASCII without a backslash (so
 * a string is its two quotes and what lies between); -1 when it is not
 * canonical (keys out of order or repeated, a number Python prints
 * otherwise, `-0`), not JSON, or nested deeper than `depth`. A check
 * without parsing: {@linkcode canonicalJson} of the value Python reads
 * there is then exactly that stretch of text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(canonicalEnd('{"a":[1,0.5],"b":null}', 0), 22);
 * assert.equal(canonicalEnd('{"b":1,"a":2}', 0), -1); // keys not sorted
 * assert.equal(canonicalEnd("1e-5", 0), -1); // Python writes 1e-05
 * ```
 */
export function canonicalEnd(text: string, at: number, depth = 1000): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) {
    const e = text.indexOf('"', at + 1);
    return e < 0 ? -1 : e + 1;
  }
  if (c === 0x7b || c === 0x5b) {
    if (depth === 0) return -1;
    const close = c + 2; // } or ]
    let i = at + 1;
    if (text.charCodeAt(i) === close) return i + 1;
    let key = -1; // where the last key starts, and ends
    let keyEnd = -1;
    for (;;) {
      if (c === 0x7b) {
        const e = text.indexOf('"', i + 1);
        if (text.charCodeAt(i) !== 0x22 || e < 0) return -1;
        if (key >= 0 && !keyBefore(text, key, keyEnd, i + 1, e)) return -1;
        if (text.charCodeAt(e + 1) !== 0x3a) return -1;
        key = i + 1;
        keyEnd = e;
        i = e + 2;
      }
      i = canonicalEnd(text, i, depth - 1);
      if (i < 0) return -1;
      const d = text.charCodeAt(i);
      if (d === close) return i + 1;
      if (d !== 0x2c) return -1;
      i++;
    }
  }
  if (c === 0x74) return text.startsWith("true", at) ? at + 4 : -1;
  if (c === 0x66) return text.startsWith("false", at) ? at + 5 : -1;
  if (c === 0x6e) return text.startsWith("null", at) ? at + 4 : -1;
  let i = c === 0x2d ? at + 1 : at; // an integer, unless . e or E follows
  const first = text.charCodeAt(i);
  for (; i < text.length; i++) {
    const d = text.charCodeAt(i);
    if (d < 0x30 || d > 0x39) break;
  }
  const next = text.charCodeAt(i);
  if (next !== 0x2e && next !== 0x65 && next !== 0x45) {
    const digits = i - at - (c === 0x2d ? 1 : 0);
    if (digits === 0 || (first === 0x30 && (digits > 1 || c === 0x2d))) {
      return -1; // not a number, a leading zero, or -0
    }
    return i;
  }
  FLOAT_LEXEME.lastIndex = at;
  const lex = FLOAT_LEXEME.exec(text)?.[0];
  if (lex === undefined) return -1;
  const v = Number(lex);
  return Number.isFinite(v) && pythonFloatRepr(v) === lex
    ? at + lex.length
    : -1;
}

/**
 * Hex SHA-256 of a string (hashed as UTF-8) or of bytes.
 *
 * @example
 * ```ts
 * sha256Hex("abc"); // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** `"sha256:" + sha256Hex(canonicalJson(value))`. */
export function fingerprint(value: unknown): string {
  return "sha256:" + sha256Hex(canonicalJson(value));
}

/** True when `s` is `sha256:` followed by 64 lowercase hex digits. */
export function isDigest(s: unknown): s is string {
  return typeof s === "string" && /^sha256:[0-9a-f]{64}$/.test(s);
}

function pretty(
  v: unknown,
  indent: string,
  step: string,
  path: (string | number)[],
): string {
  if (v === null || typeof v !== "object" || v instanceof PyFloat) {
    return write(v, path);
  }
  const inner = indent + step;
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    const parts: string[] = [];
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      if (v[i] === undefined) refuse(undefined, path);
      parts.push(inner + pretty(v[i], inner, step, path));
      path.pop();
    }
    return `[\n${parts.join(",\n")}\n${indent}]`;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) refuse(v, path);
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o)) {
    if (o[k] === undefined) continue;
    path.push(k);
    parts.push(`${inner}${stringText(k)}: ${pretty(o[k], inner, step, path)}`);
    path.pop();
  }
  if (parts.length === 0) return "{}";
  return `{\n${parts.join(",\n")}\n${indent}}`;
}

/**
 * Indented JSON for files people read (manifests, reports): keys in their
 * own order, but numbers, strings and refusals exactly as in
 * {@linkcode canonicalJson}, so reading the text back with
 * {@linkcode parsePythonJson} gives the same canonical form (a `1.0` stays
 * `1.0`).
 */
export function prettyJson(value: unknown, indent = 2): string {
  if (value === undefined) {
    throw new TypeError("canonical JSON refuses undefined");
  }
  return pretty(value, "", " ".repeat(indent), []);
}

function isNumberChar(c: number): boolean {
  // 0-9 . - + e E
  return (c >= 48 && c <= 57) || c === 46 || c === 45 || c === 43 ||
    c === 101 || c === 69;
}

/** Whether one number lexeme reads differently in Python than in `JSON.parse`. */
function pythonReadsDifferently(lex: string): boolean {
  if (lex.includes(".") || lex.includes("e") || lex.includes("E")) {
    const v = Number(lex);
    return !Number.isFinite(v) ||
      (Number.isInteger(v) && v < 1e21 && v > -1e21);
  }
  return lex.length >= 16 && !Number.isSafeInteger(Number(lex));
}

/**
 * Whether `JSON.parse` cannot be trusted with `text`, so that
 * {@linkcode parsePythonJson} must use its own reader: a number lexeme
 * outside strings reads differently in Python (an integral float such as
 * `1.0`, an integer beyond 2^53), or an object key holds an escape. The
 * second guards against a V8 defect in Deno 2.9.6 (V8 15.0): after
 * `JSON.parse('{"a":0,"\\\\":1}')`, `JSON.parse('{"a":1,"\\t":2}')`
 * returns the key `"\\"` instead of a tab (a stale key in its fast path
 * for objects of a known shape); keys without escapes are not affected.
 * Jumps from quote to quote with `indexOf`, so it costs far less than
 * parsing. On invalid JSON it may answer either way; the parse then fails.
 */
export function needsOwnReader(text: string): boolean {
  return keyTokens(text) === -1;
}

/**
 * The scan behind {@linkcode needsOwnReader}, counting object keys (strings
 * followed by a colon) on the way: -1 when `JSON.parse` cannot be trusted
 * with the text, otherwise how many key tokens it holds.
 */
function keyTokens(text: string): number {
  const n = text.length;
  let i = 0;
  let keys = 0;
  let backslash = -2; // the first backslash at or after the current string, -1 when none is left
  while (i < n) {
    const q = text.indexOf('"', i);
    const end = q === -1 ? n : q;
    for (let j = i; j < end; j++) {
      const c = text.charCodeAt(j);
      if ((c >= 48 && c <= 57) || c === 45) {
        let k = j + 1;
        while (k < end && isNumberChar(text.charCodeAt(k))) k++;
        if (k - j > 1 || c === 45) {
          if (pythonReadsDifferently(text.slice(j, k))) return -1;
        }
        j = k - 1;
      }
    }
    if (q === -1) return keys;
    let p = q + 1;
    let r: number;
    let escaped = false;
    while (true) {
      r = text.indexOf('"', p);
      if (r === -1) return keys;
      let b = r - 1;
      while (text.charCodeAt(b) === 92) b--;
      if (b < r - 1) escaped = true;
      if ((r - 1 - b) % 2 === 0) break;
      p = r + 1;
    }
    if (!escaped && backslash !== -1) {
      if (backslash < q) backslash = text.indexOf("\\", q);
      escaped = backslash !== -1 && backslash < r;
    }
    i = r + 1;
    let k = i;
    while (k < n) {
      const c = text.charCodeAt(k);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      k++;
    }
    if (text.charCodeAt(k) === 0x3a) {
      if (escaped) return -1;
      keys++;
      i = k + 1;
    }
  }
  return keys;
}

/**
 * Own keys of every object in a parsed value, or -1 past `limit` keys or
 * nesting deeper than the reader allows. Iterative (no deep recursion).
 */
function ownKeyCount(v: unknown, limit: number): number {
  let count = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (typeof x !== "object" || x === null) continue;
    if (depth > 10_000) return -1;
    if (Array.isArray(x)) {
      for (const e of x) {
        if (typeof e === "object" && e !== null) stack.push([e, depth + 1]);
      }
      continue;
    }
    const keys = Object.keys(x);
    count += keys.length;
    if (count > limit) return -1;
    for (const k of keys) {
      const e = (x as Record<string, unknown>)[k];
      if (typeof e === "object" && e !== null) stack.push([e, depth + 1]);
    }
  }
  return count;
}

/** Python's `json` view of a number token: a float lexeme with an integral value as {@linkcode PyFloat}, an integer beyond 2^53 exact. */
function pythonNumber(lex: string): unknown {
  const v = Number(lex);
  if (/[.eE]/.test(lex)) {
    return !Number.isFinite(v) || (Number.isInteger(v) && v < 1e21 && v > -1e21)
      ? new PyFloat(v)
      : v;
  }
  return Number.isSafeInteger(v) ? v : BigInt(lex);
}

/**
 * Parse JSON text the way Python's `json.loads` sees it, so that
 * {@linkcode canonicalJson} of the result equals Python's canonical form:
 * a float lexeme with an integral value (`1.0`, `2e3`) becomes a
 * {@linkcode PyFloat}; an integer lexeme beyond 2^53 becomes an exact
 * `bigint`; the last of duplicated keys wins, as in Python. Text that needs
 * neither (see {@linkcode needsOwnReader}) is parsed by `JSON.parse`; other
 * text by verity's own reader. Throws `SyntaxError` on invalid JSON.
 *
 * @example
 * ```ts
 * canonicalJson(parsePythonJson('{"x": 1.0, "y": 1}')); // '{"x":1.0,"y":1}'
 * ```
 */
export function parsePythonJson(text: string): unknown {
  if (!needsOwnReader(text)) return JSON.parse(text);
  return readJson(text, { number: pythonNumber, maxDepth: 10_000 }).value;
}

/** Options for {@linkcode parseEvidenceJson}. */
export interface EvidenceJsonOptions {
  /**
   * `"python"`: numbers as Python's `json` reads them (as
   * {@linkcode parsePythonJson}); `"javascript"`: as `Number()` reads them.
   * @default {"javascript"}
   */
  numbers?: "python" | "javascript";
  /**
   * Refuse a duplicated object key with a {@linkcode DuplicateKeyError}
   * naming the key and where it is; `false` keeps the last, as Python does.
   * @default {true}
   */
  strict?: boolean;
}

/**
 * Read an evidence file strictly, never through V8's `JSON.parse` (see
 * {@linkcode needsOwnReader} for the key defect it has in Deno 2.9.6): a
 * duplicated key anywhere is refused, since two readers could then see
 * two different documents. Throws `SyntaxError` on invalid JSON and
 * {@linkcode DuplicateKeyError} on a duplicated key.
 *
 * @example
 * ```ts
 * parseEvidenceJson('{"a":1}'); // { a: 1 }
 * try { parseEvidenceJson('{"a":1,"a":2}'); } catch (e) { e instanceof DuplicateKeyError; } // true
 * ```
 */
export function parseEvidenceJson(
  text: string,
  options: EvidenceJsonOptions = {},
): unknown {
  // Fast path, exactly as strict: when no number reads differently and no
  // key holds an escape (needsOwnReader), JSON.parse gives the same value;
  // it keeps the last of duplicated keys silently, so the keys it kept are
  // counted against the key tokens in the text, and any difference (a
  // duplicate), invalid JSON or very deep nesting goes to verity's own
  // reader, which names the problem.
  if (options.strict ?? true) {
    const tokens = keyTokens(text);
    if (tokens >= 0) {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        v = undefined;
      }
      if (v !== undefined && ownKeyCount(v, tokens) === tokens) return v;
    }
  }
  return readJson(text, {
    strict: options.strict ?? true,
    number: options.numbers === "python" ? pythonNumber : Number,
    maxDepth: 10_000,
  }).value;
}
