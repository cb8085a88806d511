/**
 * PostgreSQL values, typed faithfully from their text form. Pure.
 *
 * verity reads every column in PostgreSQL's text output format under fixed
 * session settings (`TimeZone=UTC`, `DateStyle=ISO, YMD`,
 * `IntervalStyle=iso_8601`, `bytea_output=hex`, `extra_float_digits=1`), so
 * one stored value always has one text form, and turns it into a JSON value
 * by the column's base type (domains resolved to their base type):
 *
 * | type                        | value                                          |
 * | --------------------------- | ---------------------------------------------- |
 * | int2, int4, oid             | number                                         |
 * | int8                        | number, or `{"$int": "…"}` beyond 2^53         |
 * | float4, float8              | number; NaN, ±Infinity, -0 as `{"$real": "…"}` |
 * | numeric                     | `{"$numeric": "12.50"}` (exact, scale kept)    |
 * | bool                        | boolean                                        |
 * | bytea                       | `{"$bytes": base64}`                           |
 * | json, jsonb                 | the JSON value, numbers exact (`jsonNumber`)   |
 * | arrays of any of these      | nested arrays of element values, NULL as null  |
 * | anything else               | the text form (timestamptz in UTC, uuid, …)    |
 *
 * @module
 */
import { readJson } from "../lib/contracts/json_reader.ts";

/** Turns one column's text value into its typed JSON value. */
export type PgConverter = (text: string) => unknown;

/** The session settings under which text forms are canonical. */
export const PG_SESSION_SETTINGS: Readonly<Record<string, string>> = {
  TimeZone: "UTC",
  DateStyle: "ISO, YMD",
  IntervalStyle: "iso_8601",
  bytea_output: "hex",
  extra_float_digits: "1",
};

function toInt(text: string): unknown {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : { $int: BigInt(text).toString() };
}

function toFloat(text: string): unknown {
  // -0 is a value of its own (it prints as -0); as a JSON number it would
  // print as 0.
  if (
    text === "NaN" || text === "Infinity" || text === "-Infinity" ||
    text === "-0"
  ) {
    return { $real: text };
  }
  return Number(text);
}

function toBytes(text: string): unknown {
  if (!text.startsWith("\\x")) {
    throw new SyntaxError(
      `bytea value is not in hex form: ${text.slice(0, 20)}`,
    );
  }
  const hex = text.slice(2);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  }
  return { $bytes: out.toBase64() };
}

/**
 * A decimal number's value as a canonical string: sign, significant digits
 * and exponent (`0.d1d2… × 10^e`), so `1.50`, `1.5` and `15e-1` agree.
 */
function decimalValue(text: string): string {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return `?${text}`;
  const whole = m[2] ?? "";
  const digits = whole + (m[3] ?? "");
  const lead = digits.search(/[1-9]/);
  if (lead < 0) return "0";
  const sig = digits.slice(lead).replace(/0+$/, "");
  const exp = whole.length - lead + Number(m[4] ?? "0");
  return `${m[1]}${sig}e${exp}`;
}

/**
 * A JSON number token, exactly: a number when the number prints back as the
 * same decimal value (`1.0` and `0.1` do), else the token itself, as
 * `{"$int": "…"}` for an integer and `{"$numeric": "…"}` otherwise
 * (`12345678901234567891`, `0.12345678901234567891`, `1e400`).
 */
export function jsonNumber(token: string): unknown {
  const n = Number(token);
  const back = String(n);
  if (back === token || decimalValue(back) === decimalValue(token)) return n;
  return /^-?\d+$/.test(token) ? { $int: token } : { $numeric: token };
}

/** Number tokens that might not survive `JSON.parse` (16+ digits, an exponent). */
const MAYBE_INEXACT = /[0-9.]{16}|[0-9][eE]/;

function toJson(text: string): unknown {
  // V8's JSON.parse (Deno 2.9.6) can return a stale object key after a key
  // with an escape (FACTS.md); text without a backslash has no escape. A
  // number with at most 15 significant digits and no exponent is exact as
  // a double, so JSON.parse reads text without longer digit runs exactly.
  return text.includes("\\") || MAYBE_INEXACT.test(text)
    ? readJson(text, { number: jsonNumber }).value
    : JSON.parse(text);
}

const SCALARS: Record<string, PgConverter> = {
  int2: Number,
  int4: Number,
  oid: Number,
  int8: toInt,
  float4: toFloat,
  float8: toFloat,
  numeric: (t) => ({ $numeric: t }),
  // `bool::text` is `true`/`false`; inside an array the output is `t`/`f`.
  bool: (t) => t === "true" || t === "t",
  bytea: toBytes,
  json: toJson,
  jsonb: toJson,
};

/**
 * The converter for a base type name as `pg_type.typname` spells it; array
 * types are named by their element type with a leading underscore
 * (`_int4`), and `box` arrays use `;` between elements.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(pgConverter("_int4")("{1,NULL,3}"), [1, null, 3]);
 * assert.deepEqual(pgConverter("numeric")("1.50"), { $numeric: "1.50" });
 * ```
 */
export function pgConverter(typname: string): PgConverter {
  if (typname.startsWith("_") && typname.length > 1) {
    const elem = typname.slice(1);
    const each = pgConverter(elem);
    const delim = elem === "box" ? ";" : ",";
    return (t) => parsePgArray(t, each, delim);
  }
  return SCALARS[typname] ?? ((t) => t);
}

/**
 * Parse an array's text form (`{1,"a b",NULL,{2,3}}`) into nested arrays,
 * each element converted by `each`; an unquoted `NULL` is null. An array
 * with explicit bounds (`[0:1]={…}`) keeps its text form: its lower bound is
 * part of the value and nested arrays cannot carry it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parsePgArray('{"a,b",NULL,"NULL"}', (t) => t), ["a,b", null, "NULL"]);
 * ```
 */
export function parsePgArray(
  text: string,
  each: PgConverter,
  delim = ",",
): unknown {
  if (text.startsWith("[")) return text;
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`array literal: ${what} at offset ${i}`);
  };
  const parse = (): unknown[] => {
    if (text[i] !== "{") fail("expected {");
    i++;
    const out: unknown[] = [];
    if (text[i] === "}") {
      i++;
      return out;
    }
    while (i < text.length) {
      const c = text[i];
      if (c === "{") out.push(parse());
      else if (c === '"') {
        i++;
        let s = "";
        while (i < text.length && text[i] !== '"') {
          if (text[i] === "\\") i++;
          s += text[i] ?? "";
          i++;
        }
        if (text[i] !== '"') fail("unterminated quoted element");
        i++;
        out.push(each(s));
      } else {
        let j = i;
        while (j < text.length && text[j] !== delim && text[j] !== "}") j++;
        const raw = text.slice(i, j);
        i = j;
        out.push(raw === "NULL" ? null : each(raw));
      }
      if (text[i] === delim) i++;
      else if (text[i] === "}") {
        i++;
        return out;
      } else fail("expected a delimiter or }");
    }
    return fail("unterminated array");
  };
  const value = parse();
  if (i !== text.length) fail("trailing text");
  return value;
}

/** Quote an SQL identifier (`"a""b"`). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Quote an SQL string literal (`'it''s'`). */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
