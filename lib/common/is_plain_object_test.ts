import assert from "node:assert/strict";
import { isPlainObject } from "./is_plain_object.ts";

Deno.test("isPlainObject: objects yes; arrays, null and scalars no", () => {
  assert.equal(isPlainObject({}), true);
  assert.equal(isPlainObject(Object.create(null)), true);
  assert.equal(isPlainObject(JSON.parse('{"a":[1]}')), true);
  for (const v of [null, undefined, [], [1], "x", 1, true]) {
    assert.equal(isPlainObject(v), false, String(v));
  }
});
