/**
 * Over-declarations per tool, over all its argument sets. Pure.
 *
 * A verdict says whether one argument set behaved safely under a permissive
 * declaration. A tool is over-declared for a hint only when every argument
 * set tested behaved safely for that hint and no call errored: one set that
 * was unsafe, unknown or errored is enough to leave the declaration alone.
 *
 * Advice rests on the argument sets it was observed on. When the tool's
 * input schema has modes the definition did not exercise (an `enum`
 * argument with values no set used, a free-form SQL, command or code
 * string, whose other values may do anything), the advice is **scoped**:
 * "observed on <sets> only; <argument> has untested values". A scoped
 * advice is listed apart and never counted as a tool-level
 * over-declaration: one benign `CREATE TABLE` does not show that a tool
 * taking any SQL cannot delete.
 *
 * @module
 */
import type { Verdict } from "../verdicts/types.ts";
import { isPlainObject as isObject } from "../common/is_plain_object.ts";
import { parseToolPages } from "../contracts/contracts.ts";
import type { Report } from "./report.ts";

/** One tool whose permissive hint was safe in every argument set. */
export interface OverDeclaration {
  tool: string;
  hint: string;
  /** The argument sets (variants) it was tested with; null is the unnamed set. */
  variants: (string | null)[];
  /**
   * Input modes the argument sets did not exercise; empty for a tool-level
   * over-declaration. Absent when the input schemas were not given.
   */
  untested?: UntestedMode[];
}

/** An input mode no argument set exercised. */
export interface UntestedMode {
  argument: string;
  /** `enum`: these values were never sent; `free-form`: any other value may behave otherwise. */
  kind: "enum" | "free-form";
  /** The enum values never sent (enum only). */
  values?: unknown[];
}

/** What scopes advice: each tool's input schema and the argument sets sent. */
export interface ToolInputs {
  tool: string;
  inputSchema: unknown;
  argumentSets: readonly Record<string, unknown>[];
}

/** A concurrent verdict with no attempts run says nothing either way. */
function notRun(v: Verdict): boolean {
  return v.test === "concurrent_idempotence" && v.evidence.counts === undefined;
}

function errored(v: Verdict): boolean {
  return v.facts.call_errored === true || v.facts.repeat_errored === true ||
    v.reason === "CALL_ERROR" || v.secondary.includes("CALL_ERROR");
}

/**
 * Argument descriptions that say the value is code (`query: "The complete
 * CREATE TABLE SQL statement"`); a search `query` ("text to match") is not.
 */
const CODE_DESCRIPTION =
  /\b(sql|statements?|commands?|shell|scripts?|code|expressions?)\b/i;

/** Argument names whose values are code: any other value may do anything. */
const FREE_FORM =
  /(^|_|-|\b)(sql|statement|stmt|command|cmd|script|code|expression|expr|shell|program|eval)($|_|-|\b)/i;

/**
 * The input modes of a schema that a set of argument sets leaves untested:
 * top-level `enum` properties with values never sent, and free-form string
 * properties whose name or description says they carry SQL, a command or
 * code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const schema = {
 *   type: "object",
 *   properties: {
 *     mode: { enum: ["add", "set-url", "remove"] },
 *     sql: { type: "string" },
 *     name: { type: "string" },
 *   },
 * };
 * assert.deepEqual(untestedModes(schema, [{ mode: "add", sql: "SELECT 1", name: "x" }]), [
 *   { argument: "mode", kind: "enum", values: ["set-url", "remove"] },
 *   { argument: "sql", kind: "free-form" },
 * ]);
 * ```
 */
export function untestedModes(
  inputSchema: unknown,
  argumentSets: readonly Record<string, unknown>[],
): UntestedMode[] {
  if (!isObject(inputSchema) || !isObject(inputSchema.properties)) return [];
  const out: UntestedMode[] = [];
  for (const [name, prop] of Object.entries(inputSchema.properties)) {
    if (!isObject(prop)) continue;
    if (Array.isArray(prop.enum) && prop.enum.length > 1) {
      const sent = argumentSets.map((a) => JSON.stringify(a[name]));
      const values = prop.enum.filter((v) => !sent.includes(JSON.stringify(v)));
      if (values.length > 0) out.push({ argument: name, kind: "enum", values });
      continue;
    }
    const stringy = prop.type === "string" ||
      (Array.isArray(prop.type) && prop.type.includes("string"));
    const said = typeof prop.description === "string" &&
      CODE_DESCRIPTION.test(prop.description);
    if (stringy && prop.const === undefined && (FREE_FORM.test(name) || said)) {
      out.push({ argument: name, kind: "free-form" });
    }
  }
  return out;
}

