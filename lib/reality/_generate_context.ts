/**
 * What the argument generator's parts share: the schema and context types,
 * the evidence of a generated value and the small checks on candidates.
 * Private to lib/reality/.
 *
 * @module
 */
import { validateSchema } from "./schema_validate.ts";

/** Where a generated value came from. */
export type SourceKind =
  | "const"
  | "default"
  | "examples"
  | "enum"
  | "format"
  | "name_hint"
  | "pattern"
  | "bounds"
  | "type";

/** Evidence for one generated value: its JSON pointer, source and detail. */
export interface ArgumentSource {
  /** JSON pointer into the arguments, e.g. `/location`. */
  path: string;
  source: SourceKind;
  /** e.g. `format email`, `hint city (cityName)`, `enum 2 of 3`. */
  detail: string;
}

export type Schema = Record<string, unknown>;

export class Unsatisfiable extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

export interface Ctx {
  root: unknown;
  seed: number;
  maxDepth: number;
  /** The root's `$schema`, copied into the small schemas used for checks. */
  dialectUri: string | undefined;
  includeOptional: boolean;
}

export interface Gen {
  value: unknown;
  source: SourceKind;
  sources: ArgumentSource[];
}

export function ptr(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

export function brief(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? s.slice(0, 57) + "..." : s;
}

const PRIMITIVE_KEYS = [
  "type",
  "enum",
  "const",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
];

/** Does a primitive value satisfy the primitive keywords of a schema? */
export function primitiveOk(s: Schema, value: unknown, ctx: Ctx): boolean {
  const small: Schema = {};
  if (ctx.dialectUri !== undefined) small.$schema = ctx.dialectUri;
  for (const k of PRIMITIVE_KEYS) if (s[k] !== undefined) small[k] = s[k];
  return validateSchema(small, value).status === "valid";
}

export function typeOfValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Accept a candidate: primitives are checked now, composites by the final validation. */
export function candidateOk(s: Schema, v: unknown, ctx: Ctx): boolean {
  const t = typeOfValue(v);
  if (t === "object" || t === "array") {
    const types = declaredTypes(s);
    return types === null || types.includes(t);
  }
  return primitiveOk(s, v, ctx);
}

export function declaredTypes(s: Schema): string[] | null {
  if (typeof s.type === "string") return [s.type];
  if (Array.isArray(s.type)) {
    return s.type.filter((t): t is string => typeof t === "string");
  }
  return null;
}

export function leaf(
  path: string,
  value: unknown,
  source: SourceKind,
  detail: string,
): Gen {
  return { value, source, sources: [{ path, source, detail }] };
}
