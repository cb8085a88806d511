/**
 * Crash recovery for `verity run` and `verity ledger recover`: a run that
 * was killed between writing its report and appending it to the ledger
 * left a `.writer` marker beside the report; a run killed earlier left a
 * `verity-run-*` scratch directory and perhaps a temporary file. Whatever
 * a dead process (pid and start time checked) left is finished or removed.
 *
 * Requires `--allow-read` and `--allow-write` for the runs directory and
 * the temporary directory.
 *
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../evidence/canonical.ts";
import { parseEvidenceJson } from "../evidence/canonical.ts";
import { appendBlocks } from "../evidence/ledger.ts";
import {
  type Owner,
  ownerAlive,
  parseOwner,
  SCRATCH_OWNER,
} from "../common/owner.ts";

/** The marker a run writes beside its report until the report is in the ledger. */
export const WRITER_MARKER = ".writer";

async function ownerOf(path: string): Promise<Owner | null | "absent"> {
  try {
    return parseOwner(await Deno.readTextFile(path));
  } catch {
    return "absent";
  }
}

/** What {@linkcode recoverRuns} did. */
export interface Recovery {
  /** Run ids whose report was appended to the ledger now. */
  recovered: string[];
  /** Run ids with a report that is neither in the ledger nor recoverable (no marker). */
  unrecorded: string[];
  /** Temporary files of dead writers removed. */
  removedTemp: number;
}

/** Run ids recorded by `report` blocks of the ledger at `path` (empty when missing). */
async function recordedRuns(path: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return new Set();
  }
  const doc = parseEvidenceJson(text, { numbers: "python" }) as {
    blocks?: { type?: unknown; record?: { run_id?: unknown } }[];
  };
  const out = new Set<string>();
  for (const b of doc.blocks ?? []) {
    if (b?.type === "report" && typeof b.record?.run_id === "string") {
      out.add(b.record.run_id);
    }
  }
  return out;
}

const TEMP_RE = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;

function pidAlive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return Deno.build.os !== "linux";
  }
}

async function removeDeadTemp(dir: string): Promise<number> {
  let n = 0;
  try {
    for await (const e of Deno.readDir(dir)) {
      const m = TEMP_RE.exec(e.name);
      if (e.isFile && m && !pidAlive(Number(m[1]))) {
        await Deno.remove(join(dir, e.name)).catch(() => {});
        n++;
      }
    }
  } catch {
    // no such directory
  }
  return n;
}

/**
 * Append to `<runsDir>/ledger.json` every report whose writer died before
 * appending it (marked `recovered: true`), list reports that are in no
 * ledger block and carry no marker, and remove dead writers' temporary
 * files.
 *
 * @example
 * ```ts ignore
 * const r = await recoverRuns("runs");
 * console.log(r.recovered, r.unrecorded);
 * ```
 */
export async function recoverRuns(runsDir: string): Promise<Recovery> {
  const out: Recovery = { recovered: [], unrecorded: [], removedTemp: 0 };
  const ledger = join(runsDir, "ledger.json");
  out.removedTemp += await removeDeadTemp(runsDir);
  let entries: Deno.DirEntry[] = [];
  try {
    entries = [...Deno.readDirSync(runsDir)].filter((e) => e.isDirectory);
  } catch {
    return out;
  }
  const recorded = await recordedRuns(ledger);
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(runsDir, e.name);
    out.removedTemp += await removeDeadTemp(dir);
    let text: string;
    try {
      text = await Deno.readTextFile(join(dir, "report.json"));
    } catch {
      continue;
    }
    const marker = join(dir, WRITER_MARKER);
    const owner = await ownerOf(marker);
    if (owner !== "absent" && owner !== null && ownerAlive(owner)) continue;
    if (recorded.has(e.name)) {
      if (owner !== "absent") await Deno.remove(marker).catch(() => {});
      continue;
    }
    if (owner === "absent") {
      out.unrecorded.push(e.name);
      continue;
    }
    await appendBlocks(ledger, [{
      type: "report",
      record: {
        run_id: e.name,
        report: `${e.name}/report.json`,
        digest: `sha256:${sha256Hex(text)}`,
        recovered: true,
      },
    }]);
    await Deno.remove(marker).catch(() => {});
    out.recovered.push(e.name);
  }
  return out;
}

/**
 * Remove `verity-run-*`, `verity-cmd-*` and `verity-seeds-*` (cached seed
 * databases) scratch directories in `root` (where Deno makes temporary
 * directories), and `verity-layers-*` (overlay layers) in `shm`, whose
 * owner (recorded in their `.owner` file) is dead. Returns how many were
 * removed.
 */
export async function cleanScratch(
  root = Deno.env.get("TMPDIR") || "/tmp",
  shm = "/dev/shm",
): Promise<number> {
  let n = 0;
  for (
    const [parent, kind] of [
      [root, /^verity-(run|cmd|seeds)-/],
      [shm, /^verity-layers-/],
    ] as const
  ) {
    try {
      for await (const e of Deno.readDir(parent)) {
        if (!e.isDirectory || !kind.test(e.name)) continue;
        const dir = join(parent, e.name);
        const owner = await ownerOf(join(dir, SCRATCH_OWNER));
        if (owner === "absent" || owner === null || ownerAlive(owner)) continue;
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        n++;
      }
    } catch {
      // unreadable, or not there
    }
  }
  return n;
}
