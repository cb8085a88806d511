/**
 * What sessions did to the seeded state, for a reviewer: the control
 * session's own effect as a delta against the seed (not only the
 * `startupWrites` flag), and, for every call that errored (tool error,
 * protocol error, no answer), whether its session changed the state.
 * Derived from the observations and snapshots alone, so `verity report
 * verify` re-derives it whole. Pure.
 *
 * @module
 */
import type {
  CallObservation,
  DefinitionObservations,
  ToolObservations,
} from "../history/types.ts";
import { computeDelta, type Delta } from "../state/delta.ts";
import type { Snapshot } from "../state/types.ts";
import { canonicalStateJson } from "../state/keys.ts";
import { sha256Hex } from "../evidence/canonical.ts";
import { summarizeDelta } from "../verdicts/engine.ts";

/** One control session's effect on the freshly seeded state. */
export interface ControlEffect {
  run: number;
  /** The seed's digest (what the session started from), or null when unknown. */
  from: string | null;
  /** The state's digest after the session, or null (setup failed). */
  to: string | null;
  /** Whether the state differs from the seed; null when either side is unknown. */
  changed: boolean | null;
  /** What changed, bounded as in verdict evidence (50 per list); null when unknown. */
  delta: Record<string, unknown> | null;
  /** `sha256:` of the whole delta's canonical JSON; null when unknown. */
  deltaDigest: string | null;
}

/** One call that did not end ok, and what its session did to the state. */
export interface ErroredCall {
  tool: string;
  variant: string | null;
  /** `once`, `twice`, `attempt:single_connection` or `attempt:two_process`. */
  session: string;
  /** The run (sequential sessions) or attempt number. */
  run: number;
  /** 1-based position of the call in its session. */
  call: number;
  status: CallObservation["status"];
  message: string | null;
  /** Why the session ended, for a call without an answer ("timeout", "exited", ...). */
  ended?: string;
  /** The seed the session started from. */
  from: string | null;
  /** The state after the session. */
  to: string | null;
  /** Whether the session left the state different from the seed; null when unknown. */
  stateChanged: boolean | null;
  /**
   * Whether the state also differs from the control sessions' state (the
   * server's own start and stop effect removed); null when the control
   * sessions disagree, failed, or the state is unknown.
   */
  beyondControl: boolean | null;
  /** `sha256:` of the delta seed → after (canonical JSON); null when unknown. */
  deltaDigest: string | null;
}

/** The report's `stateEffects`. */
export interface StateEffects {
  control: ControlEffect[];
  erroredCalls: ErroredCall[];
}

/** `sha256:` of a delta's canonical JSON: names one delta across reports. */
export function deltaDigest(d: Delta): string {
  return `sha256:${sha256Hex(canonicalStateJson(d))}`;
}

/**
 * Derive the state effects of a run from its observations and snapshots.
 * Throws `RangeError` when an observation names a snapshot the evidence
 * does not hold.
 *
 * @example
 * ```ts ignore
 * const effects = deriveStateEffects(report.observations, report.snapshots);
 * effects.control[0]?.changed; // false: the server's start left the seed alone
 * ```
 */
