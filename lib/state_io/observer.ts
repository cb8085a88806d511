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
import type { Snapshot } from "../state/types.ts";
import {
  applyPatch,
  patchFromDelta,
  type SnapshotPatch,
} from "../state/patched.ts";
import { seedBudget, type StateBudget } from "./budget.ts";
import type { PostgresCluster } from "./postgres_cluster.ts";
import { seedNotReproducible } from "./seed_ref.ts";
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
  readonly states: ReadonlyMap<string, Snapshot>;
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
 * it (`patched`: the patch applied to the seed's snapshot, which the report
 * stores as that patch); any state that cannot be (or when there is no seed
 * to compare with) is snapshotted whole, normalized, stored by digest
 * (`snapshot`), with why. Every state is held whole: the seed is at most
 * 128 MiB (`MAX_IMAGE_SEED_BYTES`).
 */
export class DeclaredStateObserver implements StateObserver {
  readonly coverage: Coverage;
  #def: Definition;
  #postgres: () => PostgresCluster | null;
  #reader: SnapshotReader;
  /** Whole snapshots by digest. */
  #states = new Map<string, Snapshot>();
  /** The seed's size plus the default allowance, once the first reset laid the seed. */
  #budget: StateBudget = {};
  /** The seed every session is compared with (the first reset's directory), when every reset rebuilds it exactly. */
  #seed: { dir: string; digest: string } | null = null;
  #seedWhy = "no seed to compare with";
  /** Digests of states kept as patches, by the JSON of the delta and rows (each applied once). */
  #patched = new Map<string, string | { why: string }>();

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

  get states(): ReadonlyMap<string, Snapshot> {
    return this.#states;
  }

  /**
   * Both resets are snapshotted; the first is the seed sessions are
   * compared with when every reset rebuilds it exactly.
   */
  async seed(first: string, second: string): Promise<SeedObservation> {
    // Sessions may add to the seed, not hold it all within the budget.
    this.#budget = await seedBudget(first);
    const digests = [await this.#snapshot(first), await this.#snapshot(second)];
    const verified = digests[0] === digests[1];
    const why = verified
      ? await seedNotReproducible(this.#def)
      : "the reset is not verified";
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
        const kept = this.#asPatch(seed.digest, r);
        if (typeof kept === "string") {
          return { digest: kept, method: "patched", why };
        }
        why += `; not kept as a patch: ${kept.why}`;
      } catch (e) {
        why = `comparing with the seed failed: ${(e as Error).message}`;
      }
    }
    return { digest: await this.#snapshot(stateDir), method: "snapshot", why };
  }

  close(): Promise<void> {
    this.#reader.close();
    return Promise.resolve();
  }

  /** Snapshot `stateDir` whole and store it by digest. */
  async #snapshot(stateDir: string): Promise<string> {
    const snap = normalize(
      await takeSnapshot(this.#def, stateDir, {
        reader: this.#reader,
        budget: this.#budget,
        postgres: this.#postgres(),
      }),
      this.#def,
    );
    const digest = snapshotDigest(snap);
    if (!this.#states.has(digest)) this.#states.set(digest, snap);
    return digest;
  }

  /**
   * The digest of a session's state kept as a patch against the seed
   * (`patchFromDelta` of the full rows the page engine kept: every adapter
   * compared by pages, the seed's problems on both sides), the patch
   * applied to the seed's snapshot (a patch seen before is not applied
   * again); or why it cannot be.
   */
  #asPatch(
    seedDigest: string,
    r: StateDeltaResult,
  ): string | { why: string } {
    const other = r.methods.find((m) => m.method !== "pages");
    if (other !== undefined) {
      return { why: `${other.label} was compared by ${other.method}` };
    }
    const seed = this.#states.get(seedDigest)!;
    const same = (a: readonly string[]) =>
      a.length === seed.problems.length &&
      a.every((p, i) => p === seed.problems[i]);
    if (!same(r.problems.before) || !same(r.problems.after)) {
      return { why: "its problems differ from the seed's" };
    }
    // The state is a function of the seed, the delta and the rows it puts:
    // the same ones seen before name the state already kept. Rows not kept
    // (a row the page reader cannot decode) leave a record without its row.
    const put = [...r.rows ?? []].map(([id, x]) => [id, x.put] as const);
    const key = JSON.stringify([r.delta, put]);
    let known = this.#patched.get(key);
    if (known === undefined) {
      const rows = new Map(
        put.map(([id, xs]) => [id, new Map(xs.map((x) => [x.key, x.value]))]),
      );
      const patch = patchFromDelta(
        seedDigest,
        seed,
        r.delta,
        rows,
        seed.problems,
      );
      known = "why" in patch ? patch : this.#keep(seed, patch);
      this.#patched.set(key, known);
    }
    return known;
  }

  /** The seed with `patch` applied, stored by its digest. */
  #keep(seed: Snapshot, patch: SnapshotPatch): string | { why: string } {
    let state: Snapshot;
    try {
      state = applyPatch(seed, patch);
    } catch (e) {
      return { why: `the patch does not apply: ${(e as Error).message}` };
    }
    const digest = snapshotDigest(state);
    if (!this.#states.has(digest)) this.#states.set(digest, state);
    return digest;
  }
}
