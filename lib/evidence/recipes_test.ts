import assert from "node:assert/strict";
import { contractHash, contractPayload, RECIPE_FIELDS } from "./recipes.ts";

// The fictional example declared by mcp-evidence-validator, and the recipe-1
// hash it binds (committed in that project's examples/fictional-server-declared.json).
const FORECAST = {
  name: "get_forecast",
  description: "Return forecast for a city",
  input_schema: {
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer", minimum: 1, maximum: 7 },
    },
    required: ["city"],
  },
  permissions: ["read:weather"],
};
const FORECAST_R1 =
  "sha256:9e205a4822a9f51eaae4570faa62a16e7535558e5bc690fac68b1aebb89c0dbd";

Deno.test("recipe 1 hashes exactly as mcp-evidence-validator does", () => {
  assert.equal(contractHash(FORECAST, "1"), FORECAST_R1);
});

Deno.test("the MCP spelling (inputSchema) and the seed's (input_schema) hash alike", () => {
  const { input_schema, ...rest } = FORECAST;
  assert.equal(
    contractHash({ ...rest, inputSchema: input_schema }, "1"),
    FORECAST_R1,
  );
});

Deno.test("a missing field hashes as its documented default", () => {
  const bare = { name: "t" };
  const explicit = {
    name: "t",
    description: "",
    inputSchema: {},
    permissions: [],
    outputSchema: {},
    annotations: {},
    title: "",
    execution: {},
  };
  for (const r of ["1", "2", "3"] as const) {
    assert.equal(contractHash(bare, r), contractHash(explicit, r));
  }
  assert.deepEqual(contractPayload(bare, "3"), {
    name: "t",
    description: "",
    input_schema: {},
    permissions: [],
    output_schema: {},
    annotations: {},
    title: "",
    execution: {},
  });
  // A field sent as null is not a missing field.
  assert.notEqual(
    contractHash({ name: "t", description: null }, "1"),
    contractHash(bare, "1"),
  );
});

Deno.test("each recipe sees exactly its fields", () => {
  const base = { name: "t", description: "d", inputSchema: { type: "object" } };
  const moved = (change: Record<string, unknown>) =>
    (["1", "2", "3"] as const).map((r) =>
      contractHash({ ...base, ...change }, r) !== contractHash(base, r)
    );
  assert.deepEqual(moved({ description: "other" }), [true, true, true]);
  assert.deepEqual(moved({ permissions: ["net"] }), [true, true, true]);
  assert.deepEqual(moved({ outputSchema: { type: "object" } }), [
    false,
    true,
    true,
  ]);
  assert.deepEqual(moved({ annotations: { readOnlyHint: true } }), [
    false,
    true,
    true,
  ]);
  assert.deepEqual(moved({ title: "T" }), [false, false, true]);
  assert.deepEqual(moved({ execution: { taskSupport: "optional" } }), [
    false,
    false,
    true,
  ]);
  assert.deepEqual(moved({ _meta: { x: 1 }, icons: [] }), [
    false,
    false,
    false,
  ]);
  assert.deepEqual(RECIPE_FIELDS["2"].map((f) => f.field), [
    "name",
    "description",
    "input_schema",
    "permissions",
    "output_schema",
    "annotations",
  ]);
});

Deno.test("an unknown recipe or a nameless tool is an error, never a guess", () => {
  assert.throws(() => contractHash({ name: "t" }, "4" as "1"), RangeError);
  assert.throws(
    () => contractHash({ name: "t" }, 2 as unknown as "1"),
    /unknown contract recipe 2/,
  );
  assert.throws(() => contractHash({ description: "x" }, "1"), TypeError);
});
