/**
 * One `[[tools]]` table of a definition (name, variant, arguments,
 * expectations), read strictly. Private to `parse.ts`. Pure.
 *
 * @module
 */
import {
  type Expectation,
  LEARNED_AIMS,
  type ProbeDef,
  TEST_NAMES,
  type TestName,
  type ToolDef,
} from "./types.ts";
import { describe, join, plain, type Reader } from "./_reader.ts";

const KEYS = ["name", "arguments", "variant", "probe", "expected", "learned"];
const VERDICT_RE = /^(PASS|VIOLATION|(INCONCLUSIVE|NOT_APPLICABLE):[A-Z_]+)$/;

/** Read one tool table at `path` (e.g. `tools[0]`). */
export function parseTool(
  r: Reader,
  v: unknown,
  path: string,
  kind: "fixture" | "target",
  hasSource: boolean,
): ToolDef {
  const t = r.table(v, path);
  r.keys(t, path, KEYS);
  if (!Object.hasOwn(t, "name")) {
    r.fail(`${path}.name`, "missing (the tool's name as listed by the server)");
  }
  const name = r.nonEmptyString(t.name, `${path}.name`);
  const variant = r.optional(t, path, "variant", "nonEmptyString", null);
  const args = parseArguments(r, t, path, hasSource);
  const probe = Object.hasOwn(t, "probe")
    ? parseProbe(r, t.probe, `${path}.probe`, hasSource)
    : null;
  const expected: Partial<Record<TestName, Expectation>> = {};
  if (Object.hasOwn(t, "expected")) {
    if (kind === "target") {
      r.fail(
        `${path}.expected`,
        "targets never carry expected verdicts (audits are measurements)",
      );
    }
    const et = r.table(t.expected, `${path}.expected`);
    r.keys(et, `${path}.expected`, TEST_NAMES);
    for (const [test, e] of Object.entries(et)) {
      const p = `${path}.expected.${test}`;
      const x = r.table(e, p);
      if (!Object.hasOwn(x, "verdict")) {
        r.fail(`${p}.verdict`, 'missing (e.g. "PASS")');
      }
      const verdict = r.string(x.verdict, `${p}.verdict`);
      if (!VERDICT_RE.test(verdict)) {
        r.fail(
          `${p}.verdict`,
          `expected PASS, VIOLATION, INCONCLUSIVE:<REASON> or NOT_APPLICABLE:<REASON>, got ${
            JSON.stringify(verdict)
          }`,
        );
      }
      const exp: Expectation = { verdict };
      for (const [k, val] of Object.entries(x)) {
        if (k === "verdict") continue;
        if (typeof val === "string") r.todo(val, join(p, k));
        else if (
          typeof val !== "boolean" &&
          !(typeof val === "number" && Number.isFinite(val))
        ) {
          r.fail(
            join(p, k),
            `an assertion must be a string, boolean or number, got ${
              describe(val)
            }`,
          );
        }
        exp[k] = val as string | boolean | number;
      }
      expected[test as TestName] = exp;
    }
  }
  const tool: ToolDef = { name, variant, arguments: args, probe, expected };
  if (Object.hasOwn(t, "learned")) {
    tool.learned = r.oneOf(t.learned, `${path}.learned`, LEARNED_AIMS);
  }
  return tool;
}

/** The `arguments` table of `t` (default `{}`), placeholders kept. */
function parseArguments(
  r: Reader,
  t: Record<string, unknown>,
  path: string,
  hasSource: boolean,
): Record<string, unknown> {
  if (!Object.hasOwn(t, "arguments")) return {};
  const args = plain(r.table(t.arguments, `${path}.arguments`)) as Record<
    string,
    unknown
  >;
  r.todoDeep(args, `${path}.arguments`);
  r.finiteDeep(args, `${path}.arguments`);
  r.placeholdersDeep(args, `${path}.arguments`, hasSource);
  return args;
}

/** A tool's `probe = { name, arguments }`: a read called around the tool. */
function parseProbe(
  r: Reader,
  v: unknown,
  path: string,
  hasSource: boolean,
): ProbeDef {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    r.fail(
      path,
      `expected a table such as { name = "get" }, got ${describe(v)}`,
    );
  }
  const p = r.table(v, path);
  r.keys(p, path, ["name", "arguments"]);
  if (!Object.hasOwn(p, "name")) {
    r.fail(
      `${path}.name`,
      'missing (a tool the server lists that reads the state, e.g. "get")',
    );
  }
  const name = r.nonEmptyString(p.name, `${path}.name`);
  return { name, arguments: parseArguments(r, p, path, hasSource) };
}
