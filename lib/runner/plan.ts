/**
 * The run plan: pure data built from a definition and the options. One
 * runner executes it; nothing here spawns, reads or waits.
 *
 * @module
 */
import type { HintState } from "../contracts/contracts.ts";
import type { LearnedAim } from "../definition/types.ts";
import { SelectionError } from "../errors.ts";

/** A tool selected for the battery (a tool and one of its argument variants). */
export interface PlannedTool {
  /** Index into the definition's tools. */
  index: number;
  name: string;
  variant: string | null;
  arguments: Record<string, unknown>;
  /** The read called around the tool in its probed sessions, or null. */
  probe: { name: string; arguments: Record<string, unknown> } | null;
  /** `ToolDef.learned`. */
  learned?: LearnedAim;
}

/** One unit of work for the runner. */
export type PlannedSession =
  | { id: string; kind: "control"; run: number }
  | {
    id: string;
    kind: "once" | "twice" | "probed";
    run: number;
    tool: number;
  }
  | {
    id: string;
    kind: "attempt";
    mode: "single_connection" | "two_process";
    attempt: number;
    tool: number;
  };

/** Parse `--tool` selectors (`name` or `name[variant]`) against the definition's tools. */
export function selectTools(
  tools: readonly (
    & Omit<PlannedTool, "index" | "probe">
    & { probe?: PlannedTool["probe"] }
  )[],
  selectors: readonly string[],
): PlannedTool[] {
  const all = tools.map((t, index) => ({
    index,
    name: t.name,
    variant: t.variant,
    arguments: t.arguments,
    probe: t.probe ?? null,
    ...(t.learned ? { learned: t.learned } : {}),
  }));
  if (selectors.length === 0) return all;
  const picked = new Set<number>();
  for (const sel of selectors) {
    const m = /^([^[\]]+)(?:\[([^\]]+)\])?$/.exec(sel);
    if (!m) {
      throw new SelectionError(
        `--tool ${JSON.stringify(sel)}: expected NAME or NAME[variant]`,
      );
    }
    const [, name, variant] = m;
    const hits = all.filter((t) =>
      t.name === name && (variant === undefined || t.variant === variant)
    );
    if (hits.length === 0) {
      throw new SelectionError(
        `--tool ${JSON.stringify(sel)}: no such tool in the definition (have: ${
          [
            ...new Set(
              all.map((t) => t.variant ? `${t.name}[${t.variant}]` : t.name),
            ),
          ].join(", ")
        })`,
      );
    }
    for (const h of hits) picked.add(h.index);
  }
  return all.filter((t) => picked.has(t.index));
}

/** Whether a tool gets concurrent attempts: it claims idempotence (or observation was asked for). */
export function wantsConcurrent(
  hints: { readOnlyHint: HintState; idempotentHint: HintState },
  observeConcurrent: boolean,
): boolean {
  return observeConcurrent ||
    (hints.idempotentHint === "TRUE" && hints.readOnlyHint !== "TRUE");
}

/** The control sessions (shared by every tool). */
export function planControl(runs: number): PlannedSession[] {
  return Array.from({ length: runs }, (_, i) => ({
    id: `control-${i + 1}`,
    kind: "control" as const,
    run: i + 1,
  }));
}

/**
 * Once and twice sessions for each tool, and probed sessions (probe, probe,
 * the tool, probe) for a tool with a probe.
 */
export function planSequential(
  tools: readonly PlannedTool[],
  runs: number,
): PlannedSession[] {
  const out: PlannedSession[] = [];
  for (const t of tools) {
    const kinds = t.probe === null
      ? ["once", "twice"] as const
      : ["once", "twice", "probed"] as const;
    for (const kind of kinds) {
      for (let r = 1; r <= runs; r++) {
        out.push({
          id: `${kind}-${t.index}-${r}`,
          kind,
          run: r,
          tool: t.index,
        });
      }
    }
  }
  return out;
}

/** Concurrent attempts for the tools that get them. */
export function planConcurrent(
  tools: readonly PlannedTool[],
  /** Attempts per mode; no two-process ones when the server writes state on start or stop. */
  opts: { concurrentAttempts: number; skipTwoProcess: boolean },
): PlannedSession[] {
  const out: PlannedSession[] = [];
  const modes = opts.skipTwoProcess
    ? ["single_connection"] as const
    : ["single_connection", "two_process"] as const;
  for (const t of tools) {
    for (const mode of modes) {
      for (let a = 1; a <= opts.concurrentAttempts; a++) {
        out.push({
          id: `attempt-${t.index}-${mode}-${a}`,
          kind: "attempt",
          mode,
          attempt: a,
          tool: t.index,
        });
      }
    }
  }
  return out;
}
