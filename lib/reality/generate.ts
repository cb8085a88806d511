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
import { createPrng, DEFAULT_SEED, hashLabel, type Prng } from "./prng.ts";
import { formatValue } from "./formats.ts";
import { hintValues, matchNameHint, singular } from "./name_hints.ts";
import {
  compilePattern,
  generateFromPattern,
  UnsupportedPattern,
} from "./pattern.ts";
import { describeProblems, validateSchema } from "./schema_validate.ts";

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
  /**
   * Deepest nesting (objects, arrays, `$ref` expansions) followed.
   * @default {12}
   */
  maxDepth?: number;
}

/** Sources that count as realistic enough to include an optional property. */
const REALISTIC: ReadonlySet<SourceKind> = new Set([
  "const",
  "default",
  "examples",
  "enum",
  "format",
  "name_hint",
]);

type Schema = Record<string, unknown>;

class Unsatisfiable extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

interface Ctx {
  root: unknown;
  seed: number;
  maxDepth: number;
  /** The root's `$schema`, copied into the small schemas used for checks. */
  dialectUri: string | undefined;
  includeOptional: boolean;
}

interface Gen {
  value: unknown;
  source: SourceKind;
  sources: ArgumentSource[];
}

function isObject(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function ptr(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? s.slice(0, 57) + "..." : s;
}

function resolvePointer(root: unknown, ref: string, path: string): unknown {
  if (!ref.startsWith("#")) {
    throw new Unsatisfiable(path, `$ref ${JSON.stringify(ref)} is not local`);
  }
  const frag = decodeURIComponent(ref.slice(1));
  if (frag === "") return root;
  if (!frag.startsWith("/")) {
    throw new Unsatisfiable(
      path,
      `$ref ${JSON.stringify(ref)} (anchors are not supported)`,
    );
  }
  let cur: unknown = root;
  for (const raw of frag.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isObject(cur)) cur = cur[key];
    else cur = undefined;
    if (cur === undefined) {
      throw new Unsatisfiable(
        path,
        `$ref ${JSON.stringify(ref)} points at nothing`,
      );
    }
  }
  return cur;
}

/** Expand `$ref` and `allOf` until the schema's top level has neither. */
function resolve(
  schema: unknown,
  ctx: Ctx,
  path: string,
  depth: number,
): Schema | boolean {
  if (typeof schema === "boolean") return schema;
  if (!isObject(schema)) {
    throw new Unsatisfiable(path, `schema is not an object: ${show(schema)}`);
  }
  if (depth > ctx.maxDepth) {
    throw new Unsatisfiable(
      path,
      `schema nests deeper than ${ctx.maxDepth} levels`,
    );
  }
  if ("$dynamicRef" in schema || "$recursiveRef" in schema) {
    throw new Unsatisfiable(
      path,
      "$dynamicRef/$recursiveRef are not supported",
    );
  }
  let s: Schema = schema;
  if (typeof s.$ref === "string") {
    const { $ref, ...siblings } = s;
    const target = resolve(
      resolvePointer(ctx.root, $ref as string, path),
      ctx,
      path,
      depth + 1,
    );
    if (target === false) return false;
    s = merge(target === true ? {} : target, siblings);
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    let acc: Schema = rest;
    for (const part of allOf as unknown[]) {
      const r = resolve(part, ctx, path, depth + 1);
      if (r === false) return false;
      if (r !== true) acc = merge(acc, r);
    }
    s = acc;
  }
  return s;
}

const MAX_KEYS = new Set([
  "maximum",
  "exclusiveMaximum",
  "maxLength",
  "maxItems",
  "maxProperties",
]);
const MIN_KEYS = new Set([
  "minimum",
  "exclusiveMinimum",
  "minLength",
  "minItems",
  "minProperties",
]);

