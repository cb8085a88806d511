/**
 * Contract recipes: which declared fields a contract hash covers. Pure.
 *
 * | recipe | covers |
 * |---|---|
 * | `1` | name, description, input schema, permissions |
 * | `2` | recipe 1 + output schema, annotations |
 * | `3` | recipe 2 + title, execution |
 *
 * The payload hashed is an object with the seed's field names
 * (`input_schema`, `output_schema`, ...) and each missing field replaced by
 * its documented default, so a hash made here equals the one
 * mcp-evidence-validator 0.4 makes for the same declaration. A field is read
 * from the MCP name (`inputSchema`) when present, else from the seed's name
 * (`input_schema`), so both raw `tools/list` objects and the seed's declared
 * manifests hash the same way.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "./canonical.ts";
import { DefinitionError } from "../errors.ts";

/** A recipe's name. */
export type Recipe = "1" | "2" | "3";

/** The recipe verity captures under unless told otherwise. */
export const DEFAULT_RECIPE: Recipe = "3";

/** One field of a contract: its name in the payload, where it is read from, its default. */
export interface RecipeField {
  /** Name in the hashed payload (the seed's name). */
  field: string;
  /** Keys read from the tool object, first present wins. */
  sources: readonly string[];
  /** Value hashed when the tool does not carry the field. */
  default: unknown;
}

function field(name: string, sources: string[], d: unknown): RecipeField {
  return { field: name, sources, default: d };
}

const RECIPE_1 = [
  field("name", ["name"], undefined),
  field("description", ["description"], ""),
  field("input_schema", ["inputSchema", "input_schema"], {}),
  field("permissions", ["permissions"], []),
];
const RECIPE_2 = [
  ...RECIPE_1,
  field("output_schema", ["outputSchema", "output_schema"], {}),
  field("annotations", ["annotations"], {}),
];

/** The fields of each recipe, in payload order. */
export const RECIPE_FIELDS: Readonly<Record<Recipe, readonly RecipeField[]>> = {
  "1": RECIPE_1,
  "2": RECIPE_2,
  "3": [
    ...RECIPE_2,
    field("title", ["title"], ""),
    field("execution", ["execution"], {}),
  ],
};

/** True for `"1"`, `"2"` or `"3"`. */
export function isRecipe(v: unknown): v is Recipe {
  return v === "1" || v === "2" || v === "3";
}

function unknownRecipe(v: unknown): string {
  return `unknown contract recipe ${
    JSON.stringify(v) ?? String(v)
  } (known: "1", "2", "3")`;
}

/**
 * The recipe a file states at `keyPath`, or a `DefinitionError` naming the
 * file, the key and the value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(recipeAt("m.json", "contract_recipe", "2"), "2");
 * assert.throws(() => recipeAt("m.json", "contract_recipe", "9"), /unknown contract recipe "9"/);
 * ```
 */
export function recipeAt(file: string, keyPath: string, v: unknown): Recipe {
  if (isRecipe(v)) return v;
  throw new DefinitionError(file, keyPath, unknownRecipe(v));
}

/** Read one recipe field from a tool object: the value, and whether it was present. */
export function readField(
  tool: Record<string, unknown>,
  f: RecipeField,
): { present: boolean; value: unknown } {
  for (const k of f.sources) {
    if (Object.hasOwn(tool, k) && tool[k] !== undefined) {
      return { present: true, value: tool[k] };
    }
  }
  return { present: false, value: f.default };
}

/**
 * The object a contract hash is computed over: the recipe's fields, each
 * defaulted when missing. Throws `TypeError` when the tool has no string
 * `name`, `RangeError` for an unknown recipe (a number `2` included:
 * recipes are strings).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   contractPayload({ name: "t", inputSchema: { type: "object" } }, "1"),
 *   { name: "t", description: "", input_schema: { type: "object" }, permissions: [] },
 * );
 * ```
 */
export function contractPayload(
  tool: Record<string, unknown>,
  recipe: Recipe,
): Record<string, unknown> {
  if (!isRecipe(recipe)) throw new RangeError(unknownRecipe(recipe));
  if (typeof tool.name !== "string") {
    throw new TypeError(
      `a tool's name must be a string, got ${
        JSON.stringify(tool.name) ?? "nothing"
      }`,
    );
  }
  return Object.fromEntries(
    RECIPE_FIELDS[recipe].map((f) => [f.field, readField(tool, f).value]),
  );
}

/**
 * The contract hash of a tool under a recipe: `sha256:<hex>` of the
 * canonical JSON of {@linkcode contractPayload}.
 */
export function contractHash(
  tool: Record<string, unknown>,
  recipe: Recipe,
): string {
  return "sha256:" + sha256Hex(canonicalJson(contractPayload(tool, recipe)));
}
