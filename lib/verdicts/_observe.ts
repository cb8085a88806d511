/**
 * What the named checks share: the observation a check produces, the
 * delta comparator over the stored snapshots, and the small rules every
 * check applies the same way (state gate, per-run decision,
 * nondeterminism). Private to `lib/verdicts/`. Pure.
 *
 * @module
 */
import {
  excludeFromDelta,
  type Exclusion,
  filterCategory,
} from "../state/exclude.ts";
import {
  type CategoryDelta,
  computeDelta,
  type Delta,
} from "../state/delta.ts";
import {
  changedPaths,
  type Changeset,
  changesetDelta,
  mergeDelta,
} from "../state/changeset.ts";
import type { Snapshot } from "../state/types.ts";
import type { Reason } from "./types.ts";
import type {
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";

/** Normalized snapshots by digest: the state evidence every comparison reads. */
export type SnapshotStore = Readonly<Record<string, Snapshot>>;

export type Behaviour = "holds" | "fails" | "unknown";
export type Cat = "business" | "append_only" | "unclassified";

/** What observing one test produced, before the declaration is considered. */
export interface Observation {
  behaviour: Behaviour;
  /** Reasons that stop a PASS (first is primary when behaviour is unknown). */
  blockers: Reason[];
  details: string[];
  facts: Record<string, string | boolean | number>;
  evidence: Record<string, unknown>;
  /**
   * Why a `fails` behaviour is a VIOLATION when it is not a state change
   * (`ATTEMPTED_WRITE`: the sandbox refused a write the call attempted).
   */
  violationReason?: Reason;
}

/** Compact, bounded form of a delta for a report. */
export function summarizeDelta(d: Delta, limit = 50): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of ["business", "append_only", "unclassified"] as const) {
    const cd = d[c];
    if (cd.empty) continue;
    out[c] = {
      lossy: cd.lossy,
      added: cd.added.slice(0, limit),
      removed: cd.removed.slice(0, limit),
      changed: cd.changed.slice(0, limit),
      // Only when present: reports written before tables had a structure
      // re-derive byte for byte.
      ...(cd.structure.length
        ? { structure: cd.structure.slice(0, limit) }
        : {}),
      ...(cd.added.length + cd.removed.length + cd.changed.length > 3 * limit
        ? { truncated: true }
        : {}),
    };
  }
  return out;
}

/** The columns (region.field) a delta touches, for NONDETERMINISTIC evidence. */
export function deltaColumns(d: Delta, cats: readonly Cat[]): string[] {
  const cols = new Set<string>();
  for (const c of cats) {
    const cd = d[c];
    for (const ch of cd.changed) {
      const region = ch.region.split(":").slice(1).join(":") || ch.region;
      for (const f of ch.fields) cols.add(`${region}.${f.field}`);
    }
    for (const r of [...cd.added, ...cd.removed, ...cd.structure]) {
      const region = r.region.split(":").slice(1).join(":") || r.region;
      cols.add(`${region}.*`);
    }
  }
  return [...cols].sort();
}

/** A session or attempt as a comparison reads it: its declared state and its changeset (by digest). */
export interface Observed {
  stateDigest: string | null;
  /** Null or absent: no changeset (not observed, or evidence before it). */
  changeset?: string | null;
}

/**
 * Deltas between stored states, without the changes in regions the
 * definition excludes from judgment: the declared state's, and the
 * changesets' outside it (paths the control sessions change left out).
 */
