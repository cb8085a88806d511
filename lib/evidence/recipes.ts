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

/** Every known recipe, oldest first. */
export const RECIPES: readonly Recipe[] = ["1", "2", "3"];

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

const NAME: RecipeField = {
  field: "name",
  sources: ["name"],
  default: undefined,
};
const DESCRIPTION: RecipeField = {
  field: "description",
  sources: ["description"],
  default: "",
};
const INPUT: RecipeField = {
  field: "input_schema",
  sources: ["inputSchema", "input_schema"],
  default: {},
};
const PERMISSIONS: RecipeField = {
  field: "permissions",
  sources: ["permissions"],
  default: [],
};
const OUTPUT: RecipeField = {
  field: "output_schema",
  sources: ["outputSchema", "output_schema"],
  default: {},
};
const ANNOTATIONS: RecipeField = {
  field: "annotations",
  sources: ["annotations"],
  default: {},
};
const TITLE: RecipeField = { field: "title", sources: ["title"], default: "" };
const EXECUTION: RecipeField = {
  field: "execution",
  sources: ["execution"],
  default: {},
};

/** The fields of each recipe, in payload order. */
export const RECIPE_FIELDS: Readonly<Record<Recipe, readonly RecipeField[]>> = {
  "1": [NAME, DESCRIPTION, INPUT, PERMISSIONS],
  "2": [NAME, DESCRIPTION, INPUT, PERMISSIONS, OUTPUT, ANNOTATIONS],
  "3": [
    NAME,
    DESCRIPTION,
    INPUT,
    PERMISSIONS,
    OUTPUT,
    ANNOTATIONS,
    TITLE,
    EXECUTION,
  ],
};

/** True for `"1"`, `"2"` or `"3"`. */
export function isRecipe(v: unknown): v is Recipe {
  return v === "1" || v === "2" || v === "3";
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
  throw new DefinitionError(
    file,
    keyPath,
    `unknown contract recipe ${
      JSON.stringify(v) ?? String(v)
    } (known: "1", "2", "3")`,
  );
}

/**
 * Check a recipe value, throwing `RangeError` for anything unknown
 * (including the number `2`: recipes are strings).
 */
export function toRecipe(v: unknown): Recipe {
  if (isRecipe(v)) return v;
  throw new RangeError(
    `unknown contract recipe ${
      JSON.stringify(v) ?? String(v)
    } (known: "1", "2", "3")`,
  );
}

/** Which payload fields a recipe covers, by payload name. */
export function recipeFieldNames(recipe: Recipe): string[] {
  return RECIPE_FIELDS[toRecipe(recipe)].map((f) => f.field);
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
 * `name`, `RangeError` for an unknown recipe.
 *
 * @example
 * ```ts
 * contractPayload({ name: "t", inputSchema: { type: "object" } }, "1");
 * // { name: "t", description: "", input_schema: { type: "object" }, permissions: [] }
 * ```
 */
export function contractPayload(
  tool: Record<string, unknown>,
  recipe: Recipe,
): Record<string, unknown> {
  const fields = RECIPE_FIELDS[toRecipe(recipe)];
  if (typeof tool.name !== "string") {
    throw new TypeError(
      `a tool's name must be a string, got ${
        JSON.stringify(tool.name) ?? "nothing"
      }`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f.field] = readField(tool, f).value;
  return out;
}

/**
 * The contract hash of a tool under a recipe: `sha256:<hex>` of the
 * canonical JSON of {@linkcode contractPayload}.
 *
 * @example
 * ```ts
 * contractHash({ name: "t", inputSchema: {} }, "2"); // "sha256:…"
 * ```
 */
export function contractHash(
  tool: Record<string, unknown>,
  recipe: "1" | "2" | "3",
): string {
  return "sha256:" + sha256Hex(canonicalJson(contractPayload(tool, recipe)));
}
