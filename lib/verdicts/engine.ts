/**
 * The verdict engine: pure functions from observations to verdicts, each
 * with its evidence. The rules are written out in docs/methodology.md.
 *
 * @module
 */
import type { HintName, HintState } from "../contracts/contracts.ts";
import type { Snapshot } from "../state/types.ts";
import { computeDelta, type Delta } from "../state/delta.ts";
import type { OutcomeKind, Reason } from "./types.ts";
import type {
  DefinitionObservations,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import type { Verdict } from "./types.ts";
import { TEST_NAMES, type TestName } from "../definition/types.ts";
import { processMemoryEvidence, responsePreview } from "./process_memory.ts";

/**
 * The version of the verdict rules. It changes whenever the same evidence
 * would give a different verdict, so `verity report verify` can tell a
 * tampered report from one judged under older rules.
 */
export const ENGINE_VERSION = 3;

/** Normalized snapshots by digest: the state evidence every comparison reads. */
export type SnapshotStore = Readonly<Record<string, Snapshot>>;

type Behaviour = "holds" | "fails" | "unknown";
type Cat = "business" | "append_only" | "unclassified";

const HINT_OF: Record<TestName, HintName> = {
  sequential_idempotence: "idempotentHint",
  concurrent_idempotence: "idempotentHint",
  read_only: "readOnlyHint",
  destructive: "destructiveHint",
  open_world: "openWorldHint",
};

/** The declared value that makes a falsifiable claim, per hint. */
const CLAIM: Record<HintName, "TRUE" | "FALSE"> = {
  readOnlyHint: "TRUE",
  destructiveHint: "FALSE",
  idempotentHint: "TRUE",
  openWorldHint: "FALSE",
};

const PROPERTY: Record<TestName, string> = {
  sequential_idempotence: "idempotent",
  concurrent_idempotence: "idempotent",
  read_only: "read_only",
  destructive: "non_destructive",
  open_world: "closed_world",
};

/** What observing one test produced, before the declaration is considered. */
interface Observation {
  behaviour: Behaviour;
  /** Reasons that stop a PASS (first is primary when behaviour is unknown). */
  blockers: Reason[];
  details: string[];
  facts: Record<string, string | boolean | number>;
  evidence: Record<string, unknown>;
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

class Comparator {
  #snaps: SnapshotStore;
  #cache = new Map<string, Delta>();
  constructor(snaps: SnapshotStore) {
    this.#snaps = snaps;
  }
  delta(a: string, b: string): Delta {
    const key = `${a}|${b}`;
    let d = this.#cache.get(key);
    if (!d) {
      const sa = this.#snaps[a];
      const sb = this.#snaps[b];
      if (!sa || !sb) {
        throw new RangeError(
          `snapshot ${!sa ? a : b} is missing from the evidence`,
        );
      }
      d = computeDelta(sa, sb);
      this.#cache.set(key, d);
    }
    return d;
  }
}

function any(d: Delta, cats: readonly Cat[]): boolean {
  return cats.some((c) => !d[c].empty);
}

function lossy(d: Delta, cats: readonly Cat[]): boolean {
  return cats.some((c) => d[c].lossy);
}

function callFailed(s: SessionObservation, from = 0): boolean {
  return s.calls.slice(from).some((c) => c.status !== "ok");
}

function callMessages(s: SessionObservation): string[] {
  return s.calls.filter((c) => c.status !== "ok").map((c) =>
    `${s.kind} run ${s.run}: ${c.status}${c.message ? `: ${c.message}` : ""}`
  );
}

function setupProblem(sessions: SessionObservation[]): string | null {
  for (const s of sessions) {
    if (s.setupFailure !== null || s.stateDigest === null) {
      return `${s.kind} run ${s.run}: ${s.setupFailure ?? "no state observed"}`;
    }
  }
  return null;
}

/** Check that sessions of one kind agree on the given categories; return differing columns. */
function disagreement(
  cmp: Comparator,
  sessions: SessionObservation[],
  cats: readonly Cat[],
): string[] {
  const first = sessions[0]?.stateDigest;
  if (!first) return [];
  const cols = new Set<string>();
  for (const s of sessions.slice(1)) {
    if (!s.stateDigest || s.stateDigest === first) continue;
    const d = cmp.delta(first, s.stateDigest);
    if (any(d, cats)) { for (const c of deltaColumns(d, cats)) cols.add(c); }
  }
  return [...cols].sort();
}

function base(): Observation {
  return {
    behaviour: "unknown",
    blockers: [],
    details: [],
    facts: {},
    evidence: {},
  };
}

function stateGate(
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
function markNondeterministic(
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
function decideRuns(
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

function controlReference(
  cmp: Comparator,
  defn: DefinitionObservations,
  o: Observation,
): string | null {
  const cols = disagreement(cmp, defn.control, [
    "business",
    "append_only",
    "unclassified",
  ]);
  if (cols.length > 0) {
    markNondeterministic(o, cols, "control sessions disagree on");
    return null;
  }
  return defn.control[0]?.stateDigest ?? null;
}

/** The comparison read_only and destructive share: control state vs each once state. */
function controlVsOnce(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): { o: Observation; perRun: { s: SessionObservation; d: Delta }[] | null } {
  const gate = stateGate(defn, [...defn.control, ...t.once]);
  if (gate) return { o: gate, perRun: null };
  const o = base();
  const ref = controlReference(cmp, defn, o);
  if (ref === null) return { o, perRun: null };
  const perRun = t.once.map((s) => ({ s, d: cmp.delta(ref, s.stateDigest!) }));
  o.facts.business_changed = perRun.some(({ d }) => !d.business.empty);
  o.facts.append_only_changed = perRun.some(({ d }) => !d.append_only.empty);
  o.evidence.control_vs_once = perRun.map(({ s, d }) => ({
    run: s.run,
    from: ref,
    to: s.stateDigest,
    delta: summarizeDelta(d),
  }));
  return { o, perRun };
}

function observeReadOnly(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): Observation {
  const { o, perRun } = controlVsOnce(cmp, defn, t);
  if (perRun === null) return o;
  o.facts.unclassified_changed = perRun.some(({ d }) => !d.unclassified.empty);
  decideRuns(
    o,
    perRun.map(({ s, d }) => ({
      run: s.run,
      effect: any(d, ["business", "append_only"]),
      unclassifiedOnly: !any(d, ["business", "append_only"]) &&
        !d.unclassified.empty,
      failed: callFailed(s),
      messages: callMessages(s),
    })),
    "state changed between control and once",
  );
  return o;
}

function observeDestructive(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): Observation {
  const { o, perRun } = controlVsOnce(cmp, defn, t);
  if (perRun === null) return o;
  o.facts.lossy = perRun.some(({ d }) => lossy(d, ["business", "append_only"]));
  decideRuns(
    o,
    perRun.map(({ s, d }) => ({
      run: s.run,
      effect: lossy(d, ["business", "append_only"]),
      unclassifiedOnly: !lossy(d, ["business", "append_only"]) &&
        d.unclassified.lossy,
      // A failed call that still added records is not a clean failure.
      failed: callFailed(s) && d.empty,
      messages: callMessages(s),
    })),
    "a pre-existing business or append-only record was lost or overwritten",
  );
  return o;
}

function onceReference(
  cmp: Comparator,
  t: ToolObservations,
  o: Observation,
): string | null {
  const cols = disagreement(cmp, t.once, ["business"]);
  if (cols.length > 0) {
    markNondeterministic(
      o,
      cols,
      "business state after one call differs between runs in",
    );
    return null;
  }
  return t.once[0]?.stateDigest ?? null;
}

function observeSequential(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): Observation {
  const gate = stateGate(defn, [...t.once, ...t.twice]);
  if (gate) return gate;
  const o = base();
  const ref = onceReference(cmp, t, o);
  if (ref === null) return o;
  const cols = disagreement(cmp, t.twice, ["business"]);
  if (cols.length > 0) {
    markNondeterministic(
      o,
      cols,
      "business state after two calls differs between runs in",
    );
    return o;
  }
  const perRun = t.twice.map((s, i) => {
    const once = t.once[i] ?? t.once[0]!;
    return { s, once, d: cmp.delta(once.stateDigest!, s.stateDigest!) };
  });
  o.facts.business_changed = perRun.some(({ d }) => !d.business.empty);
  o.facts.append_only_changed = perRun.some(({ d }) => !d.append_only.empty);
  o.facts.unclassified_changed = perRun.some(({ d }) => !d.unclassified.empty);
  o.evidence.once_vs_twice = perRun.map(({ s, once, d }) => ({
    run: s.run,
    from: once.stateDigest,
    to: s.stateDigest,
    delta: summarizeDelta(d),
  }));
  decideRuns(
    o,
    perRun.map(({ s, once, d }) => ({
      run: s.run,
      effect: !d.business.empty,
      unclassifiedOnly: d.business.empty && !d.unclassified.empty,
      // Only the first call decides whether the tool did its work at all.
      failed: callFailed(once) ||
        (callFailed(s, 0) && s.calls[0]?.status !== "ok"),
      messages: [...callMessages(once), ...callMessages(s)],
    })),
    "business state after two calls differs from after one",
  );
  if (o.behaviour !== "unknown" && t.twice.some((s) => callFailed(s, 1))) {
    o.details.push("the second call failed; idempotence judged on state");
    o.blockers.push("CALL_ERROR");
    o.facts.repeat_errored = true;
  }
  return o;
}

function observeConcurrent(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): Observation {
  const o = base();
  if (t.concurrent === null) {
    // Not run: the tool makes no idempotence claim (see --observe-concurrent).
    o.details.push("no concurrent attempts were run");
    return o;
  }
  const gate = stateGate(defn, t.once);
  if (gate) return gate;
  const ref = onceReference(cmp, t, o);
  if (ref === null) return o;
  const attempts = t.concurrent;
  const usable = attempts.filter((a) =>
    a.setupFailure === null && a.stateDigest !== null
  );
  const rows = usable.map((a) => {
    const d = cmp.delta(ref, a.stateDigest!);
    return { a, d, diverged: !d.business.empty };
  });
  const counts: Record<string, Record<string, number>> = {};
  for (const mode of ["single_connection", "two_process"] as const) {
    const mine = rows.filter((r) => r.a.mode === mode);
    counts[mode] = {
      attempts: attempts.filter((a) => a.mode === mode).length,
      diverged: mine.filter((r) => r.diverged).length,
      overlapped: mine.filter((r) => r.a.overlap).length,
      setup_failed: attempts.filter((a) =>
        a.mode === mode && a.setupFailure !== null
      ).length,
    };
  }
  const producedBy = [
    ...new Set(rows.filter((r) => r.diverged).map((r) => r.a.mode)),
  ];
  o.evidence.counts = counts;
  o.evidence.attempts = rows.map((r) => ({
    mode: r.a.mode,
    attempt: r.a.attempt,
    diverged: r.diverged,
    overlap: r.a.overlap,
    overlapDetail: r.a.overlapDetail,
    calls: r.a.calls.map((c) => c.status),
    timeline: r.a.timeline,
    ...(r.diverged ? { delta: summarizeDelta(r.d) } : {}),
  }));
  o.evidence.producedBy = producedBy;
  o.facts.diverged_attempts = rows.filter((r) => r.diverged).length;
  o.facts.overlapped_attempts = rows.filter((r) => r.a.overlap).length;
  if (t.twoProcessSkipped) {
    o.blockers.push("TWO_PROCESS_SKIPPED_STARTUP_WRITES");
    o.details.push(`two-process attempts skipped: ${t.twoProcessSkipped}`);
  }
  if (rows.length === 0) {
    o.blockers.unshift("SETUP_FAILED");
    o.details.push("no concurrent attempt could be set up");
    return o;
  }
  const diverged = rows.filter((r) => r.diverged);
  if (diverged.length > 0) {
    o.behaviour = "fails";
    const first = diverged[0]!;
    o.details.push(
      `${diverged.length} attempt(s) diverged from one call; first: ${first.a.mode} attempt ${first.a.attempt}`,
    );
    return o;
  }
  if (rows.some((r) => !r.d.unclassified.empty)) {
    o.blockers.unshift("UNCLASSIFIED_STATE");
    o.details.push("attempts differ from one call only in unclassified state");
    return o;
  }
  // Without divergence, only attempts where a call did its work are evidence
  // that concurrent calls are safe; a call that failed may never have reached
  // the code that races.
  if (t.once.every((s) => callFailed(s))) {
    o.blockers.unshift("CALL_ERROR");
    o.details.push(
      "the single call failed in every once session: nothing to compare",
    );
    return o;
  }
  const informative = rows.filter((r) =>
    r.a.calls.some((c) => c.status === "ok")
  );
  o.facts.informative_attempts = informative.length;
  if (informative.length === 0) {
    o.blockers.unshift("CALL_ERROR");
    o.details.push(
      "every call failed in every concurrent attempt, and nothing changed",
    );
    return o;
  }
  if (informative.some((r) => r.a.overlap)) {
    o.behaviour = "holds";
    return o;
  }
  o.blockers.unshift("NO_OVERLAP_OBSERVED");
  o.details.push("no attempt diverged and no attempt overlapped");
  return o;
}

function networkValues(s: SessionObservation): string[] {
  return (s.network ?? []).filter((p) => p.permission === "net").map((p) =>
    p.value ?? ""
  );
}

function observeOpenWorld(
  defn: DefinitionObservations,
  t: ToolObservations,
): Observation {
  const o = base();
  if (!defn.seesNetwork) {
    o.blockers.push("NO_NETWORK_OBSERVATION");
    o.details.push("the sandbox backend cannot see network attempts");
    return o;
  }
  const setup = setupProblem([...defn.control, ...t.once]);
  if (setup) {
    o.blockers.push("SETUP_FAILED");
    o.details.push(setup);
    return o;
  }
  const baseline = new Set(defn.control.flatMap(networkValues));
  const perRun = t.once.map((s) => ({
    s,
    attempts: networkValues(s).filter((v) => !baseline.has(v)),
  }));
  o.evidence.network = perRun.map(({ s, attempts }) => ({
    run: s.run,
    attempts,
  }));
  o.facts.network_attempted = perRun.some((r) => r.attempts.length > 0);
  decideRuns(
    o,
    perRun.map(({ s, attempts }) => ({
      run: s.run,
      effect: attempts.length > 0,
      unclassifiedOnly: false,
      failed: callFailed(s),
      messages: callMessages(s),
    })),
    "the call attempted network access",
  );
  if (o.behaviour === "fails") {
    o.details.push(
      `attempted: ${
        [...new Set(perRun.flatMap((r) => r.attempts))].join(", ")
      }`,
    );
  }
  return o;
}

/** Reasons that mean state was not (or not all) observed: they stop a PASS. */
const UNSEEN: readonly Reason[] = ["UNOBSERVED_STATE", "PARTIAL_COVERAGE"];

/**
 * Coverage: no declared location is coverage "none"; a declared `memory:`
 * location is state no adapter can observe (UNOBSERVED_STATE); any other
 * unobserved location is PARTIAL_COVERAGE.
 */
function applyCoverage(o: Observation, defn: DefinitionObservations): void {
  const c = defn.coverage;
  if (c.locations.length === 0) {
    o.blockers.push("PARTIAL_COVERAGE");
    o.facts.coverage = "none";
    o.details.push(
      "coverage none: the definition declares no state locations (declare where the state lives, or memory:process)",
    );
    return;
  }
  const unseen = c.locations.filter((l) => l.observedBy === null);
  const memory = unseen.filter((l) => l.location.startsWith("memory:"));
  const other = unseen.filter((l) => !l.location.startsWith("memory:"));
  if (memory.length) {
    o.blockers.push("UNOBSERVED_STATE");
    o.details.push(
      `state declared in process memory cannot be observed: ${
        memory.map((l) => l.location).join(", ")
      }`,
    );
  }
  if (other.length) {
    o.blockers.push("PARTIAL_COVERAGE");
    o.details.push(`not observed: ${other.map((l) => l.location).join(", ")}`);
  }
}

/** Whether the single call changed no observed state in any run. */
function onceLeftStateAlone(
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): boolean {
  const ref = defn.control[0]?.stateDigest;
  if (!ref || t.once.length === 0) return false;
  return t.once.every((s) =>
    s.stateDigest !== null &&
    (s.stateDigest === ref ||
      !any(cmp.delta(ref, s.stateDigest), [
        "business",
        "append_only",
        "unclassified",
      ]))
  );
}

/**
 * Identical calls that answer differently while the observed state stayed
 * put: the state lives where verity cannot see it, so nothing "holds".
 */
function applyProcessMemory(
  o: Observation,
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
): void {
  const ev = processMemoryEvidence(t.once, t.twice);
  if (ev === null || !onceLeftStateAlone(cmp, defn, t)) return;
  const first = ev[0]!;
  o.evidence.process_memory = ev;
  o.facts.process_memory = true;
  o.details.unshift(
    `unknown: state may live in process memory: identical calls answered differently with no observed state change (twice run ${first.run}: ${
      JSON.stringify(responsePreview(first.first))
    } then ${JSON.stringify(responsePreview(first.second))})`,
  );
  if (o.behaviour === "holds") {
    o.behaviour = "unknown";
    o.blockers.unshift("UNOBSERVED_STATE");
  } else o.blockers.push("UNOBSERVED_STATE");
}

function observe(
  test: TestName,
  cmp: Comparator,
  defn: DefinitionObservations,
  t: ToolObservations,
  rules: number,
): Observation {
  let o: Observation;
  switch (test) {
    case "read_only":
      o = observeReadOnly(cmp, defn, t);
      break;
    case "destructive":
      o = observeDestructive(cmp, defn, t);
      break;
    case "sequential_idempotence":
      o = observeSequential(cmp, defn, t);
      if (rules < 3) delete o.facts.repeat_errored;
      break;
    case "concurrent_idempotence":
      o = observeConcurrent(cmp, defn, t);
      break;
    case "open_world":
      o = observeOpenWorld(defn, t);
      break;
  }
  if (test !== "open_world" && rules >= 3) {
    applyCoverage(o, defn);
    applyProcessMemory(o, cmp, defn, t);
  } else if (test !== "open_world" && !defn.coverage.complete) {
    // Rules version 2: every unobserved location (memory: included) was
    // PARTIAL_COVERAGE, and no location at all was complete coverage.
    o.blockers.push("PARTIAL_COVERAGE");
    o.details.push(
      `not observed: ${
        defn.coverage.locations.filter((l) => l.observedBy === null).map((l) =>
          l.location
        ).join(", ")
      }`,
    );
  }
  // With state unobserved, "holds" is only what was seen: not reported as behaviour.
  const seen = o.behaviour === "holds" &&
      o.blockers.some((b) => UNSEEN.includes(b))
    ? "unknown"
    : o.behaviour;
  o.facts.observed = `${PROPERTY[test]}=${seen}`;
  return o;
}

function declarationReason(
  test: TestName,
  t: ToolObservations,
): Reason | null {
  const hint = HINT_OF[test];
  if (
    test !== "read_only" && test !== "open_world" &&
    t.hints.readOnlyHint.state === "TRUE"
  ) return "SUPERSEDED_BY_READ_ONLY";
  const state: HintState = t.hints[hint].state;
  if (state === "ABSENT") return "NO_DECLARATION";
  if (state === "MALFORMED") return "MALFORMED_DECLARATION";
  if (state !== CLAIM[hint]) return "PERMISSIVE_DECLARATION";
  return null;
}

function uniq(rs: Reason[], primary: Reason | null): Reason[] {
  return [...new Set(rs)].filter((r) => r !== primary);
}

/**
 * Judge one test for one tool.
 *
 * @example
 * ```ts ignore
 * const v = judge("read_only", defn, tool, snapshots);
 * // v.outcome === "PASS", v.observed === "read_only=holds"
 * ```
 */
export function judge(
  test: TestName,
  defn: DefinitionObservations,
  t: ToolObservations,
  snapshots: SnapshotStore,
  options: JudgeOptions = {},
): Verdict {
  const rules = options.rules ?? ENGINE_VERSION;
  const serverFailed = rules >= 3 ? options.serverFailed ?? null : null;
  if (serverFailed !== null) return setupFailed(test, t, serverFailed);
  const cmp = new Comparator(snapshots);
  let o: Observation;
  try {
    o = observe(test, cmp, defn, t, rules);
  } catch (e) {
    // A crashing check yields INCONCLUSIVE with a reason, not a crashed run.
    o = base();
    o.blockers.push("SETUP_FAILED");
    o.details.push(`evidence incomplete: ${(e as Error).message}`);
    o.facts.observed = `${PROPERTY[test]}=unknown`;
  }
  const hint = HINT_OF[test];
  const declared = t.hints[hint].state;
  const na = declarationReason(test, t);
  let kind: OutcomeKind;
  let reason: Reason | null;
  if (na !== null) {
    kind = "NOT_APPLICABLE";
    reason = na;
    if (na === "MALFORMED_DECLARATION") {
      o.details.unshift(`${hint} ${t.hints[hint].detail ?? "malformed"}`);
    }
  } else if (!defn.reset.verified) {
    kind = "INCONCLUSIVE";
    reason = "RESET_UNVERIFIED";
  } else if (o.behaviour === "fails") {
    kind = "VIOLATION";
    reason = null;
  } else if (o.behaviour === "holds") {
    const blocker = o.blockers.find((b) => UNSEEN.includes(b)) ?? null;
    kind = blocker ? "INCONCLUSIVE" : "PASS";
    reason = blocker;
  } else {
    kind = "INCONCLUSIVE";
    reason = o.blockers[0] ?? "SETUP_FAILED";
  }
  // Partial coverage is named first whenever it stopped a PASS-or-nothing outcome.
  if (
    kind === "INCONCLUSIVE" && reason === "NO_OVERLAP_OBSERVED" &&
    o.blockers.some((b) => UNSEEN.includes(b))
  ) reason = o.blockers.find((b) => UNSEEN.includes(b))!;
  const permissive = na === "PERMISSIVE_DECLARATION";
  const outcome = kind === "PASS" || kind === "VIOLATION"
    ? kind
    : `${kind}:${reason}`;
  return {
    tool: t.tool,
    variant: t.variant,
    test,
    hint,
    declared,
    outcome,
    kind,
    reason,
    secondary: uniq(o.blockers, reason),
    observed: String(o.facts.observed),
    // Over-declared only on positive evidence: safe, and (rules version 3)
    // no call errored, the repeated one included.
    overDeclared: permissive &&
      o.facts.observed === `${PROPERTY[test]}=holds` &&
      (rules < 3 ||
        (o.facts.call_errored !== true && o.facts.repeat_errored !== true)),
    facts: o.facts,
    details: o.details,
    evidence: o.evidence,
  };
}

/** Options for {@linkcode judge} and {@linkcode judgeTool}. */
export interface JudgeOptions {
  /**
   * Why the server could not be audited at all ({@linkcode serverFailure}):
   * every verdict is then SETUP_FAILED with this cause.
   * @default {null}
   */
  serverFailed?: string | null;
  /**
   * The verdict rules version to apply: the current one for a new run, the
   * one a saved report was judged under when `report verify` re-derives it
   * (2 or 3; see docs/methodology.md).
   * @default {ENGINE_VERSION}
   */
  rules?: number;
}

/** Rules versions this engine can apply (a report judged under another is re-derived under the current one). */
export const SUPPORTED_RULES: readonly number[] = [2, 3];

/** Judge every test for one tool, in report order. */
export function judgeTool(
  defn: DefinitionObservations,
  t: ToolObservations,
  snapshots: SnapshotStore,
  tests: readonly TestName[] = TEST_NAMES,
  options: JudgeOptions = {},
): Verdict[] {
  return tests.map((test) => judge(test, defn, t, snapshots, options));
}

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
function setupFailed(
  test: TestName,
  t: ToolObservations,
  cause: string,
): Verdict {
  const hint = HINT_OF[test];
  const na = declarationReason(test, t);
  const observed = `${PROPERTY[test]}=unknown`;
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
