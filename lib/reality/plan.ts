/**
 * The reality plan: which tools are called with which arguments, and which
 * are skipped and why. A pure value built from the listing, so a run is data
 * before anything is spawned.
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

/** One tool's place in the plan. */
export interface RealityPlannedTool {
  name: string;
  contract: Contract;
  /** True when `readOnlyHint` is exactly TRUE (MALFORMED and ABSENT are not read-only). */
  readOnly: boolean;
  /** The call to make, or null when skipped. */
  call: {
    arguments: Record<string, unknown>;
    sources: ArgumentSource[];
    shape: "full" | "minimal";
  } | null;
  skip: { reason: SkipReason; message: string } | null;
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
  return contracts.map((contract) => {
    const name = contract.name;
    const readOnly = contract.hints.readOnlyHint.isTrue();
    const base = { name, contract, readOnly };
    if (typeof contract.raw.name !== "string") {
      return {
        ...base,
        call: null,
        skip: { reason: "invalid_tool", message: "tool has no string name" },
      };
    }
    if (seen.has(name)) {
      return {
        ...base,
        call: null,
        skip: {
          reason: "invalid_tool",
          message: "duplicate tool name: calls would be ambiguous",
        },
      };
    }
    seen.add(name);
    if (requiresTask(contract.raw)) {
      // A plain tools/call is refused by such a tool: it would count as a
      // failure of the server, which it is not.
      return {
        ...base,
        call: null,
        skip: {
          reason: "task_required",
          message: TASK_REQUIRED_MESSAGE,
        },
      };
    }
    if (!readOnly && options.includeDestructive !== true) {
      const h = contract.hints.readOnlyHint;
      const state = h.state === "MALFORMED"
        ? `MALFORMED (${h.detail})`
        : h.state;
      return {
        ...base,
        call: null,
        skip: {
          reason: "not_read_only",
          message: `readOnlyHint is ${state}; use --include-destructive`,
        },
      };
    }
    const g = generateArguments(contract.raw.inputSchema, {
      seed,
      label: name,
    });
    if (!g.ok) {
      return {
        ...base,
        call: null,
        skip: {
          reason: "unsatisfiable_schema",
          message: `cannot generate valid arguments${
            g.path ? ` at ${g.path}` : ""
          }: ${g.reason}`,
        },
      };
    }
    return {
      ...base,
      call: { arguments: g.arguments, sources: g.sources, shape: g.shape },
      skip: null,
    };
  });
}
