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
 * | float4, float8              | number, or `{"$real": "NaN"}` / `"Infinity"`   |
 * | numeric                     | `{"$numeric": "12.50"}` (exact, scale kept)    |
 * | bool                        | boolean                                        |
 * | bytea                       | `{"$bytes": base64}`                           |
 * | json, jsonb                 | the parsed JSON value (object keys as stored)  |
 * | arrays of any of these      | nested arrays of element values, NULL as null  |
 * | anything else               | the text form (timestamptz in UTC, uuid, …)    |
 *
 * @module
 */
import { bytesToBase64 } from "../lib/state/keys.ts";
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
  if (text === "NaN" || text === "Infinity" || text === "-Infinity") {
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
  return { $bytes: bytesToBase64(out) };
}

function toJson(text: string): unknown {
  // V8's JSON.parse (Deno 2.9.6) can return a stale object key after a key
  // with an escape (FACTS.md); text without a backslash has no escape.
  return text.includes("\\") ? readJson(text).value : JSON.parse(text);
}

const SCALARS: Record<string, PgConverter> = {
  int2: Number,
  int4: Number,
  oid: Number,
  int8: toInt,
  float4: toFloat,
  float8: toFloat,
  numeric: (t) => ({ $numeric: t }),
  bool: (t) => t === "t",
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
