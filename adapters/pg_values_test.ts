import assert from "node:assert/strict";
import { parsePgArray, pgConverter } from "./pg_values.ts";

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
