/**
 * Benchmark: JSON Schema validator setup for N differing output schemas,
 * the cost `verity reality` pays once per tool.
 *
 * Per round, side by side (the order alternates between rounds):
 * - old: a new Ajv instance per schema (with ajv-formats), compile, validate
 *   one value: what lib/reality/schema_validate.ts did before, each new
 *   instance compiling its dialect's meta-schema again;
 * - new: `validateSchema` from lib/reality/schema_validate.ts, which compiles
 *   on one shared instance per dialect.
 *
 * Every round uses schemas no earlier round has seen (so the validator cache
 * never hits), a third each of draft-07, 2019-09 and 2020-12. Prints the
 * median milliseconds per side and the median of the per-round ratios
 * old/new.
 *
 * Run: deno run -A scripts/bench_reality.ts [--schemas N] [--rounds R]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import Ajv07 from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { validateSchema } from "../lib/reality/schema_validate.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    schemas: { type: "string", default: "300" },
    rounds: { type: "string", default: "5" },
  },
  strict: true,
});
const n = Number(values.schemas);
const rounds = Number(values.rounds);
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error("bench_reality: --schemas and --rounds expect integers >= 1");
  Deno.exit(2);
}

const DIALECTS = [
  "http://json-schema.org/draft-07/schema#",
  "https://json-schema.org/draft/2019-09/schema",
  undefined, // 2020-12, the MCP default
] as const;

/** A realistic tool output schema, different for every (round, i). */
function schemaFor(round: number, side: string, i: number): object {
  const $schema = DIALECTS[i % DIALECTS.length];
  return {
    ...($schema ? { $schema } : {}),
    type: "object",
    properties: {
      [`r${round}_${side}_${i}`]: { type: "string", format: "date-time" },
      count: { type: "integer", minimum: 0 },
      items: {
        type: "array",
        items: {
          type: "object",
          properties: { id: { type: "string" }, score: { type: "number" } },
          required: ["id"],
        },
      },
      email: { type: "string", format: "email" },
    },
    required: ["count"],
  };
}

const VALUE = { count: 1, items: [{ id: "a", score: 0.5 }] };

function oldWay(schema: object): boolean {
  const uri = (schema as { $schema?: string }).$schema;
  // deno-lint-ignore no-explicit-any
  const Ctor: any = uri === undefined
    ? Ajv2020
    : uri.includes("2019-09")
    ? Ajv2019
    : Ajv07;
  const ajv = new Ctor({
    strict: false,
    allErrors: true,
    logger: false,
    validateFormats: true,
    unicodeRegExp: false,
  });
  // deno-lint-ignore no-explicit-any
  (addFormats as any)(ajv);
  return ajv.compile(schema)(VALUE);
}

function newWay(schema: object): boolean {
  return validateSchema(schema, VALUE).status === "valid";
}

function time(side: "old" | "new", round: number): number {
  const schemas = Array.from(
    { length: n },
    (_, i) => schemaFor(round, side, i),
  );
  const f = side === "old" ? oldWay : newWay;
  const t0 = performance.now();
  for (const s of schemas) {
    if (!f(s)) throw new Error(`bench_reality: ${side} rejected a valid value`);
  }
  return performance.now() - t0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

// One warm-up round each, not counted (module loading, JIT).
time("old", -1);
time("new", -1);
const olds: number[] = [];
const news: number[] = [];
const ratios: number[] = [];
for (let r = 0; r < rounds; r++) {
  let o: number, w: number;
  if (r % 2 === 0) {
    o = time("old", r);
    w = time("new", r);
  } else {
    w = time("new", r);
    o = time("old", r);
  }
  olds.push(o);
  news.push(w);
  ratios.push(o / w);
}
console.log(
  `validator setup for ${n} differing schemas (draft-07, 2019-09, 2020-12), ${rounds} rounds`,
);
console.log(
  `  old (new Ajv per schema)       median ${median(olds).toFixed(0)} ms (${
    (median(olds) / n).toFixed(2)
  } ms/schema)`,
);
console.log(
  `  new (shared Ajv per dialect)   median ${median(news).toFixed(0)} ms (${
    (median(news) / n).toFixed(2)
  } ms/schema)`,
);
console.log(
  `  ratio old/new (per round)      median ${median(ratios).toFixed(1)}x`,
);
