/**
 * A private PostgreSQL cluster for one verity run: `initdb` into the run's
 * scratch directory, one `postgres` on a Unix socket there (and 127.0.0.1
 * with `listen = "tcp"`), stopped and removed at the end. Per adapter a
 * template database is seeded once (through the protocol, as the
 * non-superuser `verity_owner`), checked and closed; every session gets its
 * own database from it and its own login role, dropped after the session.
 * Every role logs in with a password derived from a secret of the run.
 * Snapshots read as `verity_observer` in a read-only transaction under
 * {@linkcode OBSERVER_SETTINGS}. The roles, grants and why: docs/state.md.
 * Run as root, `initdb` and `postgres` run as `nobody`.
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-write`, `--allow-env`
 * and `--allow-sys` (uid).
 *
 * @module
 */
import { isPattern } from "../state/classify.ts";
import pg from "pg";
import type { AdapterDef, Definition } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { seedPath } from "../definition/seeds.ts";
import { DefinitionError, EnvironmentError, SeedError } from "../errors.ts";
import { seedRefusal, shownSeedPath } from "./seed_guard.ts";
import {
  type PostgresObservation,
  readPostgres,
} from "../../adapters/postgres.ts";
import { PG_SESSION_SETTINGS, quoteLiteral } from "../../adapters/pg_values.ts";
import { sha256Hex } from "../evidence/canonical.ts";
import { liveClusters as live } from "./postgres_live.ts";
import { freeLoopbackPort } from "../wire/local_http.ts";

/** What the cluster needs of a definition. */
export type StatefulDefinition = Pick<Definition, "adapters" | "dir" | "file">;

/** The minimal `pg.Client` surface verity uses. */
interface PgClient {
  connect(): Promise<void>;
  query(
    q: { text: string; rowMode: "array" },
  ): Promise<{ rows: (string | null)[][] }>;
  end(): Promise<void>;
  on(event: "error", f: (e: Error) => void): void;
}

type PgClientCtor = new (config: Record<string, unknown>) => PgClient;
const Client = (pg as unknown as { Client: PgClientCtor }).Client;

/** Every value as its text form: typing is done by `pg_values.ts`. */
const TEXT_TYPES = { getTypeParser: () => (v: string) => v };

/**
 * The observer's own settings, over whatever the server set for its
 * database (`ALTER DATABASE … SET`, applied when the observer connects):
 * only `pg_catalog` on the search path (no server function or operator
 * shadows the ones snapshots call), row-level security off (with
 * BYPASSRLS: bypassed; a policy could only make a read fail, never filter
 * it), no timeouts, standard strings, no fuzzy GIN limit.
 */
const OBSERVER_SETTINGS: Readonly<Record<string, string>> = {
  search_path: "pg_catalog",
  row_security: "off",
  statement_timeout: "0",
  lock_timeout: "0",
  idle_in_transaction_session_timeout: "0",
  standard_conforming_strings: "on",
  gin_fuzzy_search_limit: "0",
  transform_null_equals: "off",
};

const ADMIN = "verity";
const OWNER = "verity_owner";
const OBSERVER = "verity_observer";
const PORT = 5432;
const NOBODY = { uid: 65534, gid: 65534 };
const INSTALL_HINT =
  "install PostgreSQL's server binaries (Debian/Ubuntu: apt-get install -y postgresql), or set VERITY_PG_BINDIR to the directory holding initdb and postgres";

/**
 * Find the directory holding `initdb`, `postgres` and `psql`:
 * `VERITY_PG_BINDIR`, else the newest `/usr/lib/postgresql/<v>/bin`, else
 * `PATH`. Throws a {@linkcode EnvironmentError} saying how to install them.
 */
