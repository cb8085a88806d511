/**
 * The read-only half of a snapshot. This worker runs with permission to
 * read the state directory and nothing else (no write, net, env, run, ffi
 * or sys), so observing can never change what is observed. It reads the
 * bytes each adapter needs and walks fs trees; parsing happens in the
 * parent on those bytes (in memory), which never holds a file handle of
 * the state directory.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { walkFs } from "../../adapters/fs.ts";
import type {
  WorkerItem,
  WorkerReply,
  WorkerRequest,
  WorkerResult,
} from "./_worker_protocol.ts";

/**
 * Whether `path` really lies inside `root` (a real path): a symbolic link,
 * in the file itself or in a directory above it, may point anywhere, and
 * permission checks apply to the path as written, not to where it leads.
 */
async function inside(
  root: string,
  path: string,
  problems: string[],
): Promise<boolean> {
  let real: string;
  try {
    real = await Deno.realPath(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      problems.push(`${path}: cannot resolve: ${(e as Error).message}`);
    }
    return false;
  }
  if (real === root || real.startsWith(root + "/")) return true;
  problems.push(
    `${path}: leads outside the state directory (to ${real}); not read`,
  );
  return false;
}

async function readOptional(
  root: string,
  path: string,
  problems: string[],
): Promise<Uint8Array | null> {
  try {
    if (!(await inside(root, path, problems))) return null;
    // A FIFO or device would block or never end: only regular files are read.
    const info = await Deno.stat(path);
    if (!info.isFile) {
      problems.push(`${path}: not a regular file; not read`);
      return null;
    }
    return await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    problems.push(`${path}: cannot read: ${(e as Error).message}`);
    return null;
  }
}

async function observe(
  stateDir: string,
  item: WorkerItem,
  problems: string[],
): Promise<WorkerResult> {
  const abs = item.label === "." ? stateDir : `${stateDir}/${item.label}`;
  switch (item.kind) {
    case "sqlite": {
      const db = await readOptional(stateDir, abs, problems);
      const wal = await readOptional(stateDir, `${abs}-wal`, problems);
      return { kind: "sqlite", label: item.label, db, wal };
    }
    case "json":
      return {
        kind: "json",
        label: item.label,
        bytes: await readOptional(stateDir, abs, problems),
      };
    case "postgres":
      return { kind: "postgres", label: item.label };
    case "fs": {
      // The walk never follows links below its root; the root itself must be inside.
      if (item.label !== "." && !(await inside(stateDir, abs, problems))) {
        return { kind: "fs", label: item.label, entries: [] };
      }
      const r = await walkFs(stateDir, item.label, item.exclude);
      problems.push(...r.problems);
      return { kind: "fs", label: item.label, entries: r.entries };
    }
  }
}

self.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
  const problems: string[] = [];
  try {
    const results: WorkerResult[] = [];
    for (const item of ev.data.items) {
      results.push(await observe(ev.data.stateDir, item, problems));
    }
    const transfer: ArrayBuffer[] = [];
    for (const r of results) {
      if (r.kind === "sqlite") {
        if (r.db) transfer.push(r.db.buffer as ArrayBuffer);
        if (r.wal) transfer.push(r.wal.buffer as ArrayBuffer);
      } else if (r.kind === "json" && r.bytes) {
        transfer.push(r.bytes.buffer as ArrayBuffer);
      }
    }
    const reply: WorkerReply = { id: ev.data.id, ok: true, results, problems };
    self.postMessage(reply, { transfer });
  } catch (e) {
    const reply: WorkerReply = {
      id: ev.data.id,
      ok: false,
      error: (e as Error).message,
      problems,
    };
    self.postMessage(reply);
  }
};
