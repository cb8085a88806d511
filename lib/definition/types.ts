/**
 * What a definition is: the types of a loaded `fixture.toml` or
 * `target.toml`. No imports, so every layer can name them.
 *
 * @module
 */

/** Values still to be decided by a person start with this; loading refuses them. */
export const TODO = "TODO(verity)";

/** The five behavioural tests, in report order. */
export const TEST_NAMES = [
  "sequential_idempotence",
  "concurrent_idempotence",
  "read_only",
  "destructive",
  "open_world",
] as const;

/** One of the five behavioural tests. */
export type TestName = typeof TEST_NAMES[number];

/** An expected verdict plus optional observed assertions (fixtures only). */
export interface Expectation {
  /** e.g. "PASS", "VIOLATION", "INCONCLUSIVE:PARTIAL_COVERAGE", "NOT_APPLICABLE:NO_DECLARATION". */
  verdict: string;
  [assertion: string]: string | boolean | number;
}

/** One tool call to test: a tool name, an argument set and its expectations. */
export interface ToolDef {
  name: string;
  /** Names one of several argument sets of the same tool. */
  variant: string | null;
  arguments: Record<string, unknown>;
  /**
   * A read that shows state no adapter sees (`probe = { name, arguments }`):
   * called before and after the tool in its probed sessions. Null: none.
   */
  probe: ProbeDef | null;
  /** Always `{}` for targets. */
  expected: Partial<Record<TestName, Expectation>>;
  /** A learned target's (absent otherwise). */
  learned?: LearnedAim;
}

/** What a learned argument set names in its seed (docs/audits.md). */
export const LEARNED_AIMS = [
  "names_seed_record",
  "no_arguments",
  "names_nothing",
  "empty_seed",
] as const;
export type LearnedAim = typeof LEARNED_AIMS[number];

/** A probe: a tool the server lists, called as a read around a tool's call. */
export interface ProbeDef {
  name: string;
  /** Placeholders kept, as for the tool's arguments. */
  arguments: Record<string, unknown>;
}

/** A declared volatile field, masked before comparison. */
export interface MaskRule {
  /** sqlite table, fs region or json region. */
  region: string;
  /** Column name, or a field path into json records (`a.b` or `/a/b`). */
  column: string;
  kind: "timestamp" | "uuid" | "token" | "counter";
}

/** One state observer. */
export interface AdapterDef {
  kind: "sqlite" | "fs" | "json" | "postgres";
  /** Path relative to the state dir, e.g. "state.db", "memory.jsonl", ".". */
  label: string;
  /** Path relative to the definition dir: a .sql file, a directory, a .json/.jsonl file. */
  seed: string | null;
  business: string[];
  append_only: string[];
  mask: MaskRule[];
  /**
   * json/jsonl: region -> identity fields; postgres: table (`schema.table`)
   * -> key columns; sqlite: table -> natural key columns (rows identified by
   * their values instead of their primary key or rowid).
   */
  key: Record<string, string[]>;
  /**
   * Regions the definition excludes from judgment on purpose: table or
   * region names, or for fs paths under the label (names or patterns, as
   * `business`). Still observed and kept as evidence; no verdict counts a
   * change there, and every format's headline lists them. Absent: none.
   */
  exclude?: string[];
  /** json only: jsonl (one document per line) or json; default from the extension. */
  format?: "json" | "jsonl";
  /** json only: split records into regions named by the value of this field (e.g. "type"). */
  region_by?: string;
  /** json only: region name -> JSON pointer to an array or object of records inside the document. */
  regions?: Record<string, string>;
  /**
   * postgres only: how the server connects. "socket" (the default): the
   * cluster's Unix socket only; "tcp": the cluster also listens on
   * 127.0.0.1 on a free port, and the `{postgres_…}` placeholders give that
   * host, port and URL.
   */
  listen?: "socket" | "tcp";
}

/** A loaded, validated definition. */
export interface Definition {
  kind: "fixture" | "target";
  /** Absolute path of the toml. */
  file: string;
  /** Absolute. */
  dir: string;
  /** "sha256:<hex>" over the toml text and every seed file's bytes. */
  digest: string;
  name: string;
  /** Placeholders not yet substituted. */
  command: string[];
  env: Record<string, string>;
  timeouts: { start_s: number; call_s: number };
  /** null = choose automatically. */
  sandbox: "deno" | "bubblewrap" | "none" | null;
  /** Extra readable paths for the sandbox (`read` and `allow.read`). */
  read: string[];
  /** The key path of each `read` entry (`target.read[0]`, `target.allow.read[1]`), for errors. */
  readKeys?: string[];
  /**
   * The server's working directory (placeholders kept); null = the
   * definition's directory.
   */
  cwd: string | null;
  /** Declared sandbox allowances beyond the default (`allow`). */
  allow: Allowances;
  /**
   * How verity speaks to the server: over its stdin/stdout, or over
   * Streamable HTTP at {@linkcode Definition.url}.
   * @default {"stdio"}
   */
  transport?: "stdio" | "http";
  /**
   * `transport = "http"`: the server's MCP endpoint on loopback, with a
   * `{port}` placeholder (verity picks a free port per server process).
   * @default {null}
   */
  url?: string | null;
  /** `[state].locations`, e.g. "sqlite:state.db", "fs:notes/", "json:store.json". */
  locations: string[];
  adapters: AdapterDef[];
  tools: ToolDef[];
  /** `[source]` table of a target, kept raw. */
  source: Record<string, unknown> | null;
}

/**
 * What a definition allows its server beyond the sandbox's default:
 * system-information calls (Deno `--allow-sys` names) and named programs it
 * may start. Extra readable paths are {@linkcode Definition.read}.
 */
export interface Allowances {
  /** e.g. `hostname`, `osRelease` (Deno's `--allow-sys` names). */
  sys: string[];
  /** Programs the server may start: a name looked up on PATH, or an absolute path. */
  run: string[];
}

/** Deno's `--allow-sys` names (Deno 2.9). */
export const SYS_NAMES: readonly string[] = [
  "hostname",
  "osRelease",
  "osUptime",
  "loadavg",
  "networkInterfaces",
  "systemMemoryInfo",
  "uid",
  "gid",
  "cpus",
  "homedir",
  "getegid",
  "username",
  "statfs",
  "getPriority",
  "setPriority",
  "userInfo",
];

/** Default timeouts in seconds. */
export const DEFAULT_TIMEOUTS = { start_s: 30, call_s: 30 } as const;

/** The connection a postgres adapter's placeholders stand for (one session's database). */
export interface PostgresVars {
  /**
   * `{postgres_url}`: `postgresql://<role>:<password>@localhost/<db>?host=<socket dir>&port=<port>`,
   * or with `listen = "tcp"` `postgresql://<role>:<password>@127.0.0.1:<port>/<db>`.
   */
  url: string;
  /** `{postgres_host}`: the socket directory, or `127.0.0.1` with `listen = "tcp"`. */
  host: string;
  /** `{postgres_port}`. */
  port: string;
  /** `{postgres_db}`. */
  db: string;
  /** `{postgres_user}`: the session's role. */
  user: string;
  /** `{postgres_password}`: the session role's password (also in the URL). */
  password: string;
}