export function findPostgresBinDir(): string {
  const has = (dir: string) =>
    ["initdb", "postgres", "psql"].every((b) => {
      try {
        return Deno.statSync(`${dir}/${b}`).isFile;
      } catch {
        return false;
      }
    });
  const env = Deno.env.get("VERITY_PG_BINDIR");
  if (env) {
    if (has(env)) return env;
    throw new EnvironmentError(
      `VERITY_PG_BINDIR=${env} holds no initdb, postgres and psql: ${INSTALL_HINT}`,
    );
  }
  const versions: number[] = [];
  try {
    for (const e of Deno.readDirSync("/usr/lib/postgresql")) {
      if (/^\d+$/.test(e.name)) versions.push(Number(e.name));
    }
  } catch {
    // not a Debian layout
  }
  versions.sort((a, b) => b - a);
  for (const v of versions) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (v >= 14 && has(dir)) return dir;
  }
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && has(dir)) return dir;
  }
  throw new EnvironmentError(
    `PostgreSQL 14 or newer not found (looked in VERITY_PG_BINDIR, /usr/lib/postgresql/*/bin and PATH): ${INSTALL_HINT}`,
  );
}

/** Options of {@linkcode PostgresCluster.start}. */
export interface ClusterOptions {
  /** Lines of progress, or null. @default null */
  progress?: ((line: string) => void) | null;
  /**
   * Also listen on 127.0.0.1 on a free port (an adapter with
   * `listen = "tcp"`). Every connection, socket or TCP, needs its role's
   * password (scram-sha-256).
   * @default {false}
   */
  tcp?: boolean;
}

