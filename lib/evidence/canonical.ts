/**
 * Canonical JSON and SHA-256, byte-compatible with Python's
 * `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
 * encoded as UTF-8 (the form mcp-evidence-validator hashes), and the strict
 * evidence reader. Pure.
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
 * import assert from "node:assert/strict";
 * assert.equal(pythonFloatRepr(1), "1.0");
 * assert.equal(pythonFloatRepr(1e-5), "1e-05");
 * assert.equal(pythonFloatRepr(1e16), "1e+16");
 * ```
 */
export function pythonFloatRepr(n: number): string {
  if (!Number.isFinite(n)) {
    throw new TypeError(`canonical JSON refuses ${n}: not a finite number`);
  }
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  // toExponential() gives the shortest round-trip digits, as Python's repr.
  const [mantissa, e] = n.toExponential().split("e") as [string, string];
  const sign = n < 0 ? "-" : "";
  const digits = mantissa.replace(/^-/, "").replace(".", "");
  const decpt = Number(e) + 1;
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

/** Order by Unicode code point, as Python sorts keys (UTF-16 order differs only around surrogates). */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < x.length && i < y.length; i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!;
  }
  return x.length - y.length;
}

function refuse(v: unknown, path: readonly (string | number)[]): never {
  const at = "/" + path.join("/");
  if (typeof v === "number" || v instanceof PyFloat) {
    const n = typeof v === "number" ? v : v.value;
    throw new TypeError(
      `canonical JSON refuses ${n} at ${at}: not a finite number`,
    );
  }
  if (v === undefined) {
    throw new TypeError(`canonical JSON refuses undefined at ${at}`);
  }
  if (typeof v === "object" && v !== null) {
    const name = (v as { constructor?: { name?: string } }).constructor?.name ??
      "object";
    throw new TypeError(
      `canonical JSON refuses a ${name} at ${at}: only plain objects and arrays`,
    );
  }
  throw new TypeError(`canonical JSON refuses a ${typeof v} at ${at}`);
}

/**
 * `v` as canonical JSON (`indent` null: keys sorted, by code point when
 * `byCodePoint`) or indented by `indent` plus two spaces a level, keys in
 * their own order. `path` is a stack of keys pushed and popped on the way
 * down, for the pointer of a refused value.
 */
function write(
  v: unknown,
  path: (string | number)[],
  indent: string | null,
  codePoints = false,
): string {
  switch (typeof v) {
    case "string":
      return stringText(v);
    case "number":
      if (!Number.isFinite(v)) refuse(v, path);
      return Number.isInteger(v) && Math.abs(v) < 1e21
        ? String(v)
        : pythonFloatRepr(v);
    case "boolean":
      return String(v);
    case "bigint":
      return v.toString();
    case "object": {
      if (v === null) return "null";
      if (v instanceof PyFloat) {
        if (!Number.isFinite(v.value)) refuse(v, path);
        return pythonFloatRepr(v.value);
      }
      const inner = indent === null ? null : indent + "  ";
      const sep = inner === null ? "," : `,\n${inner}`;
      let out = "";
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          path.push(i);
          if (v[i] === undefined) refuse(undefined, path);
          out += (i > 0 ? sep : "") + write(v[i], path, inner, codePoints);
          path.pop();
        }
        return wrap("[", out, "]", indent);
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) refuse(v, path);
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o);
      if (indent === null) keys.sort(codePoints ? byCodePoint : undefined);
      for (const k of keys) {
        if (o[k] === undefined) continue;
        path.push(k);
        out += (out === "" ? "" : sep) + stringText(k) +
          (inner === null ? ":" : ": ") + write(o[k], path, inner, codePoints);
        path.pop();
      }
      return wrap("{", out, "}", indent);
    }
    default:
      return refuse(v, path);
  }
}

function wrap(
  open: string,
  inside: string,
  close: string,
  indent: string | null,
): string {
  if (inside === "" || indent === null) return open + inside + close;
  return `${open}\n${indent}  ${inside}\n${indent}${close}`;
}

/**
 * Serialize a value to canonical JSON (see the module doc for the rules).
 * Throws `TypeError` naming the JSON pointer of a value it refuses.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(canonicalJson({ b: [1, 2.5], a: "é" }), '{"a":"é","b":[1,2.5]}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) {
    throw new TypeError("canonical JSON refuses undefined");
  }
  const text = write(value, [], null);
  // UTF-16 order is code point order unless a surrogate is involved.
  return /[\uD800-\uDFFF]/.test(text) ? write(value, [], null, true) : text;
}

/**
 * Indented JSON for files people read (manifests, reports): keys in their
 * own order, but numbers, strings and refusals exactly as in
 * {@linkcode canonicalJson}, so reading the text back with
 * {@linkcode parsePythonJson} gives the same canonical form (a `1.0` stays
 * `1.0`).
 */
export function prettyJson(value: unknown): string {
  if (value === undefined) {
    throw new TypeError("canonical JSON refuses undefined");
  }
  return write(value, [], "");
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
      // A string value inline: the commonest, and a call saved.
      i = text.charCodeAt(i) === 0x22
        ? text.indexOf('"', i + 1) + 1
        : canonicalEnd(text, i, depth - 1);
      if (i <= 0) return -1;
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
 * import assert from "node:assert/strict";
 * assert.equal(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** True when `s` is `sha256:` followed by 64 lowercase hex digits. */
export function isDigest(s: unknown): s is string {
  return typeof s === "string" && /^sha256:[0-9a-f]{64}$/.test(s);
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
 * import assert from "node:assert/strict";
 * assert.equal(canonicalJson(parsePythonJson('{"x": 1.0, "y": 1}')), '{"x":1.0,"y":1}');
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
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseEvidenceJson('{"a":1}'), { a: 1 });
 * assert.throws(() => parseEvidenceJson('{"a":1,"a":2}'), DuplicateKeyError);
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
  return readJson(text, {
    strict: true,
    number: options.numbers === "python" ? pythonNumber : Number,
    maxDepth: 10_000,
  }).value;
}
