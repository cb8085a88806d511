/**
 * The string generator: `const`/`default`/`examples`/`enum` candidates,
 * `format`, name hints, `pattern`, then filler fitted to the length bounds.
 * Private to lib/reality/.
 *
 * @module
 */
import type { Prng } from "./prng.ts";
import { formatValue } from "./formats.ts";
import { hintValues, matchNameHint } from "./name_hints.ts";
import {
  compilePattern,
  generateFromPattern,
  UnsupportedPattern,
} from "./pattern.ts";
import {
  type Ctx,
  type Gen,
  leaf,
  primitiveOk,
  type Schema,
  type SourceKind,
  Unsatisfiable,
} from "./_generate_context.ts";

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

export function genString(
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