/** Run `cmd` to its end (as `nobody` when verity runs as root); its stderr. */
async function run(
  cmd: string,
  args: string[],
  asNobody: boolean,
): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(cmd, {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    ...(asNobody ? NOBODY : {}),
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/** A role's password: derived from the cluster's secret, 32 hex digits. */
function rolePassword(secret: string, role: string): string {
  return sha256Hex(`${secret}\0${role}`).slice(0, 32);
}

/** The name verity gives a session's database and role (≤ 63 bytes). */
export function sessionDbName(stateDir: string, label: string): string {
  return `verity_s_${sha256Hex(`${stateDir}\0${label}`).slice(0, 24)}`;
}

/** The template database of an adapter label. */
export function templateName(label: string): string {
  return `verity_t_${sha256Hex(label).slice(0, 24)}`;
}

/** Connection details a server gets for one session's database. */
export interface PgConnection {
  /** The session role's password (the URL carries it too). */
  password: string;
  /** With `listen = "tcp"`: the loopback port a sandbox must let the server reach (else null). */
  tcpPort: number | null;
  /**
   * With `listen = "tcp"`: the cluster's Unix socket file, where a relay
   * forwards that port from a server's own network namespace (bubblewrap);
   * else null.
   */
  tcpSocket?: string | null;
  /**
   * `postgresql://<role>:<password>@localhost/<db>?host=<socket dir>&port=5432`: the
   * `host` parameter (a directory: a Unix socket) overrides the URL's host
   * name, which is there only because WHATWG URL parsers (used by servers to
   * print the URL) refuse a user name without a host.
   */
  url: string;
  /** The socket directory (libpq's host for Unix sockets). */
  host: string;
  port: string;
  db: string;
  user: string;
  /** The socket file a sandbox must let the server open (null over TCP). */
  socket: string | null;
}

/** A running private cluster. */
export class PostgresCluster {
  readonly socketDir: string;
  /** Every role's password is derived from this (never leaves the process). */
  readonly #secret: string;
  #proc: Deno.ChildProcess;
  #admin: PgClient | null = null;
  #adminQueue: Promise<unknown> = Promise.resolve();
  #stopped = false;

  private constructor(
    readonly root: string,
    readonly bin: string,
    proc: Deno.ChildProcess,
    readonly asNobody: boolean,
    /** The port: 5432 on the socket only, a free one when it also listens on TCP. */
    readonly port: number,
    /** Whether it also listens on 127.0.0.1:{@linkcode port}. */
    readonly tcp: boolean,
    secret: string,
  ) {
    this.#secret = secret;
    this.socketDir = `${root}/socket`;
    this.#proc = proc;
  }

  /**
   * `initdb` into `<root>` (created; must not exist) and start the server
   * on a socket in `<root>/socket`. Resolves once it accepts connections.
   * Run as root, the cluster runs as `nobody`, which must be able to reach
   * `<root>`: verity's own scratch directories (`verity-*`) above it are made
   * traversable (search permission only); when another directory above it is
   * closed (a home directory), the cluster goes to a new `/tmp/verity-pg-*`
   * instead, so nothing of the machine's permissions changes.
   */
  static async start(
    root: string,
    options: ClusterOptions = {},
  ): Promise<PostgresCluster> {
    const bin = findPostgresBinDir();
    const asNobody = Deno.uid() === 0;
    const say = options.progress ?? (() => {});
    await Deno.mkdir(root, { recursive: true });
    if (asNobody) {
      const closed: string[] = [];
      let p = root;
      while (p.lastIndexOf("/") > 0) {
        p = p.slice(0, p.lastIndexOf("/"));
        const st = await Deno.stat(p);
        if (st.mode !== null && (st.mode & 0o001) === 0) closed.push(p);
      }
      const ours = (d: string) =>
        d.slice(d.lastIndexOf("/") + 1).startsWith("verity-");
      if (closed.every(ours)) {
        for (const d of closed) {
          const st = await Deno.stat(d);
          await Deno.chmod(d, ((st.mode ?? 0o700) & 0o7777) | 0o111);
        }
      } else {
        await Deno.remove(root, { recursive: true }).catch(() => {});
        root = await Deno.makeTempDir({ dir: "/tmp", prefix: "verity-pg-" });
      }
    }
    const data = `${root}/data`;
    const socket = `${root}/socket`;
    await Deno.mkdir(socket, { mode: 0o755 });
    await Deno.chmod(root, 0o755);
    if (asNobody) {
      await Deno.chown(root, NOBODY.uid, NOBODY.gid);
      await Deno.chown(socket, NOBODY.uid, NOBODY.gid);
    }
    const t0 = performance.now();
    // Every role logs in with a password derived from a secret of this run
    // (never written down but for initdb's password file, removed at once):
    // a server handed the socket cannot name verity's superuser instead of
    // its session role.
    const secret = crypto.randomUUID();
    const pwfile = `${root}/initdb.pw`;
    await Deno.writeTextFile(pwfile, rolePassword(secret, ADMIN) + "\n", {
      mode: 0o600,
    });
    if (asNobody) await Deno.chown(pwfile, NOBODY.uid, NOBODY.gid);
    const init = await run(`${bin}/initdb`, [
      "-D",
      data,
      "-U",
      ADMIN,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions",
    ], asNobody);
    await Deno.remove(pwfile).catch(() => {});
    if (init.code !== 0) {
      throw new Error(
        `initdb failed: ${init.stderr.trim().split("\n").slice(-3).join(" ")}`,
      );
    }
    const tcp = options.tcp === true;
    const port = tcp ? freeLoopbackPort() : PORT;
    await Deno.writeTextFile(
      `${data}/pg_hba.conf`,
      "local all all scram-sha-256\n" +
        (tcp ? "host all all 127.0.0.1/32 scram-sha-256\n" : ""),
    );
    const settings = {
      listen_addresses: tcp ? "127.0.0.1" : "",
      unix_socket_permissions: "0777",
      fsync: "off",
      synchronous_commit: "off",
      full_page_writes: "off",
      max_connections: "200",
      logging_collector: "off",
    };
    const proc = new Deno.Command(`${bin}/postgres`, {
      args: ["-D", data, "-k", socket, "-p", String(port)].concat(
        ...Object.entries(settings).map(([k, v]) => ["-c", `${k}=${v}`]),
      ),
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      ...(asNobody ? NOBODY : {}),
    }).spawn();
    const cluster = new PostgresCluster(
      root,
      bin,
      proc,
      asNobody,
      port,
      tcp,
      secret,
    );
    live.add(cluster);
    const log: string[] = [];
    void (async () => {
      const dec = new TextDecoder();
      for await (const chunk of proc.stderr) {
        if (log.length < 200) log.push(dec.decode(chunk));
      }
    })().catch(() => {});
    const sockFile = `${socket}/.s.PGSQL.${port}`;
    const deadline = performance.now() + 30_000;
    while (true) {
      try {
        await Deno.stat(sockFile);
        await cluster.#adminQuery("SELECT 1");
        break;
      } catch (e) {
        if (performance.now() > deadline) {
          await cluster.stop();
          throw new Error(
            `postgres did not start within 30 s: ${(e as Error).message}; ${
              log.join("").trim().split("\n").slice(-3).join(" ")
            }`,
          );
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    await cluster.#adminQuery(
      // Seeds run as this role (LOGIN, with its password, never handed
      // out): not a superuser, no pg_execute_server_program.
      `CREATE ROLE ${OWNER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB PASSWORD ${
        quoteLiteral(rolePassword(secret, OWNER))
      }`,
      // BYPASSRLS: no row-level security policy a server writes (even
      // FORCEd, even one naming this role) hides a row from snapshots.
      `CREATE ROLE ${OBSERVER} LOGIN BYPASSRLS NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${
        quoteLiteral(rolePassword(secret, OBSERVER))
      }`,
      `GRANT pg_read_all_data TO ${OBSERVER}`,
      // No role but verity's own reaches the maintenance databases (a
      // session role could otherwise connect to them and act on its own
      // database from outside it).
      `REVOKE CONNECT, TEMPORARY ON DATABASE postgres FROM PUBLIC`,
      `REVOKE CONNECT, TEMPORARY ON DATABASE template1 FROM PUBLIC`,
    );
    say(
      `postgres: private cluster up in ${
        Math.round(performance.now() - t0)
      } ms (socket ${socket}${tcp ? `, and 127.0.0.1:${port}` : ""}${
        asNobody ? ", running as nobody" : ""
      })`,
    );
    return cluster;
  }

  /**
   * The environment for `psql` or `pg_dump` as verity's superuser over the
   * socket (its password); for verity's own tools and benchmarks only.
   */
  adminEnv(): Record<string, string> {
    return { PGPASSWORD: rolePassword(this.#secret, ADMIN) };
  }

  /** The socket file. */
  get socketFile(): string {
    return `${this.socketDir}/.s.PGSQL.${this.port}`;
  }

  #connect(user: string, database: string): PgClient {
    const c = new Client({
      host: this.socketDir,
      port: this.port,
      user,
      password: rolePassword(this.#secret, user),
      database,
      types: TEXT_TYPES,
    });
    c.on("error", () => {});
    return c;
  }

  /** Run admin statements in order, each on its own (as the superuser, in `postgres`). */
  #adminQuery(...statements: string[]): Promise<(string | null)[][]> {
    const next = this.#adminQueue.then(async () => {
      if (this.#admin === null) {
        const c = this.#connect(ADMIN, "postgres");
        await c.connect();
        this.#admin = c;
      }
      let rows: (string | null)[][] = [];
      for (const text of statements) {
        rows = (await this.#admin.query({ text, rowMode: "array" })).rows;
      }
      return rows;
    });
    this.#adminQueue = next.catch(() => {});
    return next;
  }

  /**
   * Seed the template database of adapter `index` from its SQL seed (none:
   * an empty database), sent through the protocol as the owning role (not a
   * superuser; a psql meta-command or COPY is refused first), then check it
   * (every table keyed, classifications and masks matching) and close it to
   * connections. Throws a {@linkcode DefinitionError} naming the seed or key.
   */
  async seedTemplate(
    def: StatefulDefinition,
    index: number,
  ): Promise<PostgresObservation> {
    const a = def.adapters[index]!;
    const tpl = templateName(normalizeLabel(a.label));
    await this.#adminQuery(
      `CREATE DATABASE ${tpl} OWNER ${OWNER}`,
      `REVOKE ALL ON DATABASE ${tpl} FROM PUBLIC`,
      `GRANT CONNECT ON DATABASE ${tpl} TO ${OBSERVER}`,
    );
    if (a.seed !== null) {
      const file = seedPath(def, a.seed);
      let sql: string;
      try {
        sql = await Deno.readTextFile(file);
      } catch (e) {
        throw new DefinitionError(
          def.file,
          `adapters[${index}].seed`,
          `cannot read seed ${JSON.stringify(a.seed)}: ${(e as Error).message}`,
        );
      }
      const refused = seedRefusal(sql, "postgres");
      if (refused !== null) {
        throw new SeedError(
          def.file,
          `adapters[${index}].seed`,
          { seed: shownSeedPath(file, Deno.cwd()), line: refused.line },
          refused.reason,
        );
      }
      // Through the protocol, as the owning role itself (not a superuser:
      // no `RESET ROLE` back to one, no `COPY … PROGRAM`, no server files),
      // never through psql: a seed's backslash is no shell escape.
      const seeder = this.#connect(OWNER, tpl);
      try {
        await seeder.connect();
        await seeder.query({ text: sql, rowMode: "array" });
      } catch (e) {
        const err = e as Error & { position?: string };
        const at = Number(err.position);
        const line = Number.isInteger(at) && at > 0
          ? ` at line ${sql.slice(0, at - 1).split("\n").length}`
          : "";
        throw new DefinitionError(
          def.file,
          `adapters[${index}].seed`,
          `SQL seed ${a.seed} failed in PostgreSQL${line}: ${
            err.message.split("\n")[0]
          }`,
        );
      } finally {
        await seeder.end().catch(() => {});
      }
    }
    // The seeded objects stay verity_owner's (every session role is its
    // member, so a server may change the tables), the database becomes the
    // superuser's: a session role must not `ALTER DATABASE` the template
    // (`SET`, `ALLOW_CONNECTIONS`, `RENAME`) nor connect to it as its owner.
    await this.#adminQuery(`ALTER DATABASE ${tpl} OWNER TO ${ADMIN}`);
    const obs = await this.observe(tpl, a);
    checkTemplate(def, index, obs);
    await this.#adminQuery(
      `ALTER DATABASE ${tpl} WITH ALLOW_CONNECTIONS false`,
    );
    return obs;
  }

  /** Create a session's role and database from the adapter's template. */
  async createSession(stateDir: string, a: AdapterDef): Promise<PgConnection> {
    const label = normalizeLabel(a.label);
    const db = sessionDbName(stateDir, label);
    const c = this.connection(stateDir, a);
    await this.#adminQuery(
      `CREATE ROLE ${db} LOGIN IN ROLE ${OWNER}${
        c.password ? ` PASSWORD ${quoteLiteral(c.password)}` : ""
      }`,
      // FILE_COPY copies the template's files (one checkpoint, cheap with
      // fsync off); WAL_LOG, the default, rewrites every page into the WAL.
      `CREATE DATABASE ${db} TEMPLATE ${
        templateName(label)
      } OWNER ${db} STRATEGY FILE_COPY`,
      `REVOKE ALL ON DATABASE ${db} FROM PUBLIC`,
      `GRANT CONNECT ON DATABASE ${db} TO ${OBSERVER}`,
    );
    return c;
  }

  /** The connection details of a session's database (it need not exist). */
  connection(stateDir: string, a: AdapterDef): PgConnection {
    const db = sessionDbName(stateDir, normalizeLabel(a.label));
    const password = rolePassword(this.#secret, db);
    const common = { port: String(this.port), db, user: db, password };
    if (a.listen === "tcp" && this.tcp) {
      return {
        url: `postgresql://${db}:${password}@127.0.0.1:${this.port}/${db}`,
        host: "127.0.0.1",
        ...common,
        socket: null,
        tcpPort: this.port,
        tcpSocket: this.socketFile,
      };
    }
    return {
      url: `postgresql://${db}:${password}@localhost/${db}?host=${
        encodeURIComponent(this.socketDir)
      }&port=${this.port}`,
      host: this.socketDir,
      ...common,
      socket: this.socketFile,
      tcpPort: null,
    };
  }

  /** Drop a session's database (closing any connection left) and role. */
  async dropSession(stateDir: string, a: AdapterDef): Promise<void> {
    const db = sessionDbName(stateDir, normalizeLabel(a.label));
    await this.#adminQuery(
      `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`,
      `DROP ROLE IF EXISTS ${db}`,
    );
  }

  /**
   * Observe a database as `verity_observer` in one read-only, repeatable-read
   * transaction under the canonical session settings.
   */
  async observe(db: string, a: AdapterDef): Promise<PostgresObservation> {
    const c = this.#connect(OBSERVER, db);
    await c.connect();
    try {
      const q = async (sql: string) =>
        (await c.query({ text: sql, rowMode: "array" })).rows;
      const settings = Object.entries({
        ...PG_SESSION_SETTINGS,
        ...OBSERVER_SETTINGS,
      }).map(([k, v]) => `SET ${k} = ${quoteLiteral(v)}`).join("; ");
      await q(
        `SET ROLE NONE; ${settings}; SET default_transaction_read_only = on; BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`,
      );
      const obs = await readPostgres(q, {
        keys: a.key,
        label: normalizeLabel(a.label),
      });
      await q("COMMIT");
      return obs;
    } finally {
      await c.end().catch(() => {});
    }
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#proc.kill(signal);
    } catch {
      // already gone
    }
  }

  /** Stop the server (fast shutdown) and remove the scratch directory. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    live.delete(this);
    await this.#admin?.end().catch(() => {});
    this.#admin = null;
    this.#signal("SIGINT");
    const timer = setTimeout(() => this.#signal("SIGKILL"), 10_000);
    await this.#proc.status;
    clearTimeout(timer);
    await Deno.remove(this.root, { recursive: true }).catch(() => {});
  }

  /** Immediate, synchronous stop (interrupt handlers). */
  kill(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    live.delete(this);
    this.#signal("SIGQUIT");
    try {
      Deno.removeSync(this.root, { recursive: true });
    } catch {
      // best effort
    }
  }
}

