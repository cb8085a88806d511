/**
 * The reality plan: which tools are called with which arguments, and which
 * are skipped and why. A pure value built from the listing (and, for a
 * definition, its `[[tools]]` argument sets), so a run is data before
 * anything is spawned.
 *
 * A tool the definition gives arguments for is called with each of its
 * argument sets, in definition order; only a tool it gives none gets
 * generated arguments.
 *
 * @module
 */
import {
  requiresTask,
  TASK_REQUIRED_MESSAGE,
} from "../contracts/task_support.ts";
import type { Contract } from "../contracts/contracts.ts";
import { type ArgumentSource, generateArguments } from "./generate.ts";
import { DEFAULT_SEED } from "./prng.ts";

/** Why a tool is not called. */
export type SkipReason =
  | "not_read_only"
  | "unsatisfiable_schema"
  | "invalid_tool"
  | "task_required";

/**
 * Where a call's arguments came from: a `[[tools]]` entry of the definition
 * (its `variant`, null when it names none), or generated from the tool's
 * `inputSchema`.
 */
export type ArgumentsFrom =
  | { kind: "definition"; variant: string | null }
  | { kind: "generated" };

/** An argument set a definition gives for a tool (a `[[tools]]` entry). */
export interface DefinitionArguments {
  tool: string;
  variant: string | null;
  /** As written: placeholders such as `{state}` are resolved per session, when called. */
  arguments: Record<string, unknown>;
}

/** One call to make. */
export interface RealityPlannedCall {
  from: ArgumentsFrom;
  /** Generated, or the definition's as written (placeholders kept). */
  arguments: Record<string, unknown>;
  /** Generated arguments only: where each value came from. */
  sources?: ArgumentSource[];
  /** Generated arguments only: "full" or "minimal". */
  shape?: "full" | "minimal";
}

/** One tool's place in the plan. */
export interface RealityPlannedTool {
  name: string;
  contract: Contract;
  /** True when `readOnlyHint` is exactly TRUE (MALFORMED and ABSENT are not read-only). */
  readOnly: boolean;
  /** The calls to make, in order (at least one), or empty when skipped. */
  calls: RealityPlannedCall[];
  skip: { reason: SkipReason; message: string } | null;
}

/** The label of a call, as reports and session names show it: `tool` or `tool[variant]`. */
export function callLabel(tool: string, from: ArgumentsFrom): string {
  return from.kind === "definition" && from.variant !== null
    ? `${tool}[${from.variant}]`
    : tool;
}

/** Options for {@linkcode planReality}. */
export interface RealityPlanOptions {
  /**
   * Seed for argument generation.
   * @default {DEFAULT_SEED}
   */
  seed?: number;
  /**
   * Call tools that are not declared read-only too.
   * @default {false}
   */
  includeDestructive?: boolean;
  /**
   * The definition's argument sets (`[[tools]]`): a tool with any is
   * called with each of them instead of generated arguments.
   * @default {[]}
   */
  argumentSets?: readonly DefinitionArguments[];
}

/**
 * Plan a reality check over listed contracts, in listing order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseToolPages } from "../contracts/contracts.ts";
 *
 * const { contracts } = parseToolPages(['{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}']);
 * // readOnlyHint is ABSENT, so the tool is not called
 * assert.equal(planReality(contracts)[0]?.skip?.reason, "not_read_only");
 * ```
 */
export function planReality(
  contracts: readonly Contract[],
  options: RealityPlanOptions = {},
): RealityPlannedTool[] {
  const seed = options.seed ?? DEFAULT_SEED;
  const seen = new Set<string>();
  const given = new Map<string, DefinitionArguments[]>();
  for (const a of options.argumentSets ?? []) {
    given.set(a.tool, [...(given.get(a.tool) ?? []), a]);
  }
  return contracts.map((contract) => {
    const name = contract.name;
    const readOnly = contract.hints.readOnlyHint.isTrue();
    const base = { name, contract, readOnly, calls: [] };
    const skipped = (reason: SkipReason, message: string) => ({
      ...base,
      skip: { reason, message },
    });
    if (typeof contract.raw.name !== "string") {
      return skipped("invalid_tool", "tool has no string name");
    }
    if (seen.has(name)) {
      return skipped(
        "invalid_tool",
        "duplicate tool name: calls would be ambiguous",
      );
    }
    seen.add(name);
    if (requiresTask(contract.raw)) {
      // A plain tools/call is refused by such a tool: it would count as a
      // failure of the server, which it is not.
      return skipped("task_required", TASK_REQUIRED_MESSAGE);
    }
    if (!readOnly && options.includeDestructive !== true) {
      const h = contract.hints.readOnlyHint;
      const state = h.state === "MALFORMED"
        ? `MALFORMED (${h.detail})`
        : h.state;
      return skipped(
        "not_read_only",
        `readOnlyHint is ${state}; use --include-destructive`,
      );
    }
    const sets = given.get(name) ?? [];
    if (sets.length > 0) {
      return {
        ...base,
        calls: sets.map((a) => ({
          from: { kind: "definition", variant: a.variant },
          arguments: a.arguments,
        })),
        skip: null,
      };
    }
    const g = generateArguments(contract.raw.inputSchema, {
      seed,
      label: name,
    });
    if (!g.ok) {
      return skipped(
        "unsatisfiable_schema",
        `cannot generate valid arguments${
          g.path ? ` at ${g.path}` : ""
        }: ${g.reason}`,
      );
    }
    return {
      ...base,
      calls: [{
        from: { kind: "generated" },
        arguments: g.arguments,
        sources: g.sources,
        shape: g.shape,
      }],
      skip: null,
    };
  });
}
