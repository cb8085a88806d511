/**
 * The front door for state: {@linkcode StateObserver}, everything the runner
 * knows of state, and {@linkcode DeclaredStateObserver}, which observes a
 * definition's declared adapters. Requires `--allow-read` and
 * `--unstable-worker-options` (the read-only snapshot worker).
 *
 * @module
 */
import type { Changeset } from "../state/changeset.ts";
import type { Definition } from "../definition/types.ts";
import { type Coverage, coverage as coverageOf } from "../state/coverage.ts";
import { snapshotDigest } from "../state/delta.ts";
import { normalize } from "../state/normalize.ts";
import { shareRecords } from "../state/share.ts";
import {
  CATEGORIES,
  regionId,
  type Snapshot,
  type StateRecord,
} from "../state/types.ts";
import {
  applyPatch,
  changedRows,
  headerOf,
  isPatchedState,
  isSeedHeader,
  isWholeSnapshot,
  patchFromDelta,
  type SeedHeader,
  type SnapshotPatch,
  type StateView,
  storedPatch,
} from "../state/patched.ts";
import { seedBudget, type StateBudget } from "./budget.ts";
import type { PostgresCluster } from "./postgres_cluster.ts";
import { seedNotReproducible } from "./seed_ref.ts";
import { streamSeed } from "./seed_stream.ts";
import { SnapshotReader, takeSnapshot } from "./snapshot.ts";
import { stateDelta, type StateDeltaResult } from "./state_delta.ts";

/** The state a session left: its digest, and how it was observed (`sessions[].stateMethod`). */
export interface Observation {
  /** Names the state: equal digests are equal states, and `states` holds each. */
  digest: string;
  /** `seed`: proven equal to the seed; `patched`: kept as a patch against it; `snapshot`: whole. */
  method: "seed" | "patched" | "snapshot";
  /** Why this method (null for `seed`). */
  why: string | null;
  /**
   * The digest of what the session changed outside its state directory
   * (in `StateObserver.changesets`), null when that was not observed;
   * absent from an observer that does not look (see `overlay_observer.ts`).
   */
  changeset?: string | null;
}

/** What {@linkcode StateObserver.seed} found: the reset's verification (`observations.definition.reset`). */
export interface SeedObservation {
  verified: boolean;
  digests: string[];
  problem: string | null;
  /** The observer reads the first directory until it is closed: remove it after. */
  keepsFirst: boolean;
}

/**
 * What the runner knows of state. `seed` is called once, before any
 * session; `observe` after each session's servers exit (in parallel);
 * `close` at the end. `observe` rejects when it cannot observe the state
 * (the message says why): that session then has no state, and no verdict
 * that needs it can pass. An observer that cannot see part of the state
 * says so in `coverage`; a combination of observers (a composite) joins
 * their coverage and digests.
 *
 * @example An observer of a state directory's one file, by content
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * import type { Observation, StateObserver } from "./observer.ts";
 * import type { Snapshot } from "../state/types.ts";
 *
 * const disk = new Map([["/s/1", "a"], ["/s/2", "a"], ["/s/3", "b"]]);
 * const states = new Map<string, Snapshot>();
 * const look = (dir: string): string => {
 *   const text = disk.get(dir)!;
 *   states.set(text, { regions: [], problems: [text] });
 *   return text;
 * };
 * const observer: StateObserver = {
 *   coverage: { complete: true, locations: [] },
 *   states,
 *   async seed(a, b) {
 *     const digests = [look(a), look(b)];
 *     const verified = digests[0] === digests[1];
 *     return { verified, digests, problem: null, keepsFirst: false };
 *   },
 *   observe: async (dir): Promise<Observation> =>
 *     ({ digest: look(dir), method: "snapshot", why: "whole file" }),
 *   close: async () => {},
 * };
 * assertEquals((await observer.seed("/s/1", "/s/2")).verified, true);
 * assertEquals((await observer.observe("/s/3")).digest, "b");
 * assertEquals([...observer.states.keys()], ["a", "b"]);
 * ```
 */
