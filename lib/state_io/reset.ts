/**
 * Reset: build a fresh state directory from a definition's seeds.
 *
 * - sqlite: a `.sql` script run by SQLite (node:sqlite) on a new file at
 *   the label; a seed that already is a database image ("SQLite format 3")
 *   is copied.
 * - fs: a directory tree copied to the label (files, directories,
 *   symbolic links; permission bits kept).
 * - json: the file copied to the label.
 * - postgres: a session database created from the adapter's template
 *   (`CREATE DATABASE … TEMPLATE`, see `postgres_cluster.ts`); nothing is
 *   written to the state directory.
 *
 * fs seeds are laid first, then json and sqlite files on top. Every file is
 * written to a temporary name and renamed, so a killed reset never leaves a
 * half-written file at a label.
 *
 * @module
 */
import type { AdapterDef, Definition } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { seedPath, walkSeed } from "../definition/seeds.ts";
import { isSqliteImageFile, MAX_IMAGE_SEED_BYTES } from "../definition/load.ts";
import {
  DefinitionError,
  EnvironmentError,
  InputError,
  SeedError,
} from "../errors.ts";
import type { PostgresCluster } from "./postgres_cluster.ts";
import { DatabaseSync } from "node:sqlite";
import { refuseOutside } from "../../adapters/sqlite/sql.ts";
import { isSqliteImage } from "../../adapters/sqlite/format.ts";
import { seedRefusal, shownSeedPath } from "./seed_guard.ts";
import { exists } from "../common/exists.ts";
import { createHash } from "node:crypto";
import { markOwner } from "../common/owner.ts";

export { isSqliteImage };

/**
 * The database image a sqlite seed produces, in memory (built on disk by
 * {@linkcode writeSqliteSeed}, then read). Throws a
 * {@linkcode DefinitionError} naming the seed when the script fails.
 */
