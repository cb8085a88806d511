/**
 * The project-local audit cache, `.verity/` in the working directory:
 *
 * ```
 * .verity/
 *   prepared.json          what `verity prepare` fetched and verified
 *   deno_dir/              the DENO_DIR targets run from (--cached-only)
 *   sources/<store>/       {source}: the verified tarball and its extracted package/
 *   node/<store>/          a Node target's npm install
 *   npx/<pkg>@<version>/   the lockfile of a package a command line ran by npx
 * ```
 *
 * Each target's entry is keyed by its directory ({@linkcode preparedKey}),
 * never by its name: two targets called `memory` in two directories are
 * two entries, with files of their own (`<store>`: {@linkcode storeName}).
 *
 * Effectful edge over the pure `prepared.ts`. Requires `--allow-read`, and
 * `--allow-write` to save.
 *
 * @module
 */
import { basename, dirname, join, relative, resolve } from "node:path";
import { PrepareError } from "../errors.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import type { Definition } from "../definition/types.ts";
import {
  checkCommandRunsPin,
  isNodeCommand,
  LOCK_FILE,
  NODE_LOCK_FILE,
  parseSourcePin,
  sha256Of,
} from "./source.ts";
import {
  checkPrepared,
  emptyPrepared,
  parsePrepared,
  type PreparedFile,
  type PreparedTarget,
  renderPrepared,
} from "./prepared.ts";
import { exists, isDirectory } from "../common/exists.ts";

/** Where the cache lives. */
export interface CacheLayout {
  /** Absolute `.verity` directory. */
  root: string;
  preparedFile: string;
  denoDir: string;
  sourcesDir: string;
  /** Node targets' npm installs: `<nodeDir>/<target>/node_modules`. */
  nodeDir: string;
}

/** Options naming the cache root. */
export interface CacheOptions {
  /**
   * The `.verity` directory.
   * @default {"<cwd>/.verity"}
   */
  root?: string;
}

/** The cache layout under `root` (default `./.verity`). */
export function cacheLayout(options: CacheOptions = {}): CacheLayout {
  const root = resolve(options.root ?? ".verity");
  return {
    root,
    preparedFile: join(root, "prepared.json"),
    denoDir: join(root, "deno_dir"),
    sourcesDir: join(root, "sources"),
    nodeDir: join(root, "node"),
  };
}

/**
 * The key of a target's prepared state: its directory, relative to the
 * directory that holds `.verity` when it lies inside it (so the project can
 * move as a whole), else absolute.
 *
 * @example
 * ```ts
 * const layout = cacheLayout({ root: "/p/.verity" });
 * console.assert(preparedKey(layout, "/p/targets/memory") === "targets/memory");
 * console.assert(preparedKey(layout, "/elsewhere/memory") === "/elsewhere/memory");
 * ```
 */
export function preparedKey(layout: CacheLayout, dir: string): string {
  const abs = resolve(dir);
  const rel = relative(dirname(layout.root), abs);
  return rel === "" ? "." : rel.startsWith("..") ? abs : rel;
}

/**
 * The directory name a target's prepared files are kept under: its last
 * segment and a digest of its key (unique per key, readable).
 *
 * @example
 * ```ts
 * console.assert(/^memory-[0-9a-f]{12}$/.test(storeName("targets/memory")));
 * ```
 */
export function storeName(key: string): string {
  const name = basename(key).replace(/[^A-Za-z0-9._@-]/g, "-") || "target";
  return `${name}-${sha256Of(key).slice(7, 19)}`;
}

/** Read `.verity/prepared.json`; an empty record when it does not exist. */
export async function readPrepared(layout: CacheLayout): Promise<PreparedFile> {
  let text: string;
  try {
    text = await Deno.readTextFile(layout.preparedFile);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return emptyPrepared();
    throw new PrepareError(
      `${layout.preparedFile}: cannot read: ${(e as Error).message}`,
    );
  }
  try {
    return parsePrepared(text);
  } catch (e) {
    throw new PrepareError(
      `${layout.preparedFile}: ${
        (e as Error).message
      } (delete it and run verity prepare again)`,
    );
  }
}

/**
 * Record one prepared target under its directory's key: read, update, write
 * through a temp file and a rename, under a lock file so two prepares at
 * once never lose an entry.
 */
