/**
 * `$ref` and `allOf` resolution for the argument generator: local JSON
 * pointers are followed and `allOf` parts merged (tighter bound wins).
 * Private to lib/reality/.
 *
 * @module
 */
import {
  brief,
  type Ctx,
  type Schema,
  Unsatisfiable,
} from "./_generate_context.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

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
    else if (isPlainObject(cur)) cur = cur[key];
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
export function resolve(
  schema: unknown,
  ctx: Ctx,
  path: string,
  depth: number,
): Schema | boolean {
  if (typeof schema === "boolean") return schema;
  if (!isPlainObject(schema)) {
    throw new Unsatisfiable(path, `schema is not an object: ${brief(schema)}`);
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
export function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    if (prev === undefined) {
      out[k] = v;
    } else if (k === "properties" && isPlainObject(prev) && isPlainObject(v)) {
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