/** Refuse a seeded template whose tables or masks do not fit the adapter. */
export function checkTemplate(
  def: Pick<Definition, "file" | "adapters">,
  index: number,
  obs: PostgresObservation,
): void {
  const a = def.adapters[index]!;
  const fail: (path: string, msg: string) => never = (path, msg) => {
    throw new DefinitionError(def.file, `adapters[${index}].${path}`, msg);
  };
  const names = obs.tables.map((t) => t.name);
  for (const t of obs.tables) {
    if (t.keyedBy === "whole_row") {
      fail(
        "key",
        `table ${t.name} has no primary key: declare one in the seed, or key = { ${
          JSON.stringify(t.name)
        } = ["<column>", ...] }`,
      );
    }
  }
  if (obs.problems.length > 0) fail("seed", obs.problems[0]!);
  for (const k of Object.keys(a.key)) {
    if (!names.includes(k)) {
      fail(
        `key.${JSON.stringify(k)}`,
        `table ${JSON.stringify(k)} is not in the seeded database (tables: ${
          names.join(", ") || "none"
        })`,
      );
    }
  }
  for (
    const [list, what] of [[a.business, "business"], [
      a.append_only,
      "append_only",
    ]] as const
  ) {
    list.forEach((t, j) => {
      if (!names.includes(t) && !isPattern(t)) {
        fail(
          `${what}[${j}]`,
          `table ${
            JSON.stringify(t)
          } is not in the seeded database (tables and sequences: ${
            names.join(", ") || "none"
          })`,
        );
      }
    });
  }
  a.mask.forEach((m, j) => {
    const t = obs.tables.find((x) => x.name === m.region);
    if (!t) {
      fail(
        `mask[${j}].region`,
        `${JSON.stringify(m.region)} matches nothing in the seeded database (${
          names.join(", ") || "none"
        })`,
      );
    }
    if (!t.columns.includes(m.column)) {
      fail(
        `mask[${j}].column`,
        `${m.region} has no column ${JSON.stringify(m.column)} (columns: ${
          t.columns.join(", ")
        })`,
      );
    }
  });
}

/** The postgres adapters of a definition (at most one). */
export function postgresAdapters(
  def: Pick<Definition, "adapters">,
): AdapterDef[] {
  return def.adapters.filter((a) => a.kind === "postgres");
}

/**
 * Start a cluster under `root` and seed every postgres adapter's template,
 * or return null when the definition has none. On a seed or check failure
 * the cluster is stopped and the error (a {@linkcode DefinitionError})
 * rethrown.
 */
export async function clusterFor(
  def: StatefulDefinition,
  root: string,
  options: ClusterOptions = {},
): Promise<PostgresCluster | null> {
  if (postgresAdapters(def).length === 0) return null;
  const cluster = await PostgresCluster.start(root, {
    ...options,
    tcp: options.tcp ?? postgresAdapters(def).some((a) => a.listen === "tcp"),
  });
  try {
    for (const [i, a] of def.adapters.entries()) {
      if (a.kind === "postgres") await cluster.seedTemplate(def, i);
    }
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