/** Merge two schemas that must both hold (allOf), keeping the tighter bound. */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    if (prev === undefined) {
      out[k] = v;
    } else if (k === "properties" && isObject(prev) && isObject(v)) {
      const props: Schema = { ...prev };
      for (const [pk, pv] of Object.entries(v)) {
        props[pk] = props[pk] === undefined ? pv : { allOf: [props[pk], pv] };
      }
      out[k] = props;
    } else if (k === "required" && Array.isArray(prev) && Array.isArray(v)) {
      out[k] = [...new Set([...prev, ...v])];
    } else if (
      MIN_KEYS.has(k) && typeof prev === "number" && typeof v === "number"
    ) {
      out[k] = Math.max(prev, v);
    } else if (
      MAX_KEYS.has(k) && typeof prev === "number" && typeof v === "number"
    ) {
      out[k] = Math.min(prev, v);
    } else if (k === "type") {
      const ta = Array.isArray(prev) ? prev : [prev];
      const tb = Array.isArray(v) ? v : [v];
      const both = ta.filter((t) =>
        tb.includes(t) || (t === "integer" && tb.includes("number"))
      );
      for (const t of tb) {
        if (t === "integer" && ta.includes("number") && !both.includes(t)) {
          both.push(t);
        }
      }
      out[k] = both;
    } else if (k === "enum" && Array.isArray(prev) && Array.isArray(v)) {
      const keys = new Set(v.map((x) => JSON.stringify(x)));
      out[k] = prev.filter((x) => keys.has(JSON.stringify(x)));
    } else {
      out[k] = v;
    }
  }
  return out;
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
function primitiveOk(s: Schema, value: unknown, ctx: Ctx): boolean {
  const small: Schema = {};
  if (ctx.dialectUri !== undefined) small.$schema = ctx.dialectUri;
  for (const k of PRIMITIVE_KEYS) if (s[k] !== undefined) small[k] = s[k];
  return validateSchema(small, value).status === "valid";
}

function typeOfValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Accept a candidate: primitives are checked now, composites by the final validation. */
function candidateOk(s: Schema, v: unknown, ctx: Ctx): boolean {
  const t = typeOfValue(v);
  if (t === "object" || t === "array") {
    const types = declaredTypes(s);
    return types === null || types.includes(t);
  }
  return primitiveOk(s, v, ctx);
}

function declaredTypes(s: Schema): string[] | null {
  if (typeof s.type === "string") return [s.type];
  if (Array.isArray(s.type)) {
    return s.type.filter((t): t is string => typeof t === "string");
  }
  return null;
}

function inferType(s: Schema, name: string | null): string {
  const declared = declaredTypes(s);
  if (declared !== null) {
    const nonNull = declared.filter((t) => t !== "null");
    if (declared.length === 0) return "__none__";
    return nonNull[0] ?? "null";
  }
  if (
    "properties" in s || "required" in s || "additionalProperties" in s ||
    "minProperties" in s
  ) return "object";
  if (
    "items" in s || "prefixItems" in s || "minItems" in s || "maxItems" in s
  ) return "array";
  if ("minLength" in s || "maxLength" in s || "pattern" in s || "format" in s) {
    return "string";
  }
  if (
    "minimum" in s || "maximum" in s || "exclusiveMinimum" in s ||
    "exclusiveMaximum" in s || "multipleOf" in s
  ) {
    return "number";
  }
  if (name !== null) {
    const m = matchNameHint(name, "string");
    if (m === null && matchNameHint(name, "number") !== null) return "number";
  }
  return "string";
}

function leaf(
  path: string,
  value: unknown,
  source: SourceKind,
  detail: string,
): Gen {
  return { value, source, sources: [{ path, source, detail }] };
}

