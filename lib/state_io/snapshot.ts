/**
 * Take a snapshot of a state directory: every adapter's surface as typed,
 * sorted records.
 *
 * Reading happens in a Worker whose only permission is reading the state
 * directory (see `snapshot_worker.ts`); the bytes come back as transferred
 * buffers and are parsed here, in memory, by the adapters.
 *
 * @module
 */
import { rekey } from "../state/keys.ts";
import { categoryOf } from "../state/classify.ts";
import type { AdapterDef, Definition } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { fsExclusions, fsRegions } from "../../adapters/fs.ts";
import { readJsonState } from "../../adapters/json.ts";
import { readSqlite } from "../../adapters/sqlite/read.ts";
import type { PageCache } from "../../adapters/sqlite/stream.ts";
import { checkStateBudget, type StateBudget } from "./budget.ts";
import { runCluster } from "./reset.ts";
import type { PostgresCluster } from "./postgres_cluster.ts";
import type { PostgresObservation } from "../../adapters/postgres.ts";
import type {
  WorkerItem,
  WorkerReply,
  WorkerResult,
} from "./_worker_protocol.ts";
import { compareRegions, type Region, type Snapshot } from "../state/types.ts";

/** Options of {@linkcode takeSnapshot}. */
export interface SnapshotOptions {
  /**
   * A long-lived reader to use instead of a worker per snapshot; its root
   * must contain the state directory.
   * @default {undefined}
   */
  reader?: SnapshotReader;
  /** Give up (and throw) when reading takes longer than this. @default 300000 */
  timeoutMs?: number;
  /**
   * The state directory's budget, checked (metadata only) before anything
   * is read; over it, `takeSnapshot` throws `StateBudgetError`.
   * @default {DEFAULT_STATE_BUDGET}
   */
  budget?: StateBudget;
  /**
   * The run's private PostgreSQL cluster, for a definition with a postgres
   * adapter: the session database created for `stateDir` is observed.
   * @default {null}
   */
  postgres?: PostgresCluster | null;
  /**
   * Decoded SQLite leaves to share with other snapshots taken with the
   * same cache (a pair compared whole: the unchanged leaves are decoded
   * once); null decodes every leaf.
   * @default {null}
   */
  cache?: PageCache | null;
}

/** What the worker must read for a definition. */
function workerItems(def: Pick<Definition, "adapters">): WorkerItem[] {
  return def.adapters.map((a): WorkerItem => {
    const label = normalizeLabel(a.label);
    if (a.kind === "fs") {
      return { kind: "fs", label, exclude: fsExclusions(def.adapters, a) };
    }
    return { kind: a.kind, label };
  });
}

/**
 * Turn what was read into a snapshot (pure apart from SQLite reading what
 * the page reader leaves to it). `results[i]` belongs to `def.adapters[i]`.
 */
export function assembleSnapshot(
  def: Pick<Definition, "adapters">,
  results: readonly WorkerResult[],
  problems: readonly string[] = [],
  /** Decoded SQLite leaves shared with other snapshots (`SnapshotOptions.cache`). */
  cache: PageCache | null = null,
): Snapshot {
  const regions: Region[] = [];
  const allProblems = [...problems];
  def.adapters.forEach((a, i) => {
    const r = results[i];
    const adapter = normalizeLabel(a.label);
    // A database is observed outside the worker (takeSnapshot adds it).
    if (a.kind === "postgres") return;
    if (!r || r.kind !== a.kind) {
      allProblems.push(`${a.kind}:${adapter}: not observed`);
      return;
    }
    if (r.kind === "sqlite") {
      if (r.db === null && r.wal === null && !r.observed) return;
      const obs = r.observed ?? readSqlite(r.db ?? new Uint8Array(), {
        wal: r.wal,
        label: adapter,
        cache,
      });
      allProblems.push(...obs.problems);
      for (const t of obs.tables) {
        const natural = a.key[t.name];
        regions.push({
          adapter,
          kind: "sqlite",
          name: t.name,
          category: categoryOf(a, t.name),
          records: natural ? rekey(t.records, natural) : t.records,
          columns: t.columns,
        });
      }
    } else if (r.kind === "json") {
      if (r.bytes === null) return;
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(r.bytes);
      } catch {
        allProblems.push(
          `${adapter}: not valid UTF-8; decoded with replacement characters`,
        );
        text = new TextDecoder().decode(r.bytes);
      }
      const obs = readJsonState(text, a);
      allProblems.push(...obs.problems);
      for (const g of obs.regions) {
        regions.push({
          adapter,
          kind: "json",
          name: g.name,
          category: categoryOf(a, g.name),
          records: g.records,
        });
      }
    } else {
      for (const g of fsRegions(r.entries, a)) {
        regions.push({
          adapter,
          kind: "fs",
          name: g.name,
          category: g.category,
          records: g.records,
        });
      }
    }
  });
  regions.sort(compareRegions);
  return { regions, problems: allProblems };
}

/**
 * Snapshot `stateDir` as `def`'s adapters see it. Requires
 * `--allow-read` (the state directory) and the
 * `worker-options` unstable feature (set in deno.json).
 *
 * @example
 * ```ts
 * import type { Definition } from "../definition/types.ts";
 *
 * async function regions(def: Definition, stateDir: string): Promise<string[]> {
 *   const snap = await takeSnapshot(def, stateDir);
 *   return snap.regions.map((r) => `${r.adapter}:${r.name} ${r.records.length}`);
 * }
 * ```
 */