/**
 * The over-declarations of a report, one per (tool, hint), each scoped by
 * the tool's untested input modes when `inputs` are given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(overDeclarations([]), []);
 * ```
 */
export function overDeclarations(
  verdicts: readonly Verdict[],
  inputs?: readonly ToolInputs[],
): OverDeclaration[] {
  const groups = new Map<string, Verdict[]>();
  for (const v of verdicts) {
    if (v.reason !== "PERMISSIVE_DECLARATION" || notRun(v)) continue;
    const k = `${v.tool}\u0000${v.hint}`;
    groups.set(k, [...(groups.get(k) ?? []), v]);
  }
  const out: OverDeclaration[] = [];
  for (const vs of groups.values()) {
    const first = vs[0]!;
    const variants = [...new Set(vs.map((v) => v.variant))];
    const safe = vs.every((v) => v.overDeclared && !errored(v));
    if (!safe) continue;
    const o: OverDeclaration = { tool: first.tool, hint: first.hint, variants };
    const input = inputs?.find((i) => i.tool === first.tool);
    if (input !== undefined) {
      o.untested = untestedModes(input.inputSchema, input.argumentSets);
    }
    out.push(o);
  }
  return out;
}

/** Tool-level over-declarations only (advice whose every input mode was exercised). */
export function toolLevel(over: readonly OverDeclaration[]): OverDeclaration[] {
  return over.filter((o) => (o.untested ?? []).length === 0);
}

/** Advice observed on some input modes only. */
export function scopedAdvice(
  over: readonly OverDeclaration[],
): OverDeclaration[] {
  return over.filter((o) => (o.untested ?? []).length > 0);
}

/**
 * Each exercised tool's input schema (from the raw listing) and the
 * argument sets it was called with: what scopes a report's advice.
 */
export function reportToolInputs(
  r: Pick<Report, "protocol" | "observations">,
): ToolInputs[] {
  const contracts = parseToolPages(r.protocol.toolsList).contracts;
  const tools = [...new Set(r.observations.tools.map((t) => t.tool))];
  return tools.map((tool) => ({
    tool,
    inputSchema: contracts.find((c) => c.name === tool)?.raw.inputSchema,
    argumentSets: r.observations.tools.filter((t) => t.tool === tool).map((t) =>
      t.arguments
    ),
  }));
}

/** A report's over-declarations, scoped by its tools' input schemas. */
export function reportOverDeclarations(
  r: Pick<Report, "protocol" | "observations" | "verdicts">,
): OverDeclaration[] {
  return overDeclarations(r.verdicts, reportToolInputs(r));
}

function modeText(m: UntestedMode): string {
  return m.kind === "enum"
    ? `${m.argument} has untested values (${
      (m.values ?? []).map((v) => JSON.stringify(v)).join(", ")
    })`
    : `${m.argument} is free-form (SQL, a command or code): other values untested`;
}

/**
 * `create_entities idempotentHint (argument sets: new, existing_name)`, or
 * for scoped advice `create_table destructiveHint (observed on argument
 * sets: default only; sql is free-form (SQL, a command or code): other
 * values untested)`.
 */
export function overDeclarationText(o: OverDeclaration): string {
  const named = o.variants.filter((v) => v !== null);
  const sets = o.variants.map((v) => v ?? "default").join(", ");
  const untested = o.untested ?? [];
  if (untested.length > 0) {
    return `${o.tool} ${o.hint} (observed on argument sets: ${sets} only; ${
      untested.map(modeText).join("; ")
    })`;
  }
  return `${o.tool} ${o.hint}${
    named.length ? ` (argument sets: ${sets})` : ""
  }`;
}
