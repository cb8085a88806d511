/**
 * The observer of writes outside the declared state: every launch of a
 * session is recorded with its overlay (`Launch.writes`), and after the
 * session its processes' upper layers are read into one changeset
 * (`readChangeset`), kept by digest. Where a launch had no overlay, the
 * run's writes outside the declared state are not observed, and `writes`
 * says why (every headline then says so).
 *
 * Requires `--allow-read` and `--allow-ffi` (see `changeset.ts`).
 *
 * @module
 */
import type { Launch, OverlayLayout } from "../sandbox/types.ts";
import { type Changeset, changesetDigest } from "../state/changeset.ts";
import { type ChangesetBudget, readChangeset } from "./changeset.ts";

/**
 * Records each session's overlays by its state directory and reads their
 * changesets.
 *
 * @example
 * ```ts ignore
 * const writes = new WriteObserver();
 * const launch = launcher.launch(dirs, "once-1");
 * writes.launched(dirs.state, launch);
 * // ... the session runs, its server exits ...
 * const digest = await writes.observe(dirs.state); // null: not observed
 * const changeset = digest === null ? null : writes.changesets.get(digest);
 * ```
 */
export class WriteObserver {
  #layouts = new Map<string, OverlayLayout[] | null>();
  #why: string | null = null;
  #launched = false;
  #changesets = new Map<string, Changeset>();
  #budget: ChangesetBudget;

  /** Read changesets within `budget` (see {@linkcode ChangesetBudget}). */
  constructor(budget: ChangesetBudget = {}) {
    this.#budget = budget;
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
   * The digest of what the session's processes changed outside its state
   * directory (they must have exited), or null when a launch had no overlay.
   * Forgets the session.
   */
  async observe(stateDir: string): Promise<string | null> {
    const layouts = this.#layouts.get(stateDir);
    this.#layouts.delete(stateDir);
    if (layouts === null || layouts === undefined) return null;
    const read: Changeset[] = [];
    for (const l of layouts) read.push(await readChangeset(l, this.#budget));
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