export class Comparator {
  #snaps: SnapshotStore;
  #excluded: readonly Exclusion[];
  #changesets: Readonly<Record<string, Changeset>>;
  #control: readonly Observed[];
  #controlPaths: ReadonlySet<string> | null = null;
  constructor(
    snaps: SnapshotStore,
    excluded: readonly Exclusion[] = [],
    changesets: Readonly<Record<string, Changeset>> = {},
    control: readonly Observed[] = [],
  ) {
    this.#snaps = snaps;
    this.#excluded = excluded;
    this.#changesets = changesets;
    this.#control = control;
  }
  /** A session's changeset, or null when it has none. */
  changeset(s: Observed): Changeset | null {
    if (s.changeset === undefined || s.changeset === null) return null;
    const c = this.#changesets[s.changeset];
    if (!c) {
      throw new RangeError(
        `changeset ${s.changeset} is missing from the evidence`,
      );
    }
    return c;
  }
  /** The paths a session changed outside its state directory that no control session changes. */
  outside(s: Observed): string[] {
    this.#controlPaths ??= changedPaths(
      this.#control.map((c) => this.changeset(c)),
    );
    const control = this.#controlPaths;
    return (this.changeset(s)?.changes ?? []).map((c) => c.path).filter((p) =>
      !control.has(p)
    );
  }
  delta(a: Observed, b: Observed): Delta {
    const sa = this.#snaps[a.stateDigest!];
    const sb = this.#snaps[b.stateDigest!];
    if (!sa || !sb) {
      throw new RangeError(
        `snapshot ${
          !sa ? a.stateDigest : b.stateDigest
        } is missing from the evidence`,
      );
    }
    const d = excludeFromDelta(computeDelta(sa, sb), this.#excluded);
    const ca = this.changeset(a);
    const cb = this.changeset(b);
    if (ca === null && cb === null) return d;
    this.outside(a);
    return mergeDelta(d, changesetDelta(ca, cb, this.#controlPaths!));
  }
}

/**
 * Every region a set of deltas touches, with its class and the first
 * records (keys) that changed: the evidence of a read_only verdict (which
 * table or path changed, and how it is classified).
 */
export function changedRegions(
  deltas: readonly Delta[],
): { region: string; category: Cat; keys: string[] }[] {
  const seen = new Map<string, { category: Cat; keys: Set<string> }>();
  for (const d of deltas) {
    for (const c of ["business", "append_only", "unclassified"] as const) {
      const cd = d[c];
      for (
        const r of [...cd.added, ...cd.removed, ...cd.changed, ...cd.structure]
      ) {
        const at = seen.get(r.region) ??
          { category: c, keys: new Set<string>() };
        seen.set(r.region, at);
        const key = (r as { key?: string }).key;
        if (key !== undefined && at.keys.size < 3) at.keys.add(key);
      }
    }
  }
  return [...seen].map(([region, { category, keys }]) => ({
    region,
    category,
    keys: [...keys].sort(),
  })).sort((a, b) => a.region < b.region ? -1 : a.region > b.region ? 1 : 0);
}

/** `state.db:mcp_insights`, or `.:. (["cache/count.json"])` with the first keys. */
export function regionText(
  r: { region: string; keys: readonly string[] },
): string {
  return r.keys.length ? `${r.region} (${r.keys.join(", ")})` : r.region;
}

/** SQLite's own regions: header fields and schema objects, internal tables. */
const ENGINE_OWN = /:sqlite_(?:schema|sequence|stat[1-4])$/;

/**
 * The unclassified changes the destructive and idempotence tests weigh:
 * from verdict rules 7, without SQLite's own state (`sqlite_schema`,
 * `sqlite_sequence`, `sqlite_stat*`), bookkeeping the engine derives from
 * the tables (an AUTOINCREMENT counter moves with every insert). A
 * read-only claim still counts every one of them.
 */
export function userUnclassified(d: Delta, rules: number): CategoryDelta {
  if (rules < 7) return d.unclassified;
  return filterCategory(d.unclassified, (region) => ENGINE_OWN.test(region));
}

export function any(d: Delta, cats: readonly Cat[]): boolean {
  return cats.some((c) => !d[c].empty);
}

export function lossy(d: Delta, cats: readonly Cat[]): boolean {
  return cats.some((c) => d[c].lossy);
}

export function callFailed(s: SessionObservation, from = 0): boolean {
  return s.calls.slice(from).some((c) => c.status !== "ok");
}

export function callMessages(s: SessionObservation): string[] {
  return s.calls.filter((c) => c.status !== "ok").map((c) =>
    `${s.kind} run ${s.run}: ${c.status}${c.message ? `: ${c.message}` : ""}`
  );
}

export function setupProblem(sessions: SessionObservation[]): string | null {
  for (const s of sessions) {
    if (s.setupFailure !== null || s.stateDigest === null) {
      return `${s.kind} run ${s.run}: ${s.setupFailure ?? "no state observed"}`;
    }
  }
  return null;
}

/** Check that sessions of one kind agree on the given categories; return differing columns. */
export function disagreement(
  cmp: Comparator,
  sessions: SessionObservation[],
  cats: readonly Cat[],
): string[] {
  const first = sessions[0];
  if (!first?.stateDigest) return [];
  const cols = new Set<string>();
  for (const s of sessions.slice(1)) {
    if (!s.stateDigest) continue;
    if (
      s.stateDigest === first.stateDigest && s.changeset === first.changeset
    ) {
      continue;
    }
    const d = cmp.delta(first, s);
    if (any(d, cats)) { for (const c of deltaColumns(d, cats)) cols.add(c); }
  }
  return [...cols].sort();
}

export function base(): Observation {
  return {
    behaviour: "unknown",
    blockers: [],
    details: [],
    facts: {},
    evidence: {},
  };
}

export function stateGate(
  defn: DefinitionObservations,
  sessions: SessionObservation[],
): Observation | null {
  const o = base();
  if (!defn.reset.verified) {
    o.blockers.push("RESET_UNVERIFIED");
    o.details.push(
      `reset not verified: ${defn.reset.problem ?? "two resets differ"}`,
    );
    return o;
  }
  const setup = setupProblem(sessions);
  if (setup) {
    o.blockers.push("SETUP_FAILED");
    o.details.push(setup);
    return o;
  }
  return null;
}

/** Sessions that must agree did not: name the differing columns. */
export function markNondeterministic(
  o: Observation,
  cols: string[],
  what: string,
): void {
  o.behaviour = "unknown";
  o.blockers.unshift("NONDETERMINISTIC");
  o.facts.nondeterministic_columns = cols.join(",");
  o.details.push(`${what} ${cols.join(", ")}`);
}

/**
 * Decide a per-run comparison: every run shows the effect → fails; none →
 * holds (unless only unclassified state moved); mixed → NONDETERMINISTIC.
 * A run whose call failed and which changed nothing is CALL_ERROR.
 */
export function decideRuns(
  o: Observation,
  runs: {
    run: number;
    effect: boolean;
    unclassifiedOnly: boolean;
    failed: boolean;
    messages: string[];
  }[],
  what: string,
): void {
  const errored = runs.filter((r) =>
    r.failed && !r.effect && !r.unclassifiedOnly
  );
  const effects = runs.filter((r) => r.effect).length;
  o.facts.call_errored = runs.some((r) => r.failed);
  if (runs.some((r) => r.failed)) {
    o.details.push(...runs.flatMap((r) => r.messages));
  }
  if (effects === runs.length && runs.length > 0) {
    o.behaviour = "fails";
    o.details.push(`${what} in ${effects}/${runs.length} runs`);
    if (runs.some((r) => r.failed)) {
      o.details.push("judged on state: the failing call still had an effect");
    }
    return;
  }
  if (errored.length > 0) {
    o.behaviour = "unknown";
    o.blockers.unshift("CALL_ERROR");
    o.details.push(
      `the call failed with no state change in ${errored.length}/${runs.length} runs`,
    );
    return;
  }
  if (effects > 0) {
    o.behaviour = "unknown";
    o.blockers.unshift("NONDETERMINISTIC");
    o.details.push(
      `${what} in ${effects}/${runs.length} runs only (runs ${
        runs.filter((r) => r.effect).map((r) => r.run).join(", ")
      })`,
    );
    return;
  }
  if (runs.some((r) => r.unclassifiedOnly)) {
    o.behaviour = "unknown";
    o.blockers.unshift("UNCLASSIFIED_STATE");
    o.details.push(
      "the only change is in state the definition did not classify",
    );
    return;
  }
  o.behaviour = "holds";
}

export function controlReference(
  cmp: Comparator,
  defn: DefinitionObservations,
  o: Observation,
): SessionObservation | null {
  const cols = disagreement(cmp, defn.control, [
    "business",
    "append_only",
    "unclassified",
  ]);
  if (cols.length > 0) {
    markNondeterministic(o, cols, "control sessions disagree on");
    return null;
  }
  const ref = defn.control[0];
  return ref?.stateDigest ? ref : null;
}

/** The comparison read_only and destructive share: control state vs each once state. */
export function controlVsOnce(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): { o: Observation; perRun: { s: SessionObservation; d: Delta }[] | null } {
  const gate = stateGate(defn, [...defn.control, ...t.once]);
  if (gate) return { o: gate, perRun: null };
  const o = base();
  const ref = controlReference(cmp, defn, o);
  if (ref === null) return { o, perRun: null };
  const perRun = t.once.map((s) => ({ s, d: cmp.delta(ref, s) }));
  o.facts.business_changed = perRun.some(({ d }) => !d.business.empty);
  o.facts.append_only_changed = perRun.some(({ d }) => !d.append_only.empty);
  o.evidence.control_vs_once = perRun.map(({ s, d }) => ({
    run: s.run,
    from: ref.stateDigest,
    to: s.stateDigest,
    delta: summarizeDelta(d),
  }));
  return { o, perRun };
}

export function onceReference(
  cmp: Comparator,
  t: ToolObservations,
  o: Observation,
): SessionObservation | null {
  const cols = disagreement(cmp, t.once, ["business"]);
  if (cols.length > 0) {
    markNondeterministic(
      o,
      cols,
      "business state after one call differs between runs in",
    );
    return null;
  }
  const ref = t.once[0];
  return ref?.stateDigest ? ref : null;
}

export function networkValues(s: SessionObservation): string[] {
  return (s.network ?? []).filter((p) => p.permission === "net").map((p) =>
    p.value ?? ""
  );
}

/**
 * The values of the refused checks of one kind in a session (deno backend),
 * null when the backend cannot see attempts, undefined when the evidence
 * predates their recording (verdict rules version 5).
 */
export function refusedValues(
  s: SessionObservation,
  permission: string,
): string[] | null | undefined {
  if (s.attempts === undefined || s.attempts === null) return s.attempts;
  return s.attempts.filter((p) => p.permission === permission).map((p) =>
    p.value ?? "*"
  );
}

/**
 * Refused checks of one kind that the once sessions made and no control
 * session did, per run: what the call attempted, not the server's start or
 * stop. Null when a backend could not see attempts; undefined when the
 * evidence does not record them (reports before rules version 5).
 */
export function refusedBeyondControl(
  defn: DefinitionObservations,
  once: readonly SessionObservation[],
  permission: string,
): { run: number; values: string[] }[] | null | undefined {
  const sessions = [...defn.control, ...once];
  if (sessions.some((s) => s.attempts === undefined)) return undefined;
  if (sessions.some((s) => s.attempts === null)) return null;
  const baseline = new Set(
    defn.control.flatMap((c) => refusedValues(c, permission) ?? []),
  );
  return once.map((s) => ({
    run: s.run,
    values: [...new Set(refusedValues(s, permission) ?? [])].filter((x) =>
      !baseline.has(x)
    ).sort(),
  }));
}

/** Whether these sessions changed no observed state in any run. */
export function leftStateAlone(
  cmp: Comparator,
  defn: DefinitionObservations,
  sessions: readonly SessionObservation[],
): boolean {
  const ref = defn.control[0];
  if (!ref?.stateDigest || sessions.length === 0) return false;
  return sessions.every((s) =>
    s.stateDigest !== null &&
    ((s.stateDigest === ref.stateDigest && s.changeset === ref.changeset) ||
      !any(cmp.delta(ref, s), [
        "business",
        "append_only",
        "unclassified",
      ]))
  );
}
