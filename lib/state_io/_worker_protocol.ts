/**
 * Messages between `snapshot.ts` and `snapshot_worker.ts`. Pure types.
 *
 * @module
 */
import type { FsEntry } from "../../adapters/fs.ts";
import type { SqliteObservation } from "../../adapters/sqlite/read.ts";

/** One thing to read. */
export type WorkerItem =
  | { kind: "sqlite"; label: string }
  | { kind: "json"; label: string }
  | { kind: "fs"; label: string; exclude: string[] }
  /** Observed outside the worker (a database server, not a file). */
  | { kind: "postgres"; label: string };

/** The request: read these items inside stateDir. */
export interface WorkerRequest {
  /** Echoed in the reply, so one worker can serve several snapshots at once. */
  id?: number | undefined;
  stateDir: string;
  items: WorkerItem[];
}

/** What was read for one item (null bytes: the file does not exist). */
export type WorkerResult =
  | {
    kind: "sqlite";
    label: string;
    db: Uint8Array | null;
    wal: Uint8Array | null;
    /**
     * The tables and their columns, read already (a seed's, from its file:
     * `db` is then null); never set by the worker.
     */
    observed?: SqliteObservation;
  }
  | { kind: "json"; label: string; bytes: Uint8Array | null }
  | { kind: "fs"; label: string; entries: FsEntry[] }
  | { kind: "postgres"; label: string };

/** The worker's reply. */
export type WorkerReply =
  | {
    id?: number | undefined;
    ok: true;
    results: WorkerResult[];
    problems: string[];
  }
  | { id?: number | undefined; ok: false; error: string; problems: string[] };