/** Generate one value for a schema. Throws Unsatisfiable when it cannot. */
function gen(
  schema: unknown,
  path: string,
  name: string | null,
  ctx: Ctx,
  depth: number,
): Gen {
  const s0 = resolve(schema, ctx, path, depth);
  if (s0 === false) {
    throw new Unsatisfiable(path, "schema is false: no value is allowed");
  }
  const s: Schema = s0 === true ? {} : s0;
  const prng = createPrng((ctx.seed ^ hashLabel(path)) >>> 0);

  // 1. const, default, examples, enum.
  if ("const" in s) {
    if (!candidateOk(s, s.const, ctx)) {
      throw new Unsatisfiable(
        path,
        `const ${show(s.const)} contradicts the schema`,
      );
    }
    return leaf(path, s.const, "const", `const ${show(s.const)}`);
  }
  if (
    "default" in s && s.default !== undefined && candidateOk(s, s.default, ctx)
  ) {
    return leaf(path, s.default, "default", `default ${show(s.default)}`);
  }
  if (Array.isArray(s.examples)) {
    const ok = s.examples.filter((x) => candidateOk(s, x, ctx));
    if (ok.length > 0) {
      const v = prng.pick(ok);
      return leaf(
        path,
        v,
        "examples",
        `example ${ok.indexOf(v) + 1} of ${s.examples.length}`,
      );
    }
  }
  if (Array.isArray(s.enum)) {
    const ok = s.enum.filter((x) => x !== null && candidateOk(s, x, ctx));
    const pool = ok.length > 0
      ? ok
      : s.enum.filter((x) => candidateOk(s, x, ctx));
    if (pool.length === 0) {
      throw new Unsatisfiable(
        path,
        `no enum value satisfies the schema (enum ${show(s.enum)})`,
      );
    }
    const v = prng.pick(pool);
    return leaf(
      path,
      v,
      "enum",
      `enum ${s.enum.indexOf(v) + 1} of ${s.enum.length}`,
    );
  }

  // 2. anyOf / oneOf: the first branch that can be satisfied.
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    const { [key]: _, ...siblings } = s;
    const problems: string[] = [];
    // A bare `{"type":"null"}` branch is tried last: null is rarely a realistic answer.
    const isNull = (b: unknown): boolean =>
      isObject(b) && b.type === "null" && Object.keys(b).length === 1;
    const order = [...branches.keys()].sort((x, y) =>
      Number(isNull(branches[x])) - Number(isNull(branches[y]))
    );
    for (const i of order) {
      try {
        const b = resolve(branches[i], ctx, path, depth + 1);
        if (b === false) throw new Unsatisfiable(path, "branch is false");
        const g = gen(
          merge(siblings, b === true ? {} : b),
          path,
          name,
          ctx,
          depth + 1,
        );
        return g;
      } catch (e) {
        if (!(e instanceof Unsatisfiable)) throw e;
        problems.push(`${key}[${i}]: ${e.message}`);
      }
    }
    throw new Unsatisfiable(
      path,
      `no ${key} branch can be satisfied (${problems.join("; ")})`,
    );
  }

  const type = inferType(s, name);
  switch (type) {
    case "string":
      return genString(s, path, name, ctx, prng);
    case "integer":
    case "number":
      return genNumber(s, path, name, ctx, prng, type === "integer");
    case "boolean": {
      const m = name === null ? null : matchNameHint(name, "boolean");
      if (m) {
        const v = prng.pick(hintValues(m.hint, "boolean"));
        return leaf(path, v, "name_hint", `hint ${m.hint.label} (${name})`);
      }
      return leaf(path, false, "type", "boolean");
    }
    case "null":
      return leaf(path, null, "type", "null");
    case "array":
      return genArray(s, path, name, ctx, depth);
    case "object":
      return genObject(s, path, ctx, depth);
    case "__none__":
      throw new Unsatisfiable(path, "type is an empty list");
    default:
      throw new Unsatisfiable(path, `unknown type ${JSON.stringify(type)}`);
  }
}

const FILLER = ["example text", "hello world", "sample value"];

function codePoints(s: string): number {
  return [...s].length;
}

function fitLength(v: string, min: number, max: number): string {
  let out = v;
  if (codePoints(out) < min) {
    const pad = " example text";
    while (codePoints(out) < min) out += pad;
  }
  if (codePoints(out) > max) out = [...out].slice(0, max).join("").trimEnd();
  while (codePoints(out) < min) out += "x";
  return out;
}

