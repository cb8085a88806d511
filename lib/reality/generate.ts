/**
 * Realistic, reproducible tool arguments from an `inputSchema`. Pure.
 *
 * Order of sources for each value: `const`, `default`, `examples`, `enum`;
 * then `format`; then name hints on whole words (`cityName` → a city); then
 * `pattern`; then a plain value of the right type. Bounds, lengths, item
 * counts, nested objects and arrays, local `$ref`, `allOf`, `anyOf`/`oneOf`
 * (first satisfiable branch, a bare null branch last) and required-vs-optional
 * are honoured. The whole
 * argument object is validated against the schema before it is returned; a
 * schema the generator cannot satisfy is reported, never papered over.
 *
 * @module
 */
import { DEFAULT_SEED, hashLabel } from "./prng.ts";
import { describeProblems, validateSchema } from "./schema_validate.ts";
import {
  brief,
  type Ctx,
  declaredTypes,
  type Gen,
  typeOfValue,
  Unsatisfiable,
} from "./_generate_context.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { gen } from "./_generate_value.ts";

import type { ArgumentSource } from "./_generate_context.ts";
export type { ArgumentSource, SourceKind } from "./_generate_context.ts";

/** Generated arguments with their evidence, or why none could be made. */
export type GeneratedArguments =
  | {
    ok: true;
    arguments: Record<string, unknown>;
    sources: ArgumentSource[];
    /** "full" includes realistic optional properties; "minimal" only required ones. */
    shape: "full" | "minimal";
  }
  | { ok: false; reason: string; path: string };

/** Options for {@linkcode generateArguments}. */
export interface GenerateOptions {
  /**
   * Seed for every random choice.
   * @default {DEFAULT_SEED}
   */
  seed?: number;
  /**
   * Mixed into the seed so each tool gets its own stream (usually the tool name).
   * @default {""}
   */
  label?: string;
}

/** Deepest nesting (objects, arrays, `$ref` expansions) followed. */
const MAX_DEPTH = 12;

/**
 * Generate one realistic argument object for a tool's `inputSchema`,
 * validated against that schema, with the source of every value. The same
 * schema, seed and label always give the same arguments.
 *
 * A missing `inputSchema` is treated as `{"type":"object"}`.
 *
 * @example
 * ```ts
 * const g = generateArguments({
 *   type: "object",
 *   properties: { city: { type: "string" } },
 *   required: ["city"],
 * }, { label: "weather" });
 * // g.ok && typeof g.arguments.city === "string" (a real city name)
 * ```
 */
export function generateArguments(
  inputSchema: unknown,
  options: GenerateOptions = {},
): GeneratedArguments {
  const schema = inputSchema === undefined ? { type: "object" } : inputSchema;
  const seed =
    ((options.seed ?? DEFAULT_SEED) ^ hashLabel(options.label ?? "")) >>> 0;
  const dialectUri = isPlainObject(schema) && typeof schema.$schema === "string"
    ? schema.$schema
    : undefined;
  const first = validateSchema(schema, {});
  if (first.status === "unusable") {
    return { ok: false, reason: `inputSchema: ${first.reason}`, path: "" };
  }
  if (isPlainObject(schema)) {
    const types = declaredTypes(schema);
    if (types !== null && !types.includes("object")) {
      return {
        ok: false,
        reason: `inputSchema type is ${brief(schema.type)}, not "object"`,
        path: "",
      };
    }
  }
  let lastProblem = "";
  for (const shape of ["full", "minimal"] as const) {
    const ctx: Ctx = {
      root: schema,
      seed,
      maxDepth: MAX_DEPTH,
      dialectUri,
      includeOptional: shape === "full",
    };
    let g: Gen;
    try {
      g = gen(schema, "", null, ctx, 0);
    } catch (e) {
      if (e instanceof Unsatisfiable) {
        return { ok: false, reason: e.message, path: e.path };
      }
      throw e;
    }
    if (!isPlainObject(g.value)) {
      return {
        ok: false,
        reason: `the schema yields ${typeOfValue(g.value)}, not an object`,
        path: "",
      };
    }
    const v = validateSchema(schema, g.value);
    if (v.status === "valid") {
      return { ok: true, arguments: g.value, sources: g.sources, shape };
    }
    if (v.status === "unusable") {
      return { ok: false, reason: `inputSchema: ${v.reason}`, path: "" };
    }
    lastProblem = describeProblems(v.problems);
  }
  return {
    ok: false,
    reason: `generated arguments fail the inputSchema: ${lastProblem}`,
    path: "",
  };
}