export async function takeSnapshot(
  def: Definition,
  stateDir: string,
  options: SnapshotOptions = {},
): Promise<Snapshot> {
  const dir = await Deno.realPath(stateDir);
  // Metadata first: a state directory over its budget is never read.
  await checkStateBudget(dir, options.budget ?? {});
  const read = await readStateItems(dir, workerItems(def), options, stateDir);
  const snap = assembleSnapshot(
    def,
    read.results,
    read.problems,
    options.cache ?? null,
  );
  for (const a of def.adapters) {
    if (a.kind !== "postgres") continue;
    const cluster = runCluster(options, "takeSnapshot");
    const obs = await cluster.observe(cluster.connection(stateDir, a).db, a);
    snap.problems.push(...obs.problems);
    snap.regions.push(...postgresRegions(a, obs));
  }
  snap.regions.sort(compareRegions);
  return snap;
}

/** A postgres observation as snapshot regions. */
export function postgresRegions(
  a: AdapterDef,
  obs: PostgresObservation,
): Region[] {
  const adapter = normalizeLabel(a.label);
  return obs.tables.map((t) => ({
    adapter,
    kind: "postgres" as const,
    name: t.name,
    category: categoryOf(a, t.name),
    records: t.records,
    columns: t.columns,
  }));
}

/**
 * Worker options that grant reading `stateDir` and nothing else: no write,
 * net, env, run, ffi, sys or dynamic import. Needs the `worker-options`
 * unstable feature.
 */
export function readOnlyWorkerOptions(stateDir: string): WorkerOptions {
  return {
    type: "module",
    name: "verity-snapshot",
    deno: {
      permissions: {
        read: [stateDir],
        write: false,
        net: false,
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  } as unknown as WorkerOptions;
}

/**
 * Read `items` of the state directory `dir` (already resolved) through
 * `options.reader`, or a one-off read-only worker: the results, and the
 * problems with `dir` taken off their paths. Throws when the read fails,
 * naming the directory as `shown`.
 */
async function readStateItems(
  dir: string,
  items: WorkerItem[],
  options: Pick<SnapshotOptions, "reader" | "timeoutMs">,
  shown = dir,
): Promise<{ results: WorkerResult[]; problems: string[] }> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  const reader = options.reader ?? new SnapshotReader(dir);
  let reply: WorkerReply;
  try {
    reply = await reader.read(dir, items, timeoutMs);
  } finally {
    if (reader !== options.reader) reader.close();
  }
  if (!reply.ok) throw new Error(`snapshot of ${shown} failed: ${reply.error}`);
  return {
    results: reply.results,
    problems: reply.problems.map((p) =>
      p.startsWith(dir + "/") ? p.slice(dir.length + 1) : p
    ),
  };
}

/**
 * One read-only snapshot worker serving many snapshots, for a run that
 * observes hundreds of state directories under one root: the worker may
 * read only below `root` and never write, and each request is still
 * confined to its own state directory (links leading out are refused).
 * Requires `--allow-read` on `root` and `--unstable-worker-options`.
 *
 * @example
 * ```ts ignore
 * const reader = new SnapshotReader(await Deno.realPath(workDir));
 * const snap = await takeSnapshot(def, stateDir, { reader });
 * reader.close();
 * ```
 */
export class SnapshotReader {
  #root: string;
  #worker: Worker | null = null;
  #next = 1;
  #pending = new Map<number, (r: WorkerReply | Error) => void>();

  constructor(root: string) {
    this.#root = root;
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const w = new Worker(
      new URL("./snapshot_worker.ts", import.meta.url).href,
      readOnlyWorkerOptions(this.#root),
    );
    w.onmessage = (ev: MessageEvent<WorkerReply>) => {
      const id = ev.data.id ?? -1;
      const done = this.#pending.get(id);
      this.#pending.delete(id);
      done?.(ev.data);
    };
    w.onerror = (ev: ErrorEvent) => {
      ev.preventDefault();
      this.#fail(new Error(`snapshot worker failed: ${ev.message}`));
    };
    this.#worker = w;
    return w;
  }

  #fail(e: Error): void {
    this.#worker?.terminate();
    this.#worker = null;
    for (const done of this.#pending.values()) done(e);
    this.#pending.clear();
  }

  /** Read one state directory's surfaces. */
  read(
    stateDir: string,
    items: WorkerItem[],
    timeoutMs: number,
  ): Promise<WorkerReply> {
    if (stateDir !== this.#root && !stateDir.startsWith(this.#root + "/")) {
      return Promise.reject(
        new RangeError(
          `${stateDir} is outside the reader's root ${this.#root}`,
        ),
      );
    }
    const w = this.#start();
    const id = this.#next++;
    return new Promise<WorkerReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#fail(
          new Error(
            `snapshot of ${stateDir} did not finish within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.#pending.set(id, (r) => {
        clearTimeout(timer);
        if (r instanceof Error) reject(r);
        else resolve(r);
      });
      w.postMessage({ id, stateDir, items });
    });
  }

  /** Stop the worker. */
  close(): void {
    this.#fail(new Error("snapshot reader closed"));
  }
}