export interface StateObserver {
  /** Which declared state locations this observer sees (a verdict that needs an unseen one cannot pass). */
  readonly coverage: Coverage;
  /** Every state observed, by digest: whole snapshots, or a seed header and patches against it. */
  readonly states: ReadonlyMap<string, StateView>;
  /**
   * Given two directories just reset, verify that they hold the same state
   * and keep the first as the seed sessions are compared with.
   */
  seed(first: string, second: string): Promise<SeedObservation>;
  /** The state `stateDir` holds now. */
  observe(stateDir: string): Promise<Observation>;
  /** Stop what observing started. */
  close(): Promise<void>;
  /** What sessions changed outside their state directories, by digest (an observer that looks there). */
  readonly changesets?: ReadonlyMap<string, Changeset>;
  /** Whether writes outside the declared state were observed, and why not (an observer that looks there). */
  readonly writes?: { observed: boolean; why: string | null };
}

/** Options for {@linkcode DeclaredStateObserver}. */
export interface DeclaredObserverOptions {
  /**
   * The run's PostgreSQL cluster, once started (a postgres adapter's
   * session databases are observed through it).
   * @default {() => null}
   */
  postgres?: () => PostgresCluster | null;
}

/**
 * The observer of a definition's declared adapters. Sessions are compared
 * with the seed page by page (`stateDelta`): a state proven equal to the
 * seed takes the seed's digest (`seed`); another is kept as a patch against
 * it (`patched`, its digest streamed over the seed merged with the patch);
 * any state that cannot be (or when there is no seed to compare with) is
 * snapshotted whole, normalized, stored by digest (`snapshot`), with why.
 * When every reset rebuilds the seed exactly and every adapter is sqlite,
 * the seed is held as a header without its records (`streamSeed`).
 */
export class DeclaredStateObserver implements StateObserver {
  readonly coverage: Coverage;
  #def: Definition;
  #postgres: () => PostgresCluster | null;
  #reader: SnapshotReader;
  /** Whole snapshots, or the seed's header and states kept as patches against it. */
  #states = new Map<string, StateView>();
  /** The seed's size plus the default allowance, once the first reset laid the seed. */
  #budget: StateBudget = {};
  /** The seed every session is compared with (the first reset's directory), when every reset rebuilds it exactly. */
  #seed: { dir: string; digest: string } | null = null;
  #seedWhy = "no seed to compare with";
  /** Digests of states kept as patches, by the JSON of the delta and rows (each hashed once). */
  #patched = new Map<string, Promise<string | { why: string }>>();
  /** The seed's whole snapshot, once a state that cannot be a patch needed it. */
  #materialized: Promise<Snapshot> | null = null;

  /** Observe `def`'s adapters in state directories under `workDir`. */
  constructor(
    def: Definition,
    workDir: string,
    options: DeclaredObserverOptions = {},
  ) {
    this.#def = def;
    this.coverage = coverageOf(def);
    this.#postgres = options.postgres ?? (() => null);
    this.#reader = new SnapshotReader(Deno.realPathSync(workDir));
  }

  get states(): ReadonlyMap<string, StateView> {
    return this.#states;
  }

