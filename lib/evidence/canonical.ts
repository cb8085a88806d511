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
 * - Refused with `TypeError`: NaN, ±Infinity, `undefined` in an array,
 *   lone surrogates (not encodable as UTF-8), functions, symbols, and any
 *   object that is not a plain object or array (Date, Map, class instances).
 *   An object property whose value is `undefined` is omitted, as
 *   `JSON.stringify` does.
 *
 * @module
 */
import { createHash } from "node:crypto";

/**
 * A JSON number that was written as a float (it had a `.`, `e` or `E`) and
 * whose value is integral, such as `1.0`. JavaScript cannot tell `1.0` from
 * `1`; Python prints them differently, so values read from a Python-written
 * ledger keep the distinction in this wrapper.
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

const SURROGATE = /[\uD800-\uDFFF]/;

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

function byCodePoint(a: string, b: string): number {
  // Compare by code point: walk code points until they differ.
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

function sortedKeys(o: Record<string, unknown>): string[] {
  const keys = Object.keys(o);
  if (keys.length < 2) return keys;
  keys.sort();
  // UTF-16 order equals code point order unless a key holds a surrogate.
  for (const k of keys) {
    if (SURROGATE.test(k)) return keys.sort(byCodePoint);
  }
  return keys;
}

function write(v: unknown, path: string): string {
  switch (typeof v) {
    case "string":
      return stringText(v);
    case "number":
      if (!Number.isFinite(v)) {
        throw new TypeError(
          `canonical JSON refuses ${v} at ${path || "/"}: not a finite number`,
        );
      }
      return numberText(v);
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) {
        let out = "[";
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) {
            throw new TypeError(
              `canonical JSON refuses undefined at ${path}/${i}`,
            );
          }
          if (i > 0) out += ",";
          out += write(x, `${path}/${i}`);
        }
        return out + "]";
      }
      if (v instanceof PyFloat) {
        try {
          return pythonFloatRepr(v.value);
        } catch {
          throw new TypeError(
            `canonical JSON refuses ${v.value} at ${
              path || "/"
            }: not a finite number`,
          );
        }
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        const name =
          (v as { constructor?: { name?: string } }).constructor?.name ??
            "object";
        throw new TypeError(
          `canonical JSON refuses a ${name} at ${
            path || "/"
          }: only plain objects and arrays`,
        );
      }
      const o = v as Record<string, unknown>;
      let out = "{";
      let first = true;
      for (const k of sortedKeys(o)) {
        const x = o[k];
        if (x === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += stringText(k) + ":" + write(x, `${path}/${k}`);
      }
      return out + "}";
    }
    default:
      throw new TypeError(
        `canonical JSON refuses a ${typeof v} at ${path || "/"}`,
      );
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
  return write(value, "");
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
  path: string,
): string {
  if (v === null || typeof v !== "object" || v instanceof PyFloat) {
    return write(v, path);
  }
  const inner = indent + step;
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    const parts = v.map((x, i) => {
      if (x === undefined) {
        throw new TypeError(`canonical JSON refuses undefined at ${path}/${i}`);
      }
      return inner + pretty(x, inner, step, `${path}/${i}`);
    });
    return `[\n${parts.join(",\n")}\n${indent}]`;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return write(v, path); // throws
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o)) {
    if (o[k] === undefined) continue;
    parts.push(
      `${inner}${stringText(k)}: ${pretty(o[k], inner, step, `${path}/${k}`)}`,
    );
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
  return pretty(value, "", " ".repeat(indent), "");
}

const FLOAT_LEXEME = /[.eE]/;

/**
 * Parse JSON text the way Python's `json.loads` sees it, so that
 * {@linkcode canonicalJson} of the result equals Python's canonical form:
 * a float lexeme with an integral value (`1.0`, `2e3`) becomes a
 * {@linkcode PyFloat}; an integer lexeme beyond 2^53 becomes an exact
 * `bigint`. Everything else is what `JSON.parse` returns (the last of
 * duplicated keys wins, as in Python). Throws `SyntaxError` on invalid JSON.
 *
 * @example
 * ```ts
 * canonicalJson(parsePythonJson('{"x": 1.0, "y": 1}')); // '{"x":1.0,"y":1}'
 * ```
 */
export function parsePythonJson(text: string): unknown {
  return JSON.parse(
    text,
    function (_key, value, context?: { source?: string }) {
      if (typeof value !== "number") return value;
      const src = context?.source;
      if (src === undefined) return value;
      if (FLOAT_LEXEME.test(src)) {
        if (
          !Number.isFinite(value) ||
          (Number.isInteger(value) && value < 1e21 && value > -1e21)
        ) {
          return new PyFloat(value);
        }
        return value;
      }
      if (Number.isSafeInteger(value)) return value;
      return BigInt(src);
    },
  );
}
