/**
 * Reset: build a fresh state directory from a definition's seeds.
 *
 * - sqlite: a `.sql` script executed by the WASM engine (sql.js), its image
 *   written to the label; a seed that already is a database image
 *   ("SQLite format 3") is copied.
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
import { DefinitionError, UsageError } from "../errors.ts";
import type { PostgresCluster } from "./postgres_cluster.ts";
import { loadSqlEngine } from "../../adapters/sql_engine.ts";
import { buildSqliteImage } from "../../adapters/sqlite_seed.ts";
import { exists } from "../common/exists.ts";
import { createHash } from "node:crypto";

const SQLITE_MAGIC = "SQLite format 3\0";

/** Whether bytes start with the SQLite database header. */
export function isSqliteImage(bytes: Uint8Array): boolean {
  if (bytes.length < 16) return false;
  for (let i = 0; i < 16; i++) {
    if (bytes[i] !== SQLITE_MAGIC.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The database image a sqlite seed produces (script run in memory). Throws
 * a {@linkcode DefinitionError} naming the seed when the script fails.
 */
export async function sqliteSeedImage(
  def: Pick<Definition, "dir" | "file">,
  a: AdapterDef,
  index: number,
): Promise<Uint8Array> {
  const p = seedPath(def, a.seed!);
  const bytes = await Deno.readFile(p);
  if (isSqliteImage(bytes)) return bytes;
  const sql = new TextDecoder().decode(bytes);
  const key = `${p}\u0000${sql}`;
  const known = SEED_IMAGES.get(key);
  if (known?.image) return known.image;
  const SQL = await loadSqlEngine();
  try {
    const image = buildSqliteImage(SQL, sql);
    // Rebuilt for every reset until two builds of a seed that calls no
    // clock or random function gave the same bytes; from then on the
    // image is reused (a session's reset was mostly sql.js running the
    // seed). A seed that differs between builds is rebuilt every time, so
    // verify-reset and every session see what it really does. The first
    // build is remembered by its digest only: two images of a large seed
    // are never held at once.
    if (!NONDETERMINISTIC_SQL.test(sql)) {
      const digest = createHash("sha256").update(image).digest("hex");
      if (known?.digest === digest) known.image = image;
      else SEED_IMAGES.set(key, { digest });
    }
    return image;
  } catch (e) {
    throw new DefinitionError(
      def.file,
      `adapters[${index}].seed`,
      `SQL seed ${a.seed} failed: ${(e as Error).message}`,
    );
  }
}

/** Whether a SQL seed calls a function whose result differs between builds. */
export function nondeterministicSql(sql: string): boolean {
  return NONDETERMINISTIC_SQL.test(sql);
}

/** SQLite images built from SQL seeds, by seed path and text (see sqliteSeedImage). */
const SEED_IMAGES = new Map<string, { digest: string; image?: Uint8Array }>();

/** SQL functions whose result differs between builds: never reuse such a seed's image. */
const NONDETERMINISTIC_SQL =
  /\b(random|randomblob|date|time|datetime|julianday|unixepoch|strftime|timediff|changes|last_insert_rowid|total_changes|sqlite_source_id)\s*\(|\bcurrent_(date|time|timestamp)\b/i;

async function writeAtomic(
  path: string,
  bytes: Uint8Array,
  mode?: number,
): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const tmp = `${path}.verity-tmp-${crypto.randomUUID()}`;
  try {
    await Deno.writeFile(tmp, bytes, mode === undefined ? {} : { mode });
    if (mode !== undefined) await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
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
 * declare const def: Definition;
 *
 * await resetState(def, await Deno.makeTempDir({ prefix: "verity-state-" }));
 * ```
 */
export async function resetState(
  def: Pick<Definition, "adapters" | "dir" | "file">,
  stateDir: string,
  options: ResetOptions = {},
): Promise<void> {
  try {
    for await (const _ of Deno.readDir(stateDir)) {
      throw new UsageError(`reset: state directory ${stateDir} is not empty`);
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
    if (!options.postgres) {
      throw new TypeError(
        "resetState: a postgres adapter needs the run's cluster",
      );
    }
    await options.postgres.createSession(stateDir, a);
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
        await writeAtomic(dest, await sqliteSeedImage(def, a, i));
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
      if (e instanceof UsageError) throw e;
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