function genString(
  s: Schema,
  path: string,
  name: string | null,
  ctx: Ctx,
  prng: Prng,
): Gen {
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const max = typeof s.maxLength === "number" ? s.maxLength : Infinity;
  if (min > max) {
    throw new Unsatisfiable(path, `minLength ${min} exceeds maxLength ${max}`);
  }
  if (typeof s.pattern === "string") {
    try {
      compilePattern(s.pattern);
    } catch (e) {
      throw new Unsatisfiable(
        path,
        `pattern ${
          JSON.stringify(s.pattern)
        } is not a valid regular expression: ${(e as Error).message}`,
      );
    }
  }
  const tried: { value: string; source: SourceKind; detail: string }[] = [];
  if (typeof s.format === "string") {
    const v = formatValue(s.format, prng);
    if (v !== null) {
      tried.push({ value: v, source: "format", detail: `format ${s.format}` });
    }
  }
  const m = name === null ? null : matchNameHint(name, "string");
  if (m) {
    const values = hintValues(m.hint, "string") as string[];
    const first = prng.int(0, values.length - 1);
    for (let k = 0; k < values.length; k++) {
      const v = values[(first + k) % values.length]!;
      tried.push({
        value: v,
        source: "name_hint",
        detail: `hint ${m.hint.label} (${name})`,
      });
    }
  }
  for (const c of tried) {
    if (primitiveOk(s, c.value, ctx)) {
      return leaf(path, c.value, c.source, c.detail);
    }
    const fitted = fitLength(c.value, min, max);
    if (fitted !== c.value && primitiveOk(s, fitted, ctx)) {
      return leaf(
        path,
        fitted,
        c.source,
        `${c.detail}, fitted to length ${min}..${max}`,
      );
    }
  }
  if (typeof s.pattern === "string") {
    try {
      const v = generateFromPattern(s.pattern, prng, {
        minLength: min,
        maxLength: max,
      });
      if (primitiveOk(s, v, ctx)) {
        return leaf(path, v, "pattern", `pattern ${s.pattern}`);
      }
      throw new Unsatisfiable(
        path,
        `a string matching ${
          JSON.stringify(s.pattern)
        } fails the other keywords`,
      );
    } catch (e) {
      if (e instanceof UnsupportedPattern) {
        throw new Unsatisfiable(path, `pattern: ${e.message}`);
      }
      throw e;
    }
  }
  const filler = fitLength(prng.pick(FILLER), min, max);
  if (primitiveOk(s, filler, ctx)) return leaf(path, filler, "type", "string");
  const what = typeof s.format === "string"
    ? `format ${s.format}`
    : "the string keywords";
  throw new Unsatisfiable(path, `no generated string satisfies ${what}`);
}

