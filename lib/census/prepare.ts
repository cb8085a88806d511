/**
 * `verity census prepare`: the only networked step of a census. For each
 * published server of the list (or of one shard of it), pin its registry
 * integrity, fetch and verify the package with the same code as
 * `verity prepare` (Deno cache, or an `npm ci` install for `backend =
 * "node"`), and record which bin it runs. A package that cannot be prepared
 * is recorded as such (the census reports it as `not_prepared`), never an
 * abort.
 *
 * The census cache (default `.verity/census/<list name>/`) is a `.verity`
 * layout of its own plus `targets/<slug>/`: each server's lockfile and
 * `census.json` (its bin and integrity, or why preparing failed).
 *
 * Requires `--allow-all` (runs `npm` and `deno`, writes the cache).
 *
 * @module
 */
import { join } from "node:path";
import { InputError } from "../errors.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { cacheLayout, savePreparedTarget } from "../prepare/local.ts";
import {
  fetchPinned,
  fetchPinnedNode,
  pinFromRegistry,
} from "../prepare/fetch.ts";
import type { CensusEntry, CensusList } from "./list.ts";
import { pool } from "../common/pool.ts";
import { chooseBin } from "./bin.ts";

/** What census prepare recorded for one server (`targets/<slug>/census.json`). */
export interface PreparedServer {
  id: string;
  /** The integrity every copy was checked against. */
  integrity: string;
  /** The bin run, or null for the package's main module. */
  bin: string | null;
  /** The script a Node server runs, relative to the package directory. */
  script: string;
}

/** A server that could not be prepared (`targets/<slug>/census.json`). */
export interface UnpreparedServer {
  id: string;
  error: string;
}

/** Where a census keeps its prepared packages. */
export function censusCacheRoot(
  list: CensusList,
  given: string | null,
): string {
  return given ?? join(".verity", "census", list.name);
}

/** The directory of one server's lockfile and record. */
export function serverDir(cacheRoot: string, entry: CensusEntry): string {
  return join(cacheLayout({ root: cacheRoot }).root, "targets", entry.slug);
}

/** Options of {@linkcode prepareCensus}. */
export interface PrepareCensusOptions {
  cacheRoot: string;
  /** Servers prepared at once. @default {1} */
  jobs?: number;
  /** Progress lines. */
  say: (line: string) => void;
}

/** Prepare one published server; returns its record (or why it failed). */
async function prepareOne(
  list: CensusList,
  entry: CensusEntry,
  options: PrepareCensusOptions,
): Promise<PreparedServer | UnpreparedServer> {
  const dir = serverDir(options.cacheRoot, entry);
  const record = join(dir, "census.json");
  await Deno.mkdir(dir, { recursive: true });
  const say = (s: string) => options.say(`${entry.id}: ${s}`);
  let result: PreparedServer | UnpreparedServer;
  try {
    const integrity = entry.integrity ??
      (await pinFromRegistry(entry.package!, entry.version!)).integrity;
    const pin = {
      package: entry.package!,
      version: entry.version!,
      integrity,
      git: null,
      commit: null,
    };
    const layout = cacheLayout({ root: options.cacheRoot });
    const fetch = entry.backend === "node" ? fetchPinnedNode : fetchPinned;
    const r = await fetch(pin, {
      layout,
      name: entry.slug,
      targetDir: dir,
      definitionFile: list.file,
      say,
    });
    const pkgJson = JSON.parse(
      await Deno.readTextFile(join(r.sourceDir, "package", "package.json")),
    ) as Record<string, unknown>;
    const chosen = chooseBin(pkgJson, entry.package!, entry.bin);
    await savePreparedTarget(layout, dir, r.entry);
    result = { id: entry.id, integrity, ...chosen };
    say(`prepared (${integrity.slice(0, 20)}..., bin ${chosen.bin ?? "main"})`);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    result = {
      id: entry.id,
      error: e.message.replace(/^verity: /, ""),
    };
    say(`NOT prepared: ${result.error}`);
  }
  await writeTextFileAtomic(record, JSON.stringify(result, null, 2) + "\n");
  return result;
}

/**
 * Prepare every published server of `servers`. Local servers (a `command`)
 * need nothing. Returns how many were prepared and how many failed.
 */
export async function prepareCensus(
  list: CensusList,
  servers: readonly CensusEntry[],
  options: PrepareCensusOptions,
): Promise<{ prepared: number; failed: UnpreparedServer[] }> {
  const published = servers.filter((s) => s.package !== null);
  const results = await pool(
    published,
    options.jobs ?? 1,
    (e) => prepareOne(list, e, options),
  );
  const failed = results.filter((r): r is UnpreparedServer => "error" in r);
  return { prepared: results.length - failed.length, failed };
}

/** Read what census prepare recorded for a server, or null when nothing was. */
export async function readPreparedServer(
  cacheRoot: string,
  entry: CensusEntry,
): Promise<PreparedServer | UnpreparedServer | null> {
  try {
    const v = JSON.parse(
      await Deno.readTextFile(join(serverDir(cacheRoot, entry), "census.json")),
    ) as PreparedServer | UnpreparedServer;
    return v.id === entry.id ? v : null;
  } catch {
    return null;
  }
}
