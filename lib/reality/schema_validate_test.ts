import assert from "node:assert/strict";
import { validateSchema } from "./schema_validate.ts";

Deno.test("schemas compiled one after another on a shared instance do not see each other", () => {
  const a = {
    type: "object",
    $defs: { v: { type: "number" } },
    properties: { x: { $ref: "#/$defs/v" } },
  };
  const b = {
    type: "object",
    $defs: { v: { type: "string" } },
    properties: { x: { $ref: "#/$defs/v" } },
  };
  assert.equal(validateSchema(a, { x: 1 }).status, "valid");
  assert.equal(validateSchema(b, { x: 1 }).status, "invalid");
  assert.equal(validateSchema(b, { x: "s" }).status, "valid");
  assert.equal(validateSchema(a, { x: "s" }).status, "invalid");
});

Deno.test("two schemas sharing an $id each validate by their own content", () => {
  const id = "https://example.test/out.json";
  const num = { $id: id, type: "number" };
  const str = { $id: id, type: "string" };
  assert.equal(validateSchema(num, 1).status, "valid");
  assert.equal(validateSchema(str, 1).status, "invalid");
  assert.equal(validateSchema(str, "s").status, "valid");
});

Deno.test("each dialect validates with its own rules on its shared instance", () => {
  const d7 = {
    $schema: "http://json-schema.org/draft-07/schema#",
    items: [{ type: "number" }],
    additionalItems: false,
  };
  assert.equal(validateSchema(d7, [1]).status, "valid");
  assert.equal(validateSchema(d7, [1, 2]).status, "invalid");
  const d2020 = { prefixItems: [{ type: "number" }], items: false };
  assert.equal(validateSchema(d2020, [1]).status, "valid");
  assert.equal(validateSchema(d2020, [1, 2]).status, "invalid");
  const d2019 = {
    $schema: "https://json-schema.org/draft/2019-09/schema",
    type: "object",
    dependentRequired: { a: ["b"] },
  };
  assert.equal(validateSchema(d2019, { a: 1 }).status, "invalid");
  assert.equal(validateSchema(d2019, { a: 1, b: 2 }).status, "valid");
});

Deno.test("a schema that does not compile is unusable and leaves the next one working", () => {
  const bad = { type: "object", properties: { x: { $ref: "#/$defs/none" } } };
  assert.equal(validateSchema(bad, {}).status, "unusable");
  assert.equal(validateSchema({ type: "number" }, 3).status, "valid");
});