function genNumber(
  s: Schema,
  path: string,
  name: string | null,
  ctx: Ctx,
  prng: Prng,
  integer: boolean,
): Gen {
  // Bounds (draft-06 and later: exclusive bounds are numbers).
  let lo = -Infinity;
  let hi = Infinity;
  let loEx = false;
  let hiEx = false;
  if (typeof s.minimum === "number") {
    lo = s.minimum;
  }
  if (typeof s.maximum === "number") {
    hi = s.maximum;
  }
  if (typeof s.exclusiveMinimum === "number" && s.exclusiveMinimum >= lo) {
    [lo, loEx] = [s.exclusiveMinimum, true];
  }
  if (typeof s.exclusiveMaximum === "number" && s.exclusiveMaximum <= hi) {
    [hi, hiEx] = [s.exclusiveMaximum, true];
  }
  const bounds = `${loEx ? "(" : "["}${lo}, ${hi}${hiEx ? ")" : "]"}`;
  if (lo > hi || (lo === hi && (loEx || hiEx))) {
    throw new Unsatisfiable(path, `empty range ${bounds}`);
  }

  const m = name === null
    ? null
    : matchNameHint(name, integer ? "integer" : "number");
  if (m) {
    for (const v of hintValues(m.hint, integer ? "integer" : "number")) {
      if (primitiveOk(s, v, ctx)) {
        return leaf(path, v, "name_hint", `hint ${m.hint.label} (${name})`);
      }
    }
  }
  const step = typeof s.multipleOf === "number" && s.multipleOf > 0
    ? s.multipleOf
    : null;
  // The window to draw from: the declared bounds, or a realistic 1..100.
  let wlo: number;
  let whi: number;
  if (Number.isFinite(lo) && Number.isFinite(hi)) [wlo, whi] = [lo, hi];
  else if (Number.isFinite(lo)) [wlo, whi] = [lo, Math.max(lo, 0) + 99];
  else if (Number.isFinite(hi)) {
    [wlo, whi] = [hi >= 1 ? Math.min(1, hi) : hi - 99, hi];
  } else [wlo, whi] = [1, 100];
  const detail = Number.isFinite(lo) || Number.isFinite(hi)
    ? `within ${bounds}`
    : "1..100";
  const source: SourceKind = Number.isFinite(lo) || Number.isFinite(hi)
    ? "bounds"
    : "type";

  const unit = step ?? 1;
  const kLo = Math.ceil(wlo / unit - 1e-9) +
    (loEx && Number.isInteger(wlo / unit) ? 1 : 0);
  const kHi = Math.floor(whi / unit + 1e-9) -
    (hiEx && Number.isInteger(whi / unit) ? 1 : 0);
  const wide = whi - wlo >= 10 || integer || step !== null;
  if (kLo <= kHi && wide) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const k = prng.int(kLo, Math.min(kHi, kLo + 1_000_000));
      const v = step === null ? k : Number((k * step).toPrecision(12));
      if (primitiveOk(s, v, ctx)) return leaf(path, v, source, detail);
    }
  }
  if (!integer && step === null) {
    // A narrow real range: a value with two decimals strictly inside it.
    for (let attempt = 0; attempt < 10; attempt++) {
      const v = Number(
        (wlo + (whi - wlo) * (0.1 + 0.8 * prng.next())).toFixed(2),
      );
      if (primitiveOk(s, v, ctx)) return leaf(path, v, source, detail);
    }
    const mid = (wlo + whi) / 2;
    if (primitiveOk(s, mid, ctx)) return leaf(path, mid, source, detail);
  }
  const what = integer ? "integer" : "number";
  throw new Unsatisfiable(
    path,
    `no ${what}${step !== null ? ` multiple of ${step}` : ""} in ${bounds}`,
  );
}