export async function savePreparedTarget(
  layout: CacheLayout,
  dir: string,
  entry: PreparedTarget,
): Promise<void> {
  await Deno.mkdir(layout.root, { recursive: true });
  const lock = `${layout.preparedFile}.lock`;
  let held = false;
  for (let i = 0; i < 200 && !held; i++) {
    try {
      (await Deno.open(lock, { createNew: true, write: true })).close();
      held = true;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      // A lock older than a minute was left by a killed prepare.
      const st = await Deno.stat(lock).catch(() => null);
      if (st?.mtime && Date.now() - st.mtime.getTime() > 60_000) {
        await Deno.remove(lock).catch(() => {});
      } else await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (!held) {
    throw new PrepareError(
      `${lock}: another verity prepare holds the lock; retry when it is done`,
    );
  }
  try {
    const file = await readPrepared(layout);
    file.targets[preparedKey(layout, dir)] = entry;
    await writeTextFileAtomic(layout.preparedFile, renderPrepared(file));
  } finally {
    await Deno.remove(lock).catch(() => {});
  }
}

/** What `verity run` needs to run a prepared target offline. */
export interface PreparedRun {
  /** `{source}` (absolute). */
  source: string;
  /** The DENO_DIR to run the server from (absolute). */
  denoDir: string;
  /** `{node_modules}` of a Node target (absolute), else null. */
  nodeModules: string | null;
  entry: PreparedTarget;
}

/** `<denoDir>/npm/<any registry>/<package>/<version>` when it exists, else null. */
export async function packageCached(
  denoDir: string,
  pkg: string,
  version: string,
): Promise<string | null> {
  try {
    for await (const reg of Deno.readDir(join(denoDir, "npm"))) {
      const dir = join(denoDir, "npm", reg.name, pkg, version);
      if (reg.isDirectory && await exists(dir)) return dir;
    }
  } catch {
    // no npm cache at all
  }
  return null;
}

/** Whether `<nodeModules>/<package>/package.json` records `version`. */
async function nodePackageInstalled(
  nodeModules: string | null,
  pkg: string,
  version: string,
): Promise<boolean> {
  if (nodeModules === null) return false;
  try {
    const text = await Deno.readTextFile(
      join(nodeModules, pkg, "package.json"),
    );
    return (JSON.parse(text) as { version?: unknown }).version === version;
  } catch {
    return false;
  }
}

/**
 * What to type after `verity prepare` for `def` from the working directory:
 * its name when the name finds this very directory (as `verity prepare`
 * looks it up: a directory of that name, then `fixtures/`, then
 * `targets/`), else its directory, relative when below the working
 * directory, quoted for a shell when it needs it.
 */
async function prepareArgument(
  def: Pick<Definition, "name" | "dir">,
): Promise<string> {
  for (const base of [".", "fixtures", "targets"]) {
    const dir = resolve(base, def.name);
    if (await isDirectory(dir)) {
      if (dir === resolve(def.dir)) return def.name;
      break;
    }
  }
  const rel = relative(Deno.cwd(), def.dir);
  const shown = rel !== "" && !rel.startsWith("..") ? rel : def.dir;
  // A path never looks like a name: "./x", not "x".
  const path = shown.includes("/") ? shown : `./${shown}`;
  return /^[\w@%+=:,./-]+$/.test(path)
    ? path
    : `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * For a target with a `[source]`: check that it was prepared for exactly
 * its pin and that the prepared files are intact, and return `{source}` and
 * the DENO_DIR. Null for definitions without a `[source]`. Throws
 * {@linkcode PrepareError} (exit 2) with what to do otherwise.
 *
 * @example
 * ```ts ignore
 * const prepared = await resolvePreparedRun(def);
 * // prepared?.denoDir === "/repo/.verity/deno_dir"
 * ```
 */
export async function resolvePreparedRun(
  def: Pick<Definition, "source" | "file" | "command" | "name" | "dir">,
  options: CacheOptions = {},
): Promise<PreparedRun | null> {
  if (def.source === null) return null;
  const pin = parseSourcePin(def.source, def.file);
  checkCommandRunsPin(def.command, pin, def.file);
  const layout = cacheLayout(options);
  const file = await readPrepared(layout);
  const node = isNodeCommand(def.command);
  let entry = file.targets[preparedKey(layout, def.dir)] ?? null;
  if (
    entry !== null && (entry.runtime ?? "deno") !== (node ? "node" : "deno")
  ) {
    // Prepared for the other runtime: as good as not prepared.
    entry = null;
  }
  const denoDir = entry ? resolve(layout.root, entry.denoDir) : layout.denoDir;
  const nodeModules = entry?.nodeModules
    ? resolve(layout.root, entry.nodeModules)
    : null;
  let lockSha256: string | null = null;
  if (entry) {
    try {
      lockSha256 = sha256Of(
        await Deno.readFile(join(def.dir, node ? NODE_LOCK_FILE : LOCK_FILE)),
      );
    } catch {
      lockSha256 = null;
    }
  }
  const problem = checkPrepared(def.name, pin, entry, {
    lockSha256,
    prepareArg: await prepareArgument(def),
    packageCached: node
      ? await nodePackageInstalled(nodeModules, pin.package, pin.version)
      : await packageCached(denoDir, pin.package, pin.version) !== null,
  });
  if (problem !== null) throw new PrepareError(problem);
  return {
    source: resolve(layout.root, entry!.source),
    denoDir,
    nodeModules,
    entry: entry!,
  };
}