export async function sqliteSeedImage(
  def: Pick<Definition, "dir" | "file">,
  a: AdapterDef,
  index: number,
): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "verity-seed-image-" });
  try {
    await writeSqliteSeed(def, a, index, `${dir}/seed.db`);
    return await Deno.readFile(`${dir}/seed.db`);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Write the database a sqlite seed gives to `dest` (a temporary name, then
 * renamed: never half-written): a seed that already is a database image is
 * copied; a SQL script is run by SQLite (node:sqlite) on a new file, so no
 * image is ever held in memory, whatever its size. Rebuilt for every reset
 * until two builds of a script that calls no clock or random function gave
 * the same bytes; from then on a copy of that build (kept in a temporary
 * directory of this process, removed when it exits) is copied instead. A
 * seed that differs between builds is rebuilt every time, so verify-reset
 * and every session see what it really does. Says which it did. Throws a
 * {@linkcode DefinitionError} naming the seed when the script fails.
 *
 * A script that sets `journal_mode=WAL` gets a database in rollback-journal
 * mode (WAL is the one journal mode kept in the file).
 */
export async function writeSqliteSeed(
  def: Pick<Definition, "dir" | "file">,
  a: AdapterDef,
  index: number,
  dest: string,
): Promise<"image" | "built" | "cached"> {
  const p = seedPath(def, a.seed!);
  const folder = dest.slice(0, dest.lastIndexOf("/"));
  await Deno.mkdir(folder, { recursive: true });
  if (isSqliteImageFile(p)) {
    await copyAtomic(p, dest);
    return "image";
  }
  const sql = await Deno.readTextFile(p);
  const where = (line: number | null) => ({
    seed: shownSeedPath(p, Deno.cwd()),
    line,
  });
  const refused = seedRefusal(sql, "sqlite");
  if (refused !== null) {
    throw new SeedError(
      def.file,
      `adapters[${index}].seed`,
      where(refused.line),
      refused.reason,
    );
  }
  const key = `${p}\u0000${sql}`;
  const known = SEED_FILES.get(key);
  if (known?.file !== undefined) {
    try {
      await copyAtomic(known.file, dest);
      return "cached";
    } catch (e) {
      // The cached build was removed under us: build again.
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      SEED_FILES.delete(key);
    }
  }
  // Built in a directory of its own beside dest (a journal or WAL file
  // SQLite leaves goes with it), then renamed into place.
  const work = await Deno.makeTempDir({ dir: folder, prefix: ".verity-seed-" });
  try {
    const built = `${work}/seed.db`;
    try {
      buildSqliteSeed(sql, built);
    } catch (e) {
      if (e instanceof RefusedBySqlite) {
        throw new SeedError(
          def.file,
          `adapters[${index}].seed`,
          where(null),
          `${e.message} is not allowed in a seed`,
        );
      }
      throw new DefinitionError(
        def.file,
        `adapters[${index}].seed`,
        `SQL seed ${a.seed} failed: ${(e as Error).message}`,
      );
    }
    const size = (await Deno.stat(built)).size;
    if (size > MAX_IMAGE_SEED_BYTES) {
      throw new DefinitionError(
        def.file,
        `adapters[${index}].seed`,
        `SQL seed ${a.seed} builds a database of ${size} bytes, over the limit of ${MAX_IMAGE_SEED_BYTES} bytes (128 MiB) for a SQLite database`,
      );
    }
    if (!NONDETERMINISTIC_SQL.test(sql)) {
      const digest = await fileDigest(built);
      if (known?.digest === digest) {
        const file = `${await seedCacheDir()}/${digest}.db`;
        await Deno.copyFile(built, file);
        known.file = file;
      } else SEED_FILES.set(key, { digest });
    }
    await Deno.rename(built, dest);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
  return "built";
}

/** What SQLite's authorizer refused in a seed (its message: what it was). */
class RefusedBySqlite extends Error {}

/** Run a SQL seed on a new database file at `path` (rollback-journal mode, at least one page). */
function buildSqliteSeed(sql: string, path: string): void {
  const db = new DatabaseSync(path);
  try {
    const refused = refuseOutside(db);
    try {
      db.exec(sql);
    } catch (e) {
      const what = refused();
      throw what === null ? e : new RefusedBySqlite(what);
    }
    const mode = db.prepare("PRAGMA journal_mode").get() as
      | { journal_mode?: string }
      | undefined;
    if (mode?.journal_mode === "wal") db.exec("PRAGMA journal_mode=DELETE");
    // A script that wrote nothing leaves an empty file: write a database
    // of one page (its header).
    const pages = db.prepare("PRAGMA page_count").get() as
      | { page_count?: number }
      | undefined;
    if (pages?.page_count === 0) db.exec("PRAGMA user_version = 0");
  } finally {
    db.close();
  }
}

/** SHA-256 of a file, read 1 MiB at a time. */
async function fileDigest(path: string): Promise<string> {
  const h = createHash("sha256");
  using f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(1 << 20);
  while (true) {
    const n = await f.read(buf);
    if (n === null) break;
    h.update(buf.subarray(0, n));
  }
  return h.digest("hex");
}

/** Write `dest` through a temporary name `fill` writes (never half-written). */
async function atomically(
  dest: string,
  fill: (tmp: string) => Promise<void>,
): Promise<void> {
  const tmp = `${dest}.verity-tmp-${crypto.randomUUID()}`;
  try {
    await fill(tmp);
    await Deno.rename(tmp, dest);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/** Copy a file to `dest` through a temporary name (never half-written). */
function copyAtomic(from: string, dest: string): Promise<void> {
  return atomically(dest, (tmp) => Deno.copyFile(from, tmp));
}

/**
 * SQL seeds' databases, by seed path and text: the digest of the first
 * build, and once a second build gave the same bytes, the cached copy.
 */
const SEED_FILES = new Map<string, { digest: string; file?: string }>();

let cacheDir: string | null = null;

/** This process's directory of cached seed databases, if one was made (tests). */
export function seedCacheDirectory(): string | null {
  return cacheDir;
}

/**
 * This process's directory of cached seed databases, removed when it
 * exits. It names its owner in `.owner`, as the scratch directories of
 * runs do: one left by a process killed outright (SIGKILL, where no exit
 * handler runs) is removed by the next `verity run` or `verity ledger
 * recover` (`cleanScratch`), since it may hold copies of a large seed.
 */
async function seedCacheDir(): Promise<string> {
  if (cacheDir === null) {
    const dir = await Deno.makeTempDir({ prefix: "verity-seeds-" });
    await markOwner(dir);
    cacheDir = dir;
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // already gone
      }
    });
  }
  return cacheDir;
}

/** Whether a SQL seed calls a function whose result differs between builds. */
export function nondeterministicSql(sql: string): boolean {
  return NONDETERMINISTIC_SQL.test(sql);
}

/** SQL functions whose result differs between builds: never reuse such a seed's image. */
const NONDETERMINISTIC_SQL =
  /\b(random|randomblob|date|time|datetime|julianday|unixepoch|strftime|timediff|changes|last_insert_rowid|total_changes|sqlite_source_id)\s*\(|\bcurrent_(date|time|timestamp)\b/i;

async function writeAtomic(
  path: string,
  bytes: Uint8Array,
  mode?: number,
): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await atomically(path, async (tmp) => {
    await Deno.writeFile(tmp, bytes, mode === undefined ? {} : { mode });
    if (mode !== undefined) await Deno.chmod(tmp, mode);
  });
}

/** The run's cluster, which a postgres adapter needs (`who` names the caller when it is missing). */
export function runCluster(
  options: { postgres?: PostgresCluster | null },
  who: string,
): PostgresCluster {
  if (!options.postgres) {
    throw new TypeError(`${who}: a postgres adapter needs the run's cluster`);
  }
  return options.postgres;
}

/** Options of {@linkcode resetState}. */
export interface ResetOptions {
  /**
   * The run's private PostgreSQL cluster (its templates seeded), for a
   * definition with a postgres adapter: a session database is created from
   * the template for `stateDir`.
   * @default {null}
   */
  postgres?: PostgresCluster | null;
}

/**
 * Create `stateDir` (it must not exist, or be empty) and materialise every
 * adapter's seed at its label. Requires `--allow-read` (definition dir) and
 * `--allow-write` (state dir).
 *
 * @example
 * ```ts
 * import type { Definition } from "../definition/types.ts";
 *
 * async function fresh(def: Definition): Promise<string> {
 *   const dir = await Deno.makeTempDir({ prefix: "verity-state-" });
 *   await resetState(def, dir);
 *   return dir;
 * }
 * ```
 */
export async function resetState(
  def: Pick<Definition, "adapters" | "dir" | "file">,
  stateDir: string,
  options: ResetOptions = {},
): Promise<void> {
  try {
    for await (const _ of Deno.readDir(stateDir)) {
      throw new EnvironmentError(
        `reset: state directory ${stateDir} is not empty`,
      );
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.mkdir(stateDir, { recursive: true });
  const at = (
    label: string,
  ) => (normalizeLabel(label) === "."
    ? stateDir
    : `${stateDir}/${normalizeLabel(label)}`);
  for (const a of def.adapters) {
    if (a.kind !== "postgres") continue;
    await runCluster(options, "resetState").createSession(stateDir, a);
  }
  const order = def.adapters.map((a, i) => ({ a, i })).filter(({ a }) =>
    a.seed !== null && a.kind !== "postgres"
  );
  order.sort((x, y) =>
    (x.a.kind === "fs" ? 0 : 1) - (y.a.kind === "fs" ? 0 : 1) || x.i - y.i
  );
  for (const { a, i } of order) {
    const src = seedPath(def, a.seed!);
    const dest = at(a.label);
    try {
      if (a.kind === "sqlite") {
        await writeSqliteSeed(def, a, i, dest);
      } else if (a.kind === "json") {
        await writeAtomic(dest, await Deno.readFile(src));
      } else {
        await Deno.mkdir(dest, { recursive: true });
        // Directory modes are applied last, deepest first, so a read-only directory can still be filled.
        const dirModes: { path: string; mode: number }[] = [];
        for (const e of await walkSeed(src)) {
          const from = `${src}/${e.rel}`;
          const to = `${dest}/${e.rel}`;
          if (e.kind === "dir") {
            await Deno.mkdir(to, { recursive: true });
            const m = (await Deno.stat(from)).mode;
            if (m !== null) dirModes.push({ path: to, mode: m & 0o7777 });
          } else if (e.kind === "symlink") {
            await Deno.symlink(await Deno.readLink(from), to);
          } else {
            const m = (await Deno.stat(from)).mode;
            await writeAtomic(
              to,
              await Deno.readFile(from),
              m === null ? undefined : m & 0o7777,
            );
          }
        }
        for (const d of dirModes.reverse()) await Deno.chmod(d.path, d.mode);
      }
    } catch (e) {
      if (e instanceof InputError) throw e;
      if (
        e instanceof Deno.errors.NotFound &&
        !(await exists(src, { followSymlinks: false }))
      ) {
        throw new DefinitionError(
          def.file,
          `adapters[${i}].seed`,
          `seed ${JSON.stringify(a.seed)} not found (${src})`,
        );
      }
      throw e;
    }
  }
}