function genArray(
  s: Schema,
  path: string,
  name: string | null,
  ctx: Ctx,
  depth: number,
): Gen {
  const minItems = typeof s.minItems === "number" ? s.minItems : 0;
  const maxItems = typeof s.maxItems === "number" ? s.maxItems : Infinity;
  if (minItems > maxItems) {
    throw new Unsatisfiable(
      path,
      `minItems ${minItems} exceeds maxItems ${maxItems}`,
    );
  }
  const tuple: unknown[] = Array.isArray(s.prefixItems)
    ? s.prefixItems
    : Array.isArray(s.items)
    ? s.items
    : [];
  const rest: unknown = Array.isArray(s.prefixItems)
    ? s.items
    : Array.isArray(s.items)
    ? s.additionalItems
    : s.items;
  // One item is the realistic default; a tuple gets all its positions.
  let count = Math.min(
    Math.max(minItems, tuple.length > 0 ? tuple.length : 1),
    maxItems,
  );
  if (rest === false && count > tuple.length) count = tuple.length;
  if (count < minItems) {
    throw new Unsatisfiable(
      path,
      `minItems ${minItems} but only ${tuple.length} items are allowed`,
    );
  }
  const itemName = name === null ? null : singular(name);
  const value: unknown[] = [];
  const sources: ArgumentSource[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const itemSchema = i < tuple.length
      ? tuple[i]
      : rest === undefined
      ? true
      : rest;
    let g: Gen | null = null;
    for (let attempt = 0; attempt < 20; attempt++) {
      const p = ptr(path, i);
      const c = gen(
        itemSchema,
        attempt === 0 ? p : `${p}#${attempt}`,
        itemName,
        ctx,
        depth + 1,
      );
      const key = JSON.stringify(c.value);
      if (s.uniqueItems !== true || !seen.has(key)) {
        g = {
          ...c,
          sources: c.sources.map((x) => ({
            ...x,
            path: x.path.replace(/#\d+$/, ""),
          })),
        };
        seen.add(key);
        break;
      }
    }
    if (g === null) {
      throw new Unsatisfiable(path, `could not make ${count} unique items`);
    }
    value.push(g.value);
    sources.push(...g.sources);
  }
  return { value, source: "type", sources };
}

function genObject(s: Schema, path: string, ctx: Ctx, depth: number): Gen {
  const props = isObject(s.properties) ? s.properties : {};
  const required = Array.isArray(s.required)
    ? s.required.filter((r): r is string => typeof r === "string")
    : [];
  const patternProps = isObject(s.patternProperties) ? s.patternProperties : {};
  const additional = s.additionalProperties;
  const value: Record<string, unknown> = {};
  const sources: ArgumentSource[] = [];
  const optional: string[] = [];

  const schemaFor = (key: string): unknown => {
    if (key in props) return props[key];
    for (const [pat, ps] of Object.entries(patternProps)) {
      try {
        if (compilePattern(pat).test(key)) return ps;
      } catch {
        // an invalid patternProperties key cannot select anything
      }
    }
    if (additional === false) {
      throw new Unsatisfiable(
        ptr(path, key),
        `required property ${
          JSON.stringify(key)
        } is not declared and additionalProperties is false`,
      );
    }
    return additional === undefined ? true : additional;
  };

  for (const key of [...new Set([...Object.keys(props), ...required])]) {
    const p = ptr(path, key);
    if (required.includes(key)) {
      const g = gen(schemaFor(key), p, key, ctx, depth + 1);
      value[key] = g.value;
      sources.push(...g.sources);
      continue;
    }
    optional.push(key);
    if (!ctx.includeOptional) continue;
    try {
      const g = gen(props[key], p, key, ctx, depth + 1);
      if (REALISTIC.has(g.source)) {
        value[key] = g.value;
        sources.push(...g.sources);
      }
    } catch (e) {
      if (!(e instanceof Unsatisfiable)) throw e;
      // An optional property we cannot fill is left out.
    }
  }
  const minProps = typeof s.minProperties === "number" ? s.minProperties : 0;
  for (const key of optional) {
    if (Object.keys(value).length >= minProps) break;
    if (key in value) continue;
    const g = gen(props[key], ptr(path, key), key, ctx, depth + 1);
    value[key] = g.value;
    sources.push(...g.sources);
  }
  for (let n = 1; Object.keys(value).length < minProps; n++) {
    if (additional === false) {
      throw new Unsatisfiable(
        path,
        `minProperties ${minProps} but only ${
          Object.keys(value).length
        } properties are allowed`,
      );
    }
    const key = `extra${n}`;
    if (key in value) continue;
    const g = gen(
      additional === undefined ? true : additional,
      ptr(path, key),
      key,
      ctx,
      depth + 1,
    );
    value[key] = g.value;
    sources.push(...g.sources);
  }
  const maxProps = typeof s.maxProperties === "number"
    ? s.maxProperties
    : Infinity;
  for (const key of [...optional].reverse()) {
    if (Object.keys(value).length <= maxProps) break;
    if (key in value) {
      delete value[key];
      const at = ptr(path, key);
      for (let i = sources.length - 1; i >= 0; i--) {
        const sp = sources[i]!.path;
        if (sp === at || sp.startsWith(at + "/")) sources.splice(i, 1);
      }
    }
  }
  if (Object.keys(value).length > maxProps) {
    throw new Unsatisfiable(
      path,
      `maxProperties ${maxProps} is below the ${required.length} required properties`,
    );
  }
  return { value, source: "type", sources };
}

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
  const dialectUri = isObject(schema) && typeof schema.$schema === "string"
    ? schema.$schema
    : undefined;
  const first = validateSchema(schema, {});
  if (first.status === "unusable") {
    return { ok: false, reason: `inputSchema: ${first.reason}`, path: "" };
  }
  if (isObject(schema)) {
    const types = declaredTypes(schema);
    if (types !== null && !types.includes("object")) {
      return {
        ok: false,
        reason: `inputSchema type is ${show(schema.type)}, not "object"`,
        path: "",
      };
    }
  }
  let lastProblem = "";
  for (const shape of ["full", "minimal"] as const) {
    const ctx: Ctx = {
      root: schema,
      seed,
      maxDepth: options.maxDepth ?? 12,
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
    if (!isObject(g.value)) {
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
