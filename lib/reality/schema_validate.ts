/**
 * JSON Schema validation with `npm:ajv`, choosing the dialect from
 * `$schema`: 2020-12 when it is absent (MCP 2025-11-25), draft-07 or
 * 2019-09 when named. Pure (no I/O); compiled validators are cached by the
 * schema's JSON text. One Ajv instance per dialect compiles every schema
 * (building an instance compiles its meta-schema, which costs far more than
 * compiling a typical tool schema); a schema that names an `$id` gets an
 * instance of its own, so two schemas sharing an `$id` never collide.
 *
 * @module
 */
import Ajv07 from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/** The dialects verity validates. */
export type Dialect = "2020-12" | "2019-09" | "draft-07" | "draft-06";

/** One validation problem, as a JSON pointer into the instance and a message. */
export interface SchemaProblem {
  instancePath: string;
  message: string;
}

/** The outcome of validating a value. */
export type Validation =
  | { status: "valid"; dialect: Dialect }
  | { status: "invalid"; dialect: Dialect; problems: SchemaProblem[] }
  /** The schema itself cannot be used: unknown dialect, or it does not compile. */
  | { status: "unusable"; reason: string };

/**
 * Which dialect a schema declares, or null for one verity cannot validate
 * (draft-04 and older, or an unknown URI).
 *
 * @example
 * ```ts
 * dialectOf({ type: "object" }); // "2020-12"
 * dialectOf({ $schema: "http://json-schema.org/draft-07/schema#" }); // "draft-07"
 * ```
 */
export function dialectOf(schema: unknown): Dialect | null {
  if (typeof schema !== "object" || schema === null) return "2020-12";
  const uri = (schema as Record<string, unknown>).$schema;
  if (uri === undefined) return "2020-12";
  if (typeof uri !== "string") return null;
  const m =
    /^https?:\/\/json-schema\.org\/(draft-0[67]|draft\/2019-09|draft\/2020-12)\/schema#?$/
      .exec(uri);
  // draft-06, draft-07, draft/2019-09, draft/2020-12: the dialect's name.
  return m ? m[1]!.replace("draft/", "") as Dialect : null;
}

type ValidateFn = ((data: unknown) => boolean) & {
  errors?:
    | { instancePath: string; message?: string; params?: unknown }[]
    | null;
};

interface AjvLike {
  compile(schema: unknown): ValidateFn;
  removeSchema(schema: object): unknown;
}

const AJV_OPTIONS = {
  strict: false,
  allErrors: true,
  logger: false,
  validateFormats: true,
  // Server-side validators (zod, pydantic) compile patterns without the `u`
  // flag; doing the same keeps patterns like `\-` usable.
  unicodeRegExp: false,
} as const;

function newAjv(
  dialect: Dialect,
  extra: { addUsedSchema?: boolean } = {},
): AjvLike {
  // deno-lint-ignore no-explicit-any
  const Ctor: any = dialect === "2020-12"
    ? Ajv2020
    : dialect === "2019-09"
    ? Ajv2019
    : Ajv07;
  const ajv = new Ctor({ ...AJV_OPTIONS, ...extra });
  // deno-lint-ignore no-explicit-any
  (addFormats as any)(ajv);
  return ajv as AjvLike;
}

const shared = new Map<Dialect, AjvLike>();

/** The dialect's shared instance; it never keeps the schemas it compiled. */
function sharedAjv(dialect: Dialect): AjvLike {
  let ajv = shared.get(dialect);
  if (!ajv) {
    ajv = newAjv(dialect, { addUsedSchema: false });
    shared.set(dialect, ajv);
  }
  return ajv;
}

/**
 * Compile `schema` for `dialect`. `text` is its JSON: a schema mentioning
 * `$id` anywhere (even as a property name) gets a fresh instance, exactly as
 * before; any other schema is compiled on the dialect's shared instance and
 * removed from it afterwards, so nothing one schema declares is visible to
 * the next.
 */
function compileFor(
  dialect: Dialect,
  schema: unknown,
  text: string,
): ValidateFn {
  if (text.includes('"$id"')) return newAjv(dialect).compile(schema);
  const ajv = sharedAjv(dialect);
  try {
    return ajv.compile(schema);
  } finally {
    if (typeof schema === "object" && schema !== null) ajv.removeSchema(schema);
  }
}

const cache = new Map<
  string,
  { fn: ValidateFn; dialect: Dialect } | { reason: string }
>();

function compiled(
  schema: unknown,
): { fn: ValidateFn; dialect: Dialect } | { reason: string } {
  const key = JSON.stringify(schema) ?? "undefined";
  const hit = cache.get(key);
  if (hit) return hit;
  let entry: { fn: ValidateFn; dialect: Dialect } | { reason: string };
  const dialect = dialectOf(schema);
  if (
    typeof schema !== "boolean" &&
    (typeof schema !== "object" || schema === null || Array.isArray(schema))
  ) {
    entry = {
      reason: `a schema must be an object or a boolean, got ${
        key.slice(0, 60)
      }`,
    };
  } else if (dialect === null) {
    entry = {
      reason: `unsupported JSON Schema dialect ${
        JSON.stringify((schema as Record<string, unknown>).$schema)
      }`,
    };
  } else {
    try {
      let s = schema;
      if (dialect === "draft-06" && typeof s === "object" && s !== null) {
        // Draft-06 is draft-07 without if/then/else; validate it as draft-07.
        const { $schema: _, ...rest } = s as Record<string, unknown>;
        s = rest;
      }
      entry = { fn: compileFor(dialect, s, key), dialect };
    } catch (e) {
      entry = {
        reason: `schema does not compile: ${
          (e as Error).message.split("\n")[0]
        }`,
      };
    }
  }
  if (cache.size > 500) cache.clear();
  cache.set(key, entry);
  return entry;
}

/**
 * Validate a value against a JSON Schema.
 *
 * @example
 * ```ts
 * validateSchema({ type: "number" }, "warm").status; // "invalid"
 * ```
 */
export function validateSchema(schema: unknown, value: unknown): Validation {
  const c = compiled(schema);
  if ("reason" in c) return { status: "unusable", reason: c.reason };
  if (c.fn(value)) return { status: "valid", dialect: c.dialect };
  const problems = (c.fn.errors ?? []).map((e) => ({
    instancePath: e.instancePath,
    message: e.message ?? "is invalid",
  }));
  return { status: "invalid", dialect: c.dialect, problems };
}

/** One line naming the first problems, e.g. `/temperature must be number`. */
export function describeProblems(
  problems: readonly SchemaProblem[],
  max = 3,
): string {
  const shown = problems.slice(0, max).map((p) =>
    `${p.instancePath || "(root)"} ${p.message}`
  );
  const more = problems.length > max ? ` (+${problems.length - max} more)` : "";
  return shown.join("; ") + more;
}
