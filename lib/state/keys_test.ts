import assert from "node:assert/strict";
import {
  canonicalStateJson,
  compareKeys,
  compareText,
  makeKey,
  sortRecords,
  valuesEqual,
} from "./keys.ts";

Deno.test("canonicalStateJson: sorted keys, no spaces, undefined members dropped", () => {
  assert.equal(
    canonicalStateJson({ b: [1, { d: 1, c: 2 }], a: "é", u: undefined }),
    '{"a":"é","b":[1,{"c":2,"d":1}]}',
  );
  assert.equal(canonicalStateJson([undefined, Infinity]), "[null,null]");
});

Deno.test("compareKeys: SQLite's order — null, numbers by value, text by code point, bytes, arrays", () => {
  const keys = [
    makeKey(["b"]),
    makeKey([10]),
    makeKey([{ $bytes: "AA==" }]),
    makeKey([null]),
    makeKey([2.5]),
    makeKey(["a", 2]),
    makeKey(["a"]),
    makeKey([{ $int: "9007199254740993" }]),
    makeKey(["😀"]),
    makeKey(["\uFF5E"]),
  ];
  keys.sort(compareKeys);
  assert.deepEqual(keys, [
    "[null]",
    "[2.5]",
    "[10]",
    '[{"$int":"9007199254740993"}]',
    '["a"]',
    '["a",2]',
    '["b"]',
    '["\uFF5E"]',
    '["😀"]',
    '[{"$bytes":"AA=="}]',
  ]);
  assert.ok(
    compareText("\uFF5E", "😀") < 0,
    "U+FF5E sorts before U+1F600 (UTF-8 order)",
  );
});

Deno.test("sortRecords: duplicates keep distinct keys; valuesEqual ignores key order only", () => {
  const out = sortRecords([
    { key: '["x"]', value: { n: 2 } },
    { key: '["x"]', value: { n: 1 } },
    { key: '["a"]', value: {} },
  ]);
  assert.deepEqual(out.map((r) => r.key), [
    '["a"]',
    '["x"]',
    '["x",{"dup":2}]',
  ]);
  assert.deepEqual(
    out[1]?.value,
    { n: 1 },
    "equal identities ordered by value, so the order is stable",
  );
  assert.ok(valuesEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }));
  assert.ok(!valuesEqual({ a: [1, 2] }, { a: [2, 1] }));
});
