/**
 * Provenance a reviewer needs, as short phrases every format shares: the
 * target's pin, the definition's git state, the control sessions' effect
 * on the seed and the errored calls that changed state. Pure. Private to
 * lib/report/.
 *
 * @module
 */
import type { Report } from "./report.ts";
export {
  definitionGitText,
  NOT_RECORDED,
  targetText,
} from "../prepare/provenance.ts";
import {
  deltaCountsText,
  deriveStateEffects,
  type ErroredCall,
  type StateEffects,
} from "./effects.ts";

/**
 * The report's state effects: as recorded, or derived from its evidence
 * for reports written before they were recorded; null when the evidence
 * does not allow it.
 */
export function stateEffectsOf(r: Report): StateEffects | null {
  if (r.stateEffects !== undefined) return r.stateEffects;
  try {
    return deriveStateEffects(r.observations, r.snapshots);
  } catch {
    return null;
  }
}

/** The control sessions' effect on the seed, one phrase (runs with the same delta together). */
export function controlEffectText(e: StateEffects | null): string {
  if (e === null || e.control.length === 0) {
    return "unknown (no control session)";
  }
  const groups = new Map<string, number[]>();
  for (const c of e.control) {
    const text = c.changed === null
      ? "unknown (no seed or no state observed)"
      : c.changed
      ? `changed the seed: ${deltaCountsText(c.delta)} (delta ${c.deltaDigest})`
      : "no change to the seed";
    groups.set(text, [...(groups.get(text) ?? []), c.run]);
  }
  if (groups.size === 1) return [...groups.keys()][0]!;
  return [...groups].map(([t, runs]) => `run ${runs.join(", ")}: ${t}`).join(
    "; ",
  );
}

/** The errored calls grouped by session (one session can hold two errored calls). */
export function erroredSessions(
  e: StateEffects | null,
): { first: ErroredCall; calls: number }[] {
  const out = new Map<string, { first: ErroredCall; calls: number }>();
  for (const c of e?.erroredCalls ?? []) {
    const key = `${c.tool}\u0000${c.variant}\u0000${c.session}\u0000${c.run}`;
    const g = out.get(key);
    if (g) g.calls++;
    else out.set(key, { first: c, calls: 1 });
  }
  return [...out.values()];
}

/** `6 errored call(s) in 6 session(s); state changed in 3 (beyond the control's effect in 3)`. */
export function erroredSummary(e: StateEffects | null): string {
  if (e === null) return "unknown";
  const sessions = erroredSessions(e);
  if (sessions.length === 0) return "none";
  const changed = sessions.filter((s) => s.first.stateChanged === true);
  const beyond = changed.filter((s) => s.first.beyondControl === true);
  const unknown = sessions.filter((s) => s.first.stateChanged === null);
  return `${e.erroredCalls.length} errored call(s) in ${sessions.length} session(s); state changed in ${changed.length}${
    changed.length
      ? ` (beyond the control's own effect in ${beyond.length})`
      : ""
  }${unknown.length ? `, unknown in ${unknown.length}` : ""}`;
}
