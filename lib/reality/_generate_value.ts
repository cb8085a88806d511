/**
 * One value for a schema: resolves `$ref`/`allOf`, picks an `anyOf`/`oneOf`
 * branch, infers the type and hands strings and numbers to their
 * generators; arrays and objects recurse here. Private to lib/reality/.
 *
 * @module
 */
import { createPrng, hashLabel } from "./prng.ts";
import { hintValues, matchNameHint, singular } from "./name_hints.ts";
import { compilePattern } from "./pattern.ts";
import {
  type ArgumentSource,
  brief,
  candidateOk,
  type Ctx,
  declaredTypes,
  type Gen,
  leaf,
  ptr,
  type Schema,
  type SourceKind,
  Unsatisfiable,
} from "./_generate_context.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { merge, resolve } from "./_schema_resolve.ts";
import { genString } from "./_generate_string.ts";
import { genNumber } from "./_generate_number.ts";

/** Sources that count as realistic enough to include an optional property. */
const REALISTIC: ReadonlySet<SourceKind> = new Set([
  "const",
  "default",
  "examples",
  "enum",
  "format",
  "name_hint",
]);

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

/** Generate one value for a schema. Throws Unsatisfiable when it cannot. */
export function gen(
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
        `const ${brief(s.const)} contradicts the schema`,
      );
    }
    return leaf(path, s.const, "const", `const ${brief(s.const)}`);
  }
  if (
    "default" in s && s.default !== undefined && candidateOk(s, s.default, ctx)
  ) {
    return leaf(path, s.default, "default", `default ${brief(s.default)}`);
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
        `no enum value satisfies the schema (enum ${brief(s.enum)})`,
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
      isPlainObject(b) && b.type === "null" && Object.keys(b).length === 1;
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
  const props = isPlainObject(s.properties) ? s.properties : {};
  const required = Array.isArray(s.required)
    ? s.required.filter((r): r is string => typeof r === "string")
    : [];
  const patternProps = isPlainObject(s.patternProperties)
    ? s.patternProperties
    : {};
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