export function deriveStateEffects(
  observations: {
    definition: DefinitionObservations;
    tools: readonly ToolObservations[];
  },
  snapshots: Readonly<Record<string, Snapshot>>,
): StateEffects {
  const deltas = new Map<string, Delta>();
  const delta = (a: string, b: string): Delta => {
    const key = `${a}|${b}`;
    let d = deltas.get(key);
    if (d === undefined) {
      const sa = snapshots[a];
      const sb = snapshots[b];
      if (!sa || !sb) {
        throw new RangeError(
          `snapshot ${!sa ? a : b} is missing from the evidence`,
        );
      }
      d = computeDelta(sa, sb);
      deltas.set(key, d);
    }
    return d;
  };
  const def = observations.definition;
  const seed = def.seedDigest;
  const control = def.control.map((c): ControlEffect => {
    if (seed === null || c.stateDigest === null) {
      return {
        run: c.run,
        from: seed,
        to: c.stateDigest,
        changed: null,
        delta: null,
        deltaDigest: null,
      };
    }
    const d = delta(seed, c.stateDigest);
    return {
      run: c.run,
      from: seed,
      to: c.stateDigest,
      changed: !d.empty,
      delta: summarizeDelta(d),
      deltaDigest: deltaDigest(d),
    };
  });
  const ctl = new Set(def.control.map((c) => c.stateDigest));
  const controlState = ctl.size === 1 && !ctl.has(null)
    ? def.control[0]!.stateDigest
    : null;
  const erroredCalls: ErroredCall[] = [];
  const add = (
    t: ToolObservations,
    session: string,
    run: number,
    to: string | null,
    calls: readonly CallObservation[],
  ) => {
    calls.forEach((c, k) => {
      if (c.status === "ok") return;
      const known = seed !== null && to !== null;
      const d = known ? delta(seed, to) : null;
      erroredCalls.push({
        tool: t.tool,
        variant: t.variant,
        session,
        run,
        call: k + 1,
        status: c.status,
        message: c.message,
        ...(c.ended !== undefined ? { ended: c.ended } : {}),
        from: seed,
        to,
        stateChanged: d === null ? null : !d.empty,
        beyondControl: to === null || controlState === null
          ? null
          : to !== controlState,
        deltaDigest: d === null ? null : deltaDigest(d),
      });
    });
  };
  for (const t of observations.tools) {
    for (const kind of ["once", "twice"] as const) {
      for (const s of t[kind] ?? []) {
        add(t, kind, s.run, s.stateDigest, s.calls);
      }
    }
    for (const a of t.concurrent ?? []) {
      add(t, `attempt:${a.mode}`, a.attempt, a.stateDigest, a.calls);
    }
  }
  return { control, erroredCalls };
}

/** Where an errored call happened, for one line of text. */
export function erroredCallLabel(e: ErroredCall): string {
  const tool = e.variant ? `${e.tool}[${e.variant}]` : e.tool;
  const where = e.session.startsWith("attempt:")
    ? `${e.session.slice("attempt:".length)} attempt ${e.run}`
    : `${e.session} run ${e.run}`;
  return `${tool} ${where} call ${e.call}`;
}

/**
 * One line on whether an errored call's session changed the state, e.g.
 * `state changed vs the seed, beyond the control session's own effect
 * (delta sha256:…)`.
 */
export function erroredCallStateText(e: ErroredCall): string {
  if (e.stateChanged === null) return "state unknown (no snapshot)";
  if (!e.stateChanged) return "state unchanged";
  const beyond = e.beyondControl === null
    ? ""
    : e.beyondControl
    ? ", beyond the control session's own effect"
    : ", as the control session changes it (the server's start or stop)";
  return `state changed vs the seed${beyond} (delta ${e.deltaDigest})`;
}

/** Counts of a summarized delta per category: `business +1 ~2 -0`. */
export function deltaCountsText(delta: Record<string, unknown> | null): string {
  if (delta === null) return "unknown";
  const parts: string[] = [];
  for (const c of ["business", "append_only", "unclassified"]) {
    const cd = delta[c] as Record<string, unknown[] | boolean> | undefined;
    if (cd === undefined) continue;
    const n = (k: string) =>
      Array.isArray(cd[k]) ? (cd[k] as unknown[]).length : 0;
    const structure = n("structure");
    parts.push(
      `${c.replace("_", "-")} +${n("added")} ~${n("changed")} -${n("removed")}${
        structure ? ` tables ${structure}` : ""
      }${cd.truncated === true ? " (truncated)" : ""}${
        cd.lossy === true ? " lossy" : ""
      }`,
    );
  }
  return parts.length ? parts.join("; ") : "no change";
}
