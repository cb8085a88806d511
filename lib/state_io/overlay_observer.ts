/**
 * The observer of writes outside the declared state, composed with the
 * declared one: every launch of a session is recorded with its overlay
 * (`Launch.writes`; the launcher tells it), and after the session its
 * processes' upper layers are read into one changeset (`readChangeset`),
 * kept by digest, beside the state the inner observer names. Where a launch
 * had no overlay, the run's writes outside the declared state are not
 * observed, and `writes` says why (every headline then says so).
 *
 * Requires `--allow-read` and `--allow-ffi` (see `changeset.ts`), and
 * what the inner observer requires.
 *
 * @module
 */
import type { Launch, OverlayLayout } from "../sandbox/types.ts";
import { type Changeset, changesetDigest } from "../state/changeset.ts";
import type { Coverage } from "../state/coverage.ts";
import type { Snapshot } from "../state/types.ts";
import { type ChangesetBudget, readChangeset } from "./changeset.ts";
import type {
  Observation,
  SeedObservation,
  StateObserver,
} from "./observer.ts";

/**
 * A {@linkcode StateObserver} that adds to another's every session's
 * changeset outside the state directory (`Observation.changeset`).
 *
 * @example
 * ```ts ignore
 * const observer = new OverlayObserver(new DeclaredStateObserver(def, workDir));
 * launcher.watcher = observer; // told of every launch
 * // ... a session runs, its servers exit ...
 * const { digest, changeset } = await observer.observe(dirs.state);
 * const c = changeset ? observer.changesets.get(changeset) : null; // null: not observed
 * ```
 */
export class OverlayObserver implements StateObserver {
  #inner: StateObserver;
  #layouts = new Map<string, OverlayLayout[] | null>();
  #why: string | null = null;
  #launched = false;
  #changesets = new Map<string, Changeset>();
  #budget: ChangesetBudget;

  /** Add changesets (read within `budget`) to what `inner` observes. */
  constructor(inner: StateObserver, budget: ChangesetBudget = {}) {
    this.#inner = inner;
    this.#budget = budget;
  }

  get coverage(): Coverage {
    return this.#inner.coverage;
  }

  get states(): ReadonlyMap<string, Snapshot> {
    return this.#inner.states;
  }

  /** Every changeset read, by digest. */
  get changesets(): ReadonlyMap<string, Changeset> {
    return this.#changesets;
  }

  /** Whether every launch so far had an overlay, and why not. */
  get writes(): { observed: boolean; why: string | null } {
    return this.#launched && this.#why === null
      ? { observed: true, why: null }
      : { observed: false, why: this.#why ?? "no session was launched" };
  }

  seed(first: string, second: string): Promise<SeedObservation> {
    return this.#inner.seed(first, second);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Record one process launched for the session whose state is `stateDir`. */
  launched(stateDir: string, launch: Launch): void {
    this.#launched = true;
    const have = this.#layouts.get(stateDir);
    const w = launch.writes;
    if (w?.observed !== true) {
      this.#why ??= w?.why ?? "no overlay";
      this.#layouts.set(stateDir, null);
      return;
    }
    if (have === null) return;
    this.#layouts.set(stateDir, [...(have ?? []), w.layout]);
  }

  /**
   * The state the inner observer names, and the digest of what the
   * session's processes changed outside `stateDir` (they must have
   * exited); `changeset` is null when a launch had no overlay.
   */
  async observe(stateDir: string): Promise<Observation> {
    const layouts = this.#layouts.get(stateDir);
    this.#layouts.delete(stateDir);
    const o = await this.#inner.observe(stateDir);
    return { ...o, changeset: layouts ? this.#read(layouts) : null };
  }

  #read(layouts: readonly OverlayLayout[]): string {
    const read: Changeset[] = [];
    for (const l of layouts) read.push(readChangeset(l, this.#budget));
    const c = read.length === 1 ? read[0]! : merge(read);
    const digest = changesetDigest(c);
    this.#changesets.set(digest, c);
    return digest;
  }
}

/**
 * The changesets of several processes sharing one state (two-process
 * attempts): each saw only its own overlay, so a path two of them changed
 * is kept once and the changeset is lossy.
 */
function merge(all: readonly Changeset[]): Changeset {
  const byPath = new Map<string, Changeset["changes"][number]>();
  const problems = all.flatMap((c) => c.problems);
  let lossy = all.some((c) => c.lossy);
  for (const c of all) {
    for (const p of c.changes) {
      if (byPath.has(p.path)) {
        lossy = true;
        problems.push(
          `${p.path}: changed by two processes, each in its own overlay (the last one kept)`,
        );
      }
      byPath.set(p.path, p);
    }
  }
  const changes = [...byPath.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0
  );
  return { changes, lossy, problems };
}