  /**
   * When every adapter is sqlite the second reset is compared with the
   * first page by page; if they are equal and the seed is rebuilt exactly
   * by every reset, the first is held without its records (its header and
   * digest streamed from its pages). Otherwise both are snapshotted.
   */
  async seed(first: string, second: string): Promise<SeedObservation> {
    // Sessions may add to the seed, not hold it all within the budget.
    this.#budget = await seedBudget(first);
    let reproducible: Promise<string | null> | null = null;
    const whyNot = () => reproducible ??= seedNotReproducible(this.#def);
    let digests: string[];
    if (await this.#sameState(first, second)) {
      const d = await whyNot() === null
        ? await this.#streamedSeed(first)
        : await this.#snapshot(first);
      digests = [d, d];
    } else {
      digests = [await this.#snapshot(first), await this.#snapshot(second)];
    }
    const verified = digests[0] === digests[1];
    const why = verified ? await whyNot() : "the reset is not verified";
    if (why === null) this.#seed = { dir: first, digest: digests[0]! };
    else this.#seedWhy = `no seed to compare with: ${why}`;
    const problem = verified ? null : "two resets produced different state";
    return { verified, digests, problem, keepsFirst: why === null };
  }

  /** Compared with the seed first (`stateDelta`); kept as a patch, else snapshotted whole. */
  async observe(stateDir: string): Promise<Observation> {
    const seed = this.#seed;
    let why = this.#seedWhy;
    if (seed !== null) {
      try {
        // The page engine keeps the full rows of every change (the
        // session's patch against the seed).
        const r = await stateDelta(this.#def, seed.dir, stateDir, {
          reader: this.#reader,
          budget: this.#budget,
          rows: true,
        });
        if (r.sameAsBefore) {
          return { digest: seed.digest, method: "seed", why: null };
        }
        why = "the state differs from the seed";
        const held = this.#states.get(seed.digest)!;
        // A seed held whole keeps every state whole (applied from its
        // patch); a seed held without its records keeps the patches.
        if (isWholeSnapshot(held)) this.#materialized ??= Promise.resolve(held);
        const header = isSeedHeader(held)
          ? held
          : headerOf(seed.digest, held as Snapshot);
        const kept = await this.#asPatch(seed.dir, header, r);
        if (typeof kept === "string") {
          return { digest: kept, method: "patched", why };
        }
        why += `; not kept as a patch: ${kept.why}`;
      } catch (e) {
        why = `comparing with the seed failed: ${(e as Error).message}`;
      }
      // A whole snapshot is compared with whole snapshots only: the seed
      // held without its records is taken whole now (memory follows the
      // store from here on: the fallback).
      if (isSeedHeader(this.#states.get(seed.digest)!)) {
        await this.#materializeSeed(seed);
      }
    }
    return { digest: await this.#snapshot(stateDir), method: "snapshot", why };
  }

  close(): Promise<void> {
    this.#reader.close();
    return Promise.resolve();
  }

  #take(stateDir: string): Promise<Snapshot> {
    return takeSnapshot(this.#def, stateDir, {
      reader: this.#reader,
      budget: this.#budget,
      postgres: this.#postgres(),
    }).then((s) => normalize(s, this.#def));
  }

  /** Snapshot `stateDir` whole and store it by digest. */
  async #snapshot(stateDir: string): Promise<string> {
    const snap = await this.#take(stateDir);
    const digest = snapshotDigest(snap);
    if (!this.#states.has(digest)) {
      // The first snapshot is the seed's (verify-reset); later distinct ones
      // share its unchanged records instead of holding copies.
      const first = this.#states.values().next();
      this.#states.set(
        digest,
        first.done ? snap : shareRecords(first.value as Snapshot, snap),
      );
    }
    return digest;
  }

  /**
   * The digest of a session's state kept as a patch against the seed
   * (`patchFromDelta`: every adapter compared by pages, the seed's problems
   * on both sides), streamed over the seed merged with the patch (a patch
   * seen before is not hashed again); or why it cannot be.
   */
  async #asPatch(
    seedDir: string,
    header: SeedHeader,
    r: StateDeltaResult,
  ): Promise<string | { why: string }> {
    const other = r.methods.find((m) => m.method !== "pages");
    if (other !== undefined) {
      return { why: `${other.label} was compared by ${other.method}` };
    }
    const same = (a: readonly string[]) =>
      a.length === header.problems.length &&
      a.every((p, i) => p === header.problems[i]);
    if (!same(r.problems.before) || !same(r.problems.after)) {
      return { why: "its problems differ from the seed's" };
    }
    // The state is a function of the seed, the delta and the rows it puts:
    // the same ones seen before name the state already hashed.
    const key = JSON.stringify([
      r.delta,
      [...r.addedValues].map(([id, m]) => [id, [...m]]),
      r.rows === null ? null : [...r.rows].map(([id, x]) => [id, x.put]),
    ]);
    let known = this.#patched.get(key);
    if (known === undefined) {
      known = this.#patchOf(seedDir, header, r).then((patch) =>
        "why" in patch ? patch : this.#hashPatch(seedDir, header, patch)
      );
      this.#patched.set(key, known);
    }
    return await known;
  }

  /**
   * The stored patch of a session's state: the full rows of its added and
   * changed records the page engine kept; where it could not keep them (a
   * row it cannot decode), the seed's rows at the changed keys are read by
   * one streaming pass (`streamSeed`'s `was`) and the fields applied.
   */
  async #patchOf(
    seedDir: string,
    header: SeedHeader,
    r: StateDeltaResult,
  ): Promise<SnapshotPatch | { why: string }> {
    let rows: ReadonlyMap<
      string,
      ReadonlyMap<string, Record<string, unknown>>
    > = r.rows === null ? r.addedValues : new Map(
      [...r.rows].map(([id, x]) => [
        id,
        new Map(x.put.map((rec) => [rec.key, rec.value])),
      ]),
    );
    const changed = CATEGORIES.flatMap((c) => r.delta[c].changed);
    const missing = changed.filter((x) => !rows.get(x.region)?.has(x.key));
    if (missing.length > 0) {
      const keys = new Map<string, StateRecord[]>();
      for (const x of missing) {
        let l = keys.get(x.region);
        if (l === undefined) keys.set(x.region, l = []);
        l.push({ key: x.key, value: {} });
      }
      const probe: SnapshotPatch = {
        base: header.digest,
        problems: header.problems,
        regions: header.regions.map(({ count: _count, ...g }) => ({
          ...g,
          put: keys.get(regionId(g)) ?? [],
          drop: [],
        })),
      };
      const s = await streamSeed(this.#def, seedDir, {
        reader: this.#reader,
        budget: this.#budget,
        patches: [probe],
      });
      if (s.patchErrors[0]) {
        return { why: `reading the seed's changed rows: ${s.patchErrors[0]}` };
      }
      const was = new Map<string, Map<string, StateRecord>>();
      probe.regions.forEach((g, i) => {
        was.set(
          regionId(g),
          new Map((s.was[0]?.[i] ?? []).map((x) => [x.key, x])),
        );
      });
      const full = changedRows(r.delta, was);
      if ("why" in full) return full;
      const merged = new Map(full);
      for (const [id, m] of r.addedValues) {
        merged.set(id, new Map([...(merged.get(id) ?? []), ...m]));
      }
      rows = merged;
    }
    return patchFromDelta(header, r.delta, rows, header.problems);
  }

  /** Stream the seed merged with one patch: the state's digest, kept as a patched state. */
  async #hashPatch(
    seedDir: string,
    header: SeedHeader,
    patch: SnapshotPatch,
  ): Promise<string | { why: string }> {
    const s = await streamSeed(this.#def, seedDir, {
      reader: this.#reader,
      budget: this.#budget,
      patches: [patch],
    });
    if (s.header.digest !== header.digest) {
      return { why: "the seed streamed again hashes to another digest" };
    }
    const digest = s.digests[0];
    const state = s.patched[0];
    if (digest === null || digest === undefined || !state) {
      return { why: `the patch does not apply: ${s.patchErrors[0]}` };
    }
    if (!this.#states.has(digest)) {
      // The seed made whole meanwhile: keep this state whole too.
      const whole = this.#materialized === null
        ? null
        : await this.#materialized;
      if (!this.#states.has(digest)) {
        this.#states.set(
          digest,
          whole === null ? state : applyPatch(whole, storedPatch(state)),
        );
      }
    }
    return digest;
  }

  /**
   * Take the seed's whole snapshot (once) and make every held state whole:
   * a whole snapshot is compared only with whole snapshots.
   */
  async #materializeSeed(seed: { dir: string; digest: string }): Promise<void> {
    this.#materialized ??= (async () => {
      const snap = await this.#take(seed.dir);
      const digest = snapshotDigest(snap);
      if (digest !== seed.digest) {
        throw new Error(
          `the seed's snapshot hashes to ${digest}, its streamed digest is ${seed.digest}`,
        );
      }
      for (const [d, v] of this.#states) {
        if (isSeedHeader(v)) this.#states.set(d, snap);
        else if (isPatchedState(v)) {
          this.#states.set(d, applyPatch(snap, storedPatch(v)));
        }
      }
      return snap;
    })();
    await this.#materialized;
  }

  /** Whether a second reset left exactly the first one's state, proven page by page (every adapter sqlite). */
  async #sameState(firstDir: string, stateDir: string): Promise<boolean> {
    if (!this.#def.adapters.every((a) => a.kind === "sqlite")) return false;
    try {
      const r = await stateDelta(this.#def, firstDir, stateDir, {
        reader: this.#reader,
        budget: this.#budget,
      });
      return r.sameAsBefore;
    } catch {
      return false;
    }
  }

  /**
   * The seed's digest streamed from its pages, its header held in place of
   * its snapshot; or, when the stream read a part whole anyway (a table
   * stored in another order, an adapter the page reader declines), the
   * seed's whole snapshot.
   */
  async #streamedSeed(stateDir: string): Promise<string> {
    const s = await streamSeed(this.#def, stateDir, {
      reader: this.#reader,
      budget: this.#budget,
    }).catch(() => null);
    if (s === null || s.methods.some((m) => m.method !== "pages")) {
      return await this.#snapshot(stateDir);
    }
    if (!this.#states.has(s.header.digest)) {
      this.#states.set(s.header.digest, s.header);
    }
    return s.header.digest;
  }
}
