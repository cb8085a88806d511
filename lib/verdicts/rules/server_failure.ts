/**
 * The server-failure rule: a server that never started, or died in every
 * session that called a tool, is not audited at all. Every verdict is then
 * INCONCLUSIVE:SETUP_FAILED with the cause (rules version 3 on). Pure.
 *
 * @module
 */
import type { TestName } from "../../definition/types.ts";
import type {
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../../history/types.ts";
import type { Verdict } from "../types.ts";
import { CHECKS } from "../battery.ts";
import { declarationReason } from "./declaration.ts";

function died(s: SessionObservation): boolean {
  return s.setupFailure !== null ||
    s.calls.some((c) => c.status === "unknown" && c.ended === "exited");
}

/**
 * Whether the server could not be audited at all, and why: it never
 * started, initialized or listed its tools in any control session, or it
 * started but died (or could not be set up) in every session that called a
 * tool. Such a run judges nothing: every verdict is SETUP_FAILED with this
 * cause. Null when the server ran.
 *
 * @example
 * ```ts ignore
 * serverFailure(defn, tools); // "the server never started: control run 1: ..."
 * ```
 */
export function serverFailure(
  defn: DefinitionObservations,
  tools: readonly ToolObservations[],
): string | null {
  const ctl = defn.control;
  if (ctl.length > 0 && ctl.every((s) => s.setupFailure !== null)) {
    const first = ctl[0]!;
    return `the server never started: control run ${first.run}: ${first.setupFailure}`;
  }
  const calling = tools.flatMap((t) => [...t.once, ...t.twice]);
  if (calling.length > 0 && calling.every(died)) {
    const s = calling[0]!;
    const why = s.setupFailure ??
      s.calls.find((c) => c.status === "unknown")?.message ?? "it died";
    const n = `${calling.length}/${calling.length}`;
    const what = calling.every((x) => x.setupFailure === null)
      ? `the server died in every session (${n})`
      : `no session that called a tool could be completed (${n})`;
    return `${what}: ${s.kind} run ${s.run}: ${why}`;
  }
  return null;
}

/** The verdict of a test when the server itself could not be audited. */
export function serverFailedVerdict(
  test: TestName,
  t: ToolObservations,
  cause: string,
): Verdict {
  const { hint, property } = CHECKS[test];
  const na = declarationReason(test, t);
  const observed = `${property}=unknown`;
  return {
    tool: t.tool,
    variant: t.variant,
    test,
    hint,
    declared: t.hints[hint].state,
    outcome: "INCONCLUSIVE:SETUP_FAILED",
    kind: "INCONCLUSIVE",
    reason: "SETUP_FAILED",
    secondary: na === null ? [] : [na],
    observed,
    overDeclared: false,
    facts: { observed, server_failed: true },
    details: [cause],
    evidence: {},
  };
}
