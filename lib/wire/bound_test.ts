import assert from "node:assert/strict";
import { boundDepth, boundSize, depthMarker, valueDepth } from "./bound.ts";

function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

Deno.test("valueDepth counts levels without recursion, even at 1,000,000 levels", () => {
  assert.equal(valueDepth(1), 0);
  assert.equal(valueDepth([]), 1);
  assert.equal(valueDepth({ a: [{}] }), 3);
  assert.equal(valueDepth(nested(1_000_000)), 1_000_000);
  // With a limit it stops early.
  assert.equal(valueDepth(nested(1_000_000), 10), 11);
});

Deno.test("boundDepth keeps a shallow value as is and replaces deeper levels by a marker", () => {
  const shallow = { a: [1, 2, { b: "c" }] };
  assert.equal(boundDepth(shallow, 3), shallow);
  const b = boundDepth(nested(100_000), 3);
  assert.deepEqual(b, { a: { a: { a: depthMarker(3) } } });
  // The bounded value can be stringified, indented too.
  assert.ok(JSON.stringify(b, null, 2).includes("nested deeper than 3"));
});

Deno.test("boundDepth keeps __proto__ as an own key, as JSON.parse does", () => {
  const v = JSON.parse('{"__proto__":{"x":{"y":1}}}');
  const b = boundDepth(v, 2) as Record<string, unknown>;
  assert.ok(Object.hasOwn(b, "__proto__"));
  assert.equal(Object.getPrototypeOf(b), Object.prototype);
});

Deno.test("boundSize replaces a long value by its head and length", () => {
  assert.deepEqual(boundSize({ name: "x" }, 100), { name: "x" });
  const big = boundSize({ name: "x".repeat(5000) }, 100) as Record<
    string,
    unknown
  >;
  assert.equal(big.truncated, true);
  assert.equal(big.chars, 5011); // {"name":"x…x"}
  assert.equal((big.head as string).length, 100);
});
