import assert from "node:assert/strict";
import { jsonNumber, parsePgArray, pgConverter } from "./pg_values.ts";

Deno.test("pg values: scalars keep their type and exactness", () => {
  assert.equal(pgConverter("int4")("42"), 42);
  assert.equal(pgConverter("int8")("9007199254740991"), 9007199254740991);
  assert.deepEqual(pgConverter("int8")("9223372036854775807"), {
    $int: "9223372036854775807",
  });
  assert.deepEqual(pgConverter("numeric")("1.50"), { $numeric: "1.50" });
  assert.deepEqual(pgConverter("float8")("NaN"), { $real: "NaN" });
  assert.deepEqual(pgConverter("float8")("-Infinity"), { $real: "-Infinity" });
  assert.equal(pgConverter("float4")("0.1"), 0.1);
  assert.equal(pgConverter("bool")("t"), true);
  assert.equal(pgConverter("bool")("f"), false);
  assert.deepEqual(pgConverter("bytea")("\\x00ff10"), { $bytes: "AP8Q" });
  assert.deepEqual(pgConverter("jsonb")('{"b": [1, null], "a": "x"}'), {
    a: "x",
    b: [1, null],
  });
  assert.equal(
    pgConverter("timestamptz")("2026-01-01 09:00:00+00"),
    "2026-01-01 09:00:00+00",
  );
  assert.equal(pgConverter("uuid")("a0ee…"), "a0ee…");
});

Deno.test("pg values: arrays nest, quote, escape and keep NULL apart from 'NULL'", () => {
  assert.deepEqual(pgConverter("_int4")("{1,NULL,3}"), [1, null, 3]);
  assert.deepEqual(pgConverter("_int4")("{{1,2},{3,4}}"), [[1, 2], [3, 4]]);
  assert.deepEqual(
    pgConverter("_text")('{"a,b","say \\"hi\\"",NULL,"NULL","back\\\\slash"}'),
    ["a,b", 'say "hi"', null, "NULL", "back\\slash"],
  );
  assert.deepEqual(pgConverter("_text")("{}"), []);
  assert.deepEqual(pgConverter("_numeric")("{1.0,2.50}"), [
    { $numeric: "1.0" },
    { $numeric: "2.50" },
  ]);
  assert.deepEqual(pgConverter("_bytea")('{"\\\\x01"}'), [{ $bytes: "AQ==" }]);
  // Explicit bounds are part of the value: the text form is kept.
  assert.equal(pgConverter("_int4")("[0:1]={1,2}"), "[0:1]={1,2}");
});

Deno.test("pg values: a malformed array literal is a SyntaxError", () => {
  assert.throws(() => parsePgArray("{1,2", Number), SyntaxError);
  assert.throws(() => parsePgArray('{"a}', String), SyntaxError);
  assert.throws(() => parsePgArray("{1}x", Number), SyntaxError);
});

Deno.test("pg values: json with escaped keys is read by the strict reader, keys exact", () => {
  assert.deepEqual(pgConverter("jsonb")('{"a\\tb": 1, "c": "\\u00e9"}'), {
    "a\tb": 1,
    c: "é",
  });
  assert.deepEqual(pgConverter("json")('{"a": 0, "\\\\": 1}'), {
    a: 0,
    "\\": 1,
  });
});

Deno.test("pg values: json numbers are exact: a number when it prints back as the same value, else the digits", () => {
  const j = pgConverter("jsonb");
  // 17 significant digits: a double cannot tell these apart, verity can.
  const a = j('{"n": 1234567890123456789}');
  const b = j('{"n": 1234567890123456788}');
  assert.deepEqual(a, { n: { $int: "1234567890123456789" } });
  assert.notDeepEqual(a, b);
  // Both read as the same double; the second is that double's shortest form.
  assert.equal(Number("0.12345678901234566"), Number("0.12345678901234567"));
  assert.deepEqual(j("[0.12345678901234566, 0.12345678901234567]"), [
    0.12345678901234566,
    { $numeric: "0.12345678901234567" },
  ]);
  // Numbers a double holds exactly stay numbers, whatever their spelling.
  assert.deepEqual(
    j('{"a": 1.0, "b": 0.1, "c": 1.50, "d": 9007199254740992}'),
    {
      a: 1,
      b: 0.1,
      c: 1.5,
      d: 9007199254740992,
    },
  );
  assert.deepEqual(j("[1e2, 2.5E-3, 1e400, 12345678.123456789]"), [
    100,
    0.0025,
    { $numeric: "1e400" },
    { $numeric: "12345678.123456789" },
  ]);
  // jsonb prints 1e400 in full: 401 digits, one exact integer.
  assert.deepEqual(j(`[1${"0".repeat(400)}]`), [{
    $int: `1${"0".repeat(400)}`,
  }]);
  // The same inside escaped text and arrays of jsonb.
  assert.deepEqual(j('{"k\\n": 9223372036854775807}'), {
    "k\n": { $int: "9223372036854775807" },
  });
  assert.deepEqual(pgConverter("_jsonb")('{"12345678901234567891","2"}'), [
    { $int: "12345678901234567891" },
    2,
  ]);
  assert.equal(jsonNumber("-0"), -0);
  assert.equal(jsonNumber("123456789012345"), 123456789012345);
});

Deno.test("pg values: floats keep -0 apart from 0; bool reads both text forms", () => {
  assert.deepEqual(pgConverter("float8")("-0"), { $real: "-0" });
  assert.equal(pgConverter("float8")("0"), 0);
  assert.deepEqual(pgConverter("_float4")("{-0,0,NaN}"), [
    { $real: "-0" },
    0,
    { $real: "NaN" },
  ]);
  // `bool::text` (a column) prints true/false, an array's elements t/f.
  assert.equal(pgConverter("bool")("true"), true);
  assert.equal(pgConverter("bool")("false"), false);
  assert.deepEqual(pgConverter("_bool")("{t,f,NULL}"), [true, false, null]);
});
