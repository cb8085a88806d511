/**
 * Group what the runner observed into the per-tool history the verdict
 * engine reads: each planned session's observation goes to its tool, by the
 * plan, never by the order sessions happened to finish in. Pure.
 *
 * @module
 */
import type {
  AttemptObservation,
  DeclaredHint,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import type { HintName } from "../contracts/contracts.ts";
import type { PlannedSession, PlannedTool } from "./plan.ts";
import { TASK_REQUIRED_MESSAGE } from "../contracts/task_support.ts";

/** Why two-process attempts were skipped for a server that writes on start or stop. */
export const STARTUP_WRITES_SKIP =
  "the server changes state on start or stop (control sessions differ from the seed)";

/** Everything {@linkcode groupObservations} groups. */
export interface GroupInput {
  /** The tools of the run, in report order. */
  tools: readonly PlannedTool[];
  /** The once and twice sessions as planned, and each one's observation (same index). */
  sequential: readonly {
    plan: PlannedSession;
    observation: SessionObservation;
  }[];
  /** The concurrent attempts as planned, and each one's observation. */
  attempts: readonly {
    plan: PlannedSession;
    observation: AttemptObservation;
  }[];
  /** Indexes of the tools that got concurrent attempts. */
  concurrent: ReadonlySet<number>;
  /** Each tool's declared hints. */
  hints: (name: string) => Record<HintName, DeclaredHint>;
  /** Whether control sessions showed state written on start or stop. */
  startupWrites: boolean;
  /**
   * Indexes of the tools not called because they need the task protocol.
   * @default {none}
   */
  taskRequired?: ReadonlySet<number>;
}

/**
 * One {@linkcode ToolObservations} per tool: its once, twice, probed and
 * concurrent observations in plan order, its hints, and why two-process attempts were
 * skipped. A tool without concurrent attempts has `concurrent: null`.
 *
 * @example
 * ```ts ignore
 * const tools = groupObservations({ tools, sequential, attempts, concurrent, hints, startupWrites: false });
 * ```
 */
export function groupObservations(input: GroupInput): ToolObservations[] {
  return input.tools.map((t) => {
    const ofKind = (kind: "once" | "twice" | "probed") =>
      input.sequential.filter(({ plan }) =>
        plan.kind === kind && plan.tool === t.index
      ).map(({ observation }) => observation);
    const mine = input.attempts.filter(({ plan }) =>
      plan.kind === "attempt" && plan.tool === t.index
    ).map(({ observation }) => observation);
    const gets = input.concurrent.has(t.index);
    return {
      tool: t.name,
      variant: t.variant,
      arguments: t.arguments,
      hints: input.hints(t.name),
      once: ofKind("once"),
      twice: ofKind("twice"),
      ...(t.probe === null ? {} : { probe: t.probe, probed: ofKind("probed") }),
      ...(t.learned ? { learned: t.learned } : {}),
      concurrent: gets ? mine : null,
      twoProcessSkipped: gets && input.startupWrites
        ? STARTUP_WRITES_SKIP
        : null,
      ...(input.taskRequired?.has(t.index)
        ? {
          skipped: {
            reason: "task_required" as const,
            message: TASK_REQUIRED_MESSAGE,
          },
        }
        : {}),
    };
  });
}
