/**
 * Observed records from live calls: the observed side of
 * mcp-evidence-validator's declared-vs-observed check, made from a run's
 * evidence. Each tool call of the once and twice sessions becomes one
 * observation: the tool, the arguments as sent and their shape, the
 * contract hash of the tool as the server listed it in that run (under the
 * chosen recipe), how the call ended, and the privilege use the sandbox saw
 * while it was in flight. `verity ledger validate` reads the file as it reads
 * the validator's own observed files. Pure.
 *
 * @module
 */
import type { SessionRecord, ToolObservations } from "../history/types.ts";
import type { PrivilegeUse } from "../sandbox/privilege.ts";
import { buildManifest } from "../evidence/manifest.ts";
import type { Recipe } from "../evidence/recipes.ts";
import { argumentShape } from "../evidence/checks.ts";

/** The `format` value of an observed-records file. */
export const OBSERVED_FORMAT = "verity-observed";

/** One observed tool call. */
export interface ObservedCall {
  index: number;
  tool: string;
  args: Record<string, unknown>;
  /** Each argument's JSON type (`string`, `integer`, `number`, `boolean`, `null`, `array`, `object`). */
  argument_shape: Record<string, string>;
  /** The listed tool's contract under `contract_recipe`; null when the listing did not carry it. */
  contract_hash: string | null;
  contract_recipe: Recipe;
  /** `ok`, `tool_error`, `protocol_error` or `unknown` (no answer). */
  outcome: string;
  /** The session it was made in (the report's session id), and which call of it. */
  session: string;
  call: number;
  variant: string | null;
  /** What the sandbox saw while the call was in flight; null in reports written before it was recorded. */
  privilege: PrivilegeUse | null;
}

/** An observed-records file. */
export interface ObservedRecords {
  format: typeof OBSERVED_FORMAT;
  version: 1;
  server: string | null;
  contract_recipe: Recipe;
  run_id: string;
  definition: string;
  backend: string;
  observations: ObservedCall[];
}

/** What the records are made from: the parts of a run report they read. */
export interface ObservedSource {
  runId: string;
  definition: string;
  backend: string;
  protocol: { toolsList: string[]; serverInfo: unknown };
  tools: readonly ToolObservations[];
  sessions: readonly SessionRecord[];
}

/** One call to record, before its contract hash is looked up. */
export type CallToRecord = Omit<
  ObservedCall,
  "index" | "argument_shape" | "contract_hash" | "contract_recipe"
>;

/** What the file says about where the calls come from. */
export type ObservedMeta = Pick<
  ObservedSource,
  "runId" | "definition" | "backend"
>;

/**
 * Observed records for calls, each bound to the contract hash of its tool
 * in the listing pages (`tools/list` response texts) under `recipe`.
 *
 * @example
 * ```ts ignore
 * const doc = recordCalls(pages, serverInfo, calls, "3", { runId, definition, backend });
 * ```
 */
export function recordCalls(
  pageTexts: readonly string[],
  serverInfo: unknown,
  calls: readonly CallToRecord[],
  recipe: Recipe,
  meta: ObservedMeta,
): ObservedRecords {
  const manifest = buildManifest({
    pageTexts,
    serverInfo,
    protocolVersion: null,
    command: [],
    capturedAt: "",
    recipe,
  });
  const hashes = new Map(manifest.tools.map((t) => [t.name, t.contract_hash]));
  return {
    format: OBSERVED_FORMAT,
    version: 1,
    server: manifest.server.name,
    contract_recipe: recipe,
    run_id: meta.runId,
    definition: meta.definition,
    backend: meta.backend,
    observations: calls.map((c, i) => ({
      index: i + 1,
      tool: c.tool,
      args: c.args,
      argument_shape: argumentShape(c.args),
      contract_hash: hashes.get(c.tool) ?? null,
      contract_recipe: recipe,
      outcome: c.outcome,
      session: c.session,
      call: c.call,
      variant: c.variant,
      privilege: c.privilege,
    })),
  };
}

/**
 * Observed records for every call of a run's once and twice sessions, in
 * tool order, then once before twice, then by run.
 *
 * @example
 * ```ts ignore
 * const doc = observedRecords({ runId, definition: "memory", backend: "deno",
 *   protocol: report.protocol, tools: report.observations.tools,
 *   sessions: report.sessions }, "3");
 * ```
 */
export function observedRecords(
  src: ObservedSource,
  recipe: Recipe,
): ObservedRecords {
  const calls: CallToRecord[] = [];
  for (const t of src.tools) {
    const label = t.variant ? `${t.tool}[${t.variant}]` : t.tool;
    for (const s of [...t.once, ...t.twice]) {
      const record = src.sessions.find((r) =>
        r.kind === s.kind && r.tool === label && r.run === s.run
      );
      const args = record?.arguments ?? t.arguments;
      s.calls.forEach((c, k) => {
        calls.push({
          tool: t.tool,
          args,
          outcome: c.status,
          session: record?.id ?? `${s.kind}-${s.run}`,
          call: k + 1,
          variant: t.variant,
          privilege: record?.privilege?.[k] ?? null,
        });
      });
    }
  }
  return recordCalls(
    src.protocol.toolsList,
    src.protocol.serverInfo,
    calls,
    recipe,
    src,
  );
}
