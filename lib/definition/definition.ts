/**
 * Definitions: `fixture.toml` (ground-truth servers with expected verdicts)
 * and `target.toml` (third-party servers to audit, no expectations), loaded
 * strictly. Every problem is a {@linkcode DefinitionError} naming the file
 * and the key path (exit code 2): unknown key, wrong type, missing seed, a
 * mask or classification that matches nothing in the seeded state, or any
 * value starting with `TODO(verity)`.
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { createHash } from "node:crypto";
import { DefinitionError, UsageError } from "../errors.ts";
import { normalizeAbsolute, normalizeLabel } from "../state/paths.ts";

export { normalizeLabel };

/** The five behavioural tests. */
export type TestName =
  | "sequential_idempotence"
  | "concurrent_idempotence"
  | "read_only"
  | "destructive"
  | "open_world";

/** Every test name, in report order. */
export const TEST_NAMES: readonly TestName[] = [
  "sequential_idempotence",
  "concurrent_idempotence",
  "read_only",
  "destructive",
  "open_world",
];

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
  /** Always `{}` for targets. */
  expected: Partial<Record<TestName, Expectation>>;
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
  kind: "sqlite" | "fs" | "json";
  /** Path relative to the state dir, e.g. "state.db", "memory.jsonl", ".". */
  label: string;
  /** Path relative to the definition dir: a .sql file, a directory, a .json/.jsonl file. */
  seed: string | null;
  business: string[];
  append_only: string[];
  mask: MaskRule[];
  /** json/jsonl: region -> identity fields. */
  key: Record<string, string[]>;
  /** json only: jsonl (one document per line) or json; default from the extension. */
  format?: "json" | "jsonl";
  /** json only: split records into regions named by the value of this field (e.g. "type"). */
  region_by?: string;
  /** json only: region name -> JSON pointer to an array or object of records inside the document. */
  regions?: Record<string, string>;
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
  /**
   * The server's working directory (placeholders kept); null = the
   * definition's directory.
   */
  cwd: string | null;
  /** Declared sandbox allowances beyond the default (`allow`). */
  allow: Allowances;
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

/** Options of {@linkcode loadDefinition}. */
export interface LoadDefinitionOptions {
  /** Where bare names are looked up first. @default "fixtures" */
  fixturesDir?: string;
  /** Where bare names are looked up second. @default "targets" */
  targetsDir?: string;
  /**
   * Check masks and classifications against the seeded state (runs SQL
   * seeds in memory). Only tests of the syntax turn this off.
   * @default true
   */
  checkSeededState?: boolean;
}

/** Default timeouts in seconds. */
export const DEFAULT_TIMEOUTS = { start_s: 30, call_s: 30 } as const;

const PLACEHOLDERS = [
  "deno",
  "python",
  "node",
  "state",
  "target",
  "source",
  "node_modules",
] as const;
const PLACEHOLDER_RE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const TODO = "TODO(verity)";
const MASK_KINDS = ["timestamp", "uuid", "token", "counter"] as const;
const VERDICT_RE = /^(PASS|VIOLATION|(INCONCLUSIVE|NOT_APPLICABLE):[A-Z_]+)$/;

/** The values placeholders stand for when a session starts. */
export interface PlaceholderValues {
  deno: string;
  python: string;
  state: string;
  target: string;
  source: string | null;
  /** `{node}`: the Node.js binary. @default {unset: using `{node}` throws} */
  node?: string;
  /** `{node_modules}`: the prepared npm install of a Node target. @default {null} */
  node_modules?: string | null;
}

/**
 * Substitute `{deno}`, `{python}`, `{node}`, `{state}`, `{target}`,
 * `{source}` and `{node_modules}` in one string. Only `{identifier}` is a
 * placeholder; other braces (JSON) are literal. An unknown placeholder, or
 * `{source}` without a source, throws a {@linkcode UsageError}.
 *
 * @example
 * ```ts
 * substitute("{state}/db", { deno: "deno", python: "python3", state: "/s", target: "/t", source: null }); // "/s/db"
 * ```
 */
export function substitute(
  value: string,
  vars: PlaceholderValues,
): string {
  return value.replace(PLACEHOLDER_RE, (_m, name: string) => {
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
      throw new UsageError(
        `unknown placeholder {${name}} in ${JSON.stringify(value)} (known: ${
          PLACEHOLDERS.map((p) => `{${p}}`).join(", ")
        })`,
      );
    }
    const v = vars[name as keyof PlaceholderValues];
    if (v === null || v === undefined) {
      throw new UsageError(
        name === "node"
          ? `{node} used in ${
            JSON.stringify(value)
          } but no Node.js binary was resolved (install node)`
          : `{${name}} used in ${
            JSON.stringify(value)
          } but the definition has no [source] (or it is not prepared)`,
      );
    }
    return v;
  });
}

/**
 * {@linkcode substitute} in every string of a JSON-shaped value (tool
 * arguments): object keys stay as written.
 *
 * @example
 * ```ts
 * substituteDeep({ path: "{state}/a", n: 1 }, { deno: "d", python: "p", state: "/s", target: "/t", source: null });
 * // { path: "/s/a", n: 1 }
 * ```
 */
export function substituteDeep(
  value: unknown,
  vars: PlaceholderValues,
): unknown {
  if (typeof value === "string") return substitute(value, vars);
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, vars));
  if (value !== null && typeof value === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) o[k] = substituteDeep(v, vars);
    return o;
  }
  return value;
}

/** Whether any string inside a JSON-shaped value holds a placeholder. */
export function hasPlaceholder(value: unknown): boolean {
  if (typeof value === "string") {
    return new RegExp(PLACEHOLDER_RE.source).test(value);
  }
  if (Array.isArray(value)) return value.some(hasPlaceholder);
  if (value !== null && typeof value === "object") {
    return Object.values(value).some(hasPlaceholder);
  }
  return false;
}

/**
 * Find and load a definition strictly.
 *
 * `pathOrName` is a directory holding `fixture.toml` or `target.toml`, a
 * path to a `.toml` file, or a bare name looked up under `fixtures/` then
 * `targets/`. Requires `--allow-read`.
 *
 * @example
 * ```ts
 * const def = await loadDefinition("liar-concurrent");
 * console.log(def.digest, def.tools.length);
 * ```
 */
export async function loadDefinition(
  pathOrName: string,
  options: LoadDefinitionOptions = {},
): Promise<Definition> {
  const file = await locate(pathOrName, options);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new DefinitionError(file, "", `cannot read: ${(e as Error).message}`);
  }
  const def = parseDefinition(text, file);
  def.digest = await definitionDigest(def, text);
  if (options.checkSeededState !== false) {
    const { checkSeededState } = await import("./seeded.ts");
    await checkSeededState(def);
  }
  return def;
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await Deno.stat(p)).isDirectory;
  } catch {
    return false;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.stat(p);
    return true;
  } catch {
    return false;
  }
}

function absolute(p: string): string {
  const joined = p.startsWith("/") ? p : `${Deno.cwd()}/${p}`;
  return normalizeAbsolute(joined);
}

function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

async function locate(
  pathOrName: string,
  options: LoadDefinitionOptions,
): Promise<string> {
  const inDir = async (dir: string): Promise<string | null> => {
    const f = `${dir}/fixture.toml`;
    const t = `${dir}/target.toml`;
    const hasF = await exists(f);
    const hasT = await exists(t);
    if (hasF && hasT) {
      throw new UsageError(
        `${dir}: holds both fixture.toml and target.toml; name the file to load`,
      );
    }
    return hasF ? f : hasT ? t : null;
  };
  if (pathOrName === "") throw new UsageError("empty definition name");
  if (await isDir(pathOrName)) {
    const found = await inDir(absolute(pathOrName));
    if (found) return found;
    throw new UsageError(
      `${
        absolute(pathOrName)
      }: no fixture.toml or target.toml in this directory`,
    );
  }
  if (pathOrName.endsWith(".toml")) {
    if (await exists(pathOrName)) return absolute(pathOrName);
    throw new UsageError(`${absolute(pathOrName)}: no such definition file`);
  }
  if (!pathOrName.includes("/")) {
    const tried: string[] = [];
    for (
      const base of [
        options.fixturesDir ?? "fixtures",
        options.targetsDir ?? "targets",
      ]
    ) {
      const dir = absolute(`${base}/${pathOrName}`);
      tried.push(dir);
      if (await isDir(dir)) {
        const found = await inDir(dir);
        if (found) return found;
      }
    }
    throw new UsageError(
      `no definition named ${JSON.stringify(pathOrName)} (looked in ${
        tried.join(", ")
      })`,
    );
  }
  throw new UsageError(
    `${
      absolute(pathOrName)
    }: no such definition (expected a directory or a .toml file)`,
  );
}

/** A typed reader over the parsed TOML that names the key path in every error. */
class Reader {
  readonly file: string;
  constructor(file: string) {
    this.file = file;
  }
  fail(path: string, msg: string): never {
    throw new DefinitionError(this.file, path, msg);
  }
  table(v: unknown, path: string): Record<string, unknown> {
    if (
      v === null || typeof v !== "object" || Array.isArray(v) ||
      v instanceof Date
    ) {
      this.fail(path, `expected a table, got ${describe(v)}`);
    }
    return v as Record<string, unknown>;
  }
  keys(
    t: Record<string, unknown>,
    path: string,
    allowed: readonly string[],
  ): void {
    for (const k of Object.keys(t)) {
      if (!allowed.includes(k)) {
        this.fail(
          join(path, k),
          `unknown key (allowed here: ${allowed.join(", ")})`,
        );
      }
    }
  }
  string(v: unknown, path: string): string {
    if (typeof v !== "string") {
      this.fail(path, `expected a string, got ${describe(v)}`);
    }
    this.todo(v, path);
    return v;
  }
  nonEmptyString(v: unknown, path: string): string {
    const s = this.string(v, path);
    if (s.trim() === "") this.fail(path, "must not be empty");
    return s;
  }
  strings(v: unknown, path: string): string[] {
    if (!Array.isArray(v)) {
      this.fail(path, `expected an array of strings, got ${describe(v)}`);
    }
    return v.map((x, i) => this.string(x, `${path}[${i}]`));
  }
  number(v: unknown, path: string): number {
    if (typeof v !== "number" || !Number.isFinite(v)) {
      this.fail(path, `expected a number, got ${describe(v)}`);
    }
    return v;
  }
  todo(v: string, path: string): void {
    if (v.startsWith(TODO)) {
      this.fail(
        path,
        `still a placeholder: ${JSON.stringify(v)}; decide this value`,
      );
    }
  }
  /** Check a whole value tree (tool arguments) for TODO(verity) strings. */
  todoDeep(v: unknown, path: string): void {
    if (typeof v === "string") this.todo(v, path);
    else if (Array.isArray(v)) {
      v.forEach((x, i) => this.todoDeep(x, `${path}[${i}]`));
    } else if (v !== null && typeof v === "object" && !(v instanceof Date)) {
      for (const [k, x] of Object.entries(v)) {
        this.todo(k, join(path, k));
        this.todoDeep(x, join(path, k));
      }
    }
  }
  placeholders(v: string, path: string, hasSource: boolean): void {
    for (const m of v.matchAll(PLACEHOLDER_RE)) {
      const name = m[1]!;
      if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
        this.fail(
          path,
          `unknown placeholder {${name}} (known: ${
            PLACEHOLDERS.map((p) => `{${p}}`).join(", ")
          })`,
        );
      }
      if ((name === "source" || name === "node_modules") && !hasSource) {
        this.fail(path, `{${name}} needs a [source] table`);
      }
    }
  }
  placeholdersDeep(v: unknown, path: string, hasSource: boolean): void {
    if (typeof v === "string") this.placeholders(v, path, hasSource);
    else if (Array.isArray(v)) {
      v.forEach((x, i) => this.placeholdersDeep(x, `${path}[${i}]`, hasSource));
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        this.placeholdersDeep(x, join(path, k), hasSource);
      }
    }
  }
}

function join(path: string, key: string): string {
  const k = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
  return path === "" ? k : `${path}.${k}`;
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Date) return "a date";
  if (typeof v === "object") return "a table";
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** Convert smol-toml's values (null-prototype tables, dates) into plain JSON-shaped data. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = plain(x);
    return o;
  }
  if (typeof v === "bigint") return Number(v);
  return v;
}

/** Check that a label or relative path stays inside its base. */
function relativePath(
  r: Reader,
  v: string,
  path: string,
  what: string,
): string {
  if (v.startsWith("/")) {
    r.fail(path, `${what} must be relative, got ${JSON.stringify(v)}`);
  }
  if (v.split("/").includes("..")) {
    r.fail(path, `${what} must not contain "..", got ${JSON.stringify(v)}`);
  }
  if (v.includes("\0")) r.fail(path, `${what} must not contain NUL`);
  return v;
}

/**
 * Parse and validate a definition's TOML text. Pure apart from nothing:
 * seeds are not read here (see {@linkcode loadDefinition}). The digest is
 * left empty.
 */
export function parseDefinition(text: string, file: string): Definition {
  const r: Reader = new Reader(file);
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      const msg = e.message.split("\n")[0] ?? "";
      r.fail("", `invalid TOML at line ${e.line}, column ${e.column}: ${msg}`);
    }
    r.fail("", `invalid TOML: ${(e as Error).message.split("\n")[0]}`);
  }
  const hasFixture = Object.hasOwn(raw, "fixture");
  const hasTarget = Object.hasOwn(raw, "target");
  if (hasFixture && hasTarget) {
    r.fail(
      "",
      "has both [fixture] and [target]; a definition is one or the other",
    );
  }
  if (!hasFixture && !hasTarget) {
    r.fail("", "missing [fixture] or [target] table");
  }
  const kind = hasFixture ? "fixture" : "target";
  const base = file.split("/").pop() ?? "";
  if (base === "fixture.toml" && kind !== "fixture") {
    r.fail("", "fixture.toml must have a [fixture] table, not [target]");
  }
  if (base === "target.toml" && kind !== "target") {
    r.fail("", "target.toml must have a [target] table, not [fixture]");
  }
  r.keys(
    raw,
    "",
    kind === "fixture"
      ? ["fixture", "state", "adapters", "tools"]
      : ["target", "state", "adapters", "tools", "source"],
  );

  // [source] (targets only)
  let source: Record<string, unknown> | null = null;
  if (Object.hasOwn(raw, "source")) {
    const s = r.table(raw.source, "source");
    r.keys(s, "source", ["package", "version", "integrity", "git", "commit"]);
    for (const [k, v] of Object.entries(s)) r.string(v, `source.${k}`);
    source = plain(s) as Record<string, unknown>;
  }
  const hasSource = source !== null;

  // [fixture] / [target]
  const head = r.table(raw[kind], kind);
  r.keys(head, kind, [
    "name",
    "command",
    "env",
    "timeouts",
    "sandbox",
    "read",
    "cwd",
    "allow",
  ]);
  if (!Object.hasOwn(head, "name")) {
    r.fail(`${kind}.name`, "missing (the definition's name)");
  }
  const name = r.nonEmptyString(head.name, `${kind}.name`);
  if (!Object.hasOwn(head, "command")) {
    r.fail(`${kind}.command`, "missing (the server command, as an array)");
  }
  const command = r.strings(head.command, `${kind}.command`);
  if (command.length === 0) r.fail(`${kind}.command`, "must not be empty");
  command.forEach((c, i) =>
    r.placeholders(c, `${kind}.command[${i}]`, hasSource)
  );
  const env: Record<string, string> = {};
  if (Object.hasOwn(head, "env")) {
    const t = r.table(head.env, `${kind}.env`);
    for (const [k, v] of Object.entries(t)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
        r.fail(join(`${kind}.env`, k), "not a valid environment variable name");
      }
      env[k] = r.string(v, join(`${kind}.env`, k));
      r.placeholders(env[k], join(`${kind}.env`, k), hasSource);
    }
  }
  const timeouts: { start_s: number; call_s: number } = { ...DEFAULT_TIMEOUTS };
  if (Object.hasOwn(head, "timeouts")) {
    const t = r.table(head.timeouts, `${kind}.timeouts`);
    r.keys(t, `${kind}.timeouts`, ["start", "call"]);
    for (
      const [k, field] of [["start", "start_s"], ["call", "call_s"]] as const
    ) {
      if (!Object.hasOwn(t, k)) continue;
      const n = r.number(t[k], `${kind}.timeouts.${k}`);
      if (n <= 0) {
        r.fail(
          `${kind}.timeouts.${k}`,
          `must be a positive number of seconds, got ${n}`,
        );
      }
      timeouts[field] = n;
    }
  }
  let sandbox: Definition["sandbox"] = null;
  if (Object.hasOwn(head, "sandbox")) {
    const s = r.string(head.sandbox, `${kind}.sandbox`);
    if (s !== "deno" && s !== "bubblewrap" && s !== "none") {
      r.fail(
        `${kind}.sandbox`,
        `expected "deno", "bubblewrap" or "none", got ${JSON.stringify(s)}`,
      );
    }
    sandbox = s;
  }
  const read = Object.hasOwn(head, "read")
    ? r.strings(head.read, `${kind}.read`)
    : [];
  read.forEach((p, i) => r.placeholders(p, `${kind}.read[${i}]`, hasSource));
  let cwd: string | null = null;
  if (Object.hasOwn(head, "cwd")) {
    cwd = r.nonEmptyString(head.cwd, `${kind}.cwd`);
    r.placeholders(cwd, `${kind}.cwd`, hasSource);
    if (!cwd.startsWith("/") && !cwd.startsWith("{")) {
      r.fail(
        `${kind}.cwd`,
        `must be absolute or start with a placeholder such as {state}, got ${
          JSON.stringify(cwd)
        }`,
      );
    }
  }
  const allow: Allowances = { sys: [], run: [] };
  if (Object.hasOwn(head, "allow")) {
    const a = r.table(head.allow, `${kind}.allow`);
    r.keys(a, `${kind}.allow`, ["sys", "run", "read"]);
    if (Object.hasOwn(a, "sys")) {
      allow.sys = r.strings(a.sys, `${kind}.allow.sys`);
      allow.sys.forEach((x, i) => {
        if (!SYS_NAMES.includes(x)) {
          r.fail(
            `${kind}.allow.sys[${i}]`,
            `unknown system-information name ${JSON.stringify(x)} (known: ${
              SYS_NAMES.join(", ")
            })`,
          );
        }
      });
    }
    if (Object.hasOwn(a, "run")) {
      allow.run = r.strings(a.run, `${kind}.allow.run`);
      allow.run.forEach((x, i) => {
        if (x === "" || (x.includes("/") && !x.startsWith("/"))) {
          r.fail(
            `${kind}.allow.run[${i}]`,
            `expected a program name (looked up on PATH) or an absolute path, got ${
              JSON.stringify(x)
            }`,
          );
        }
        if (x.includes(",")) {
          r.fail(`${kind}.allow.run[${i}]`, "must not contain a comma");
        }
      });
    }
    if (Object.hasOwn(a, "read")) {
      const extra = r.strings(a.read, `${kind}.allow.read`);
      extra.forEach((p, i) =>
        r.placeholders(p, `${kind}.allow.read[${i}]`, hasSource)
      );
      read.push(...extra);
    }
  }

  // [state]
  if (!Object.hasOwn(raw, "state")) {
    r.fail(
      "state",
      'missing [state] table: list every place the server keeps state, e.g. locations = ["sqlite:state.db"] (or [] for none)',
    );
  }
  const st = r.table(raw.state, "state");
  r.keys(st, "state", ["locations"]);
  if (!Object.hasOwn(st, "locations")) r.fail("state.locations", "missing");
  const locations = r.strings(st.locations, "state.locations");
  const seenLoc = new Set<string>();
  locations.forEach((l, i) => {
    const p = `state.locations[${i}]`;
    const m = /^([a-z][a-z0-9_-]*):(.+)$/.exec(l);
    if (!m) {
      r.fail(
        p,
        `expected "<kind>:<path>" such as "sqlite:state.db", got ${
          JSON.stringify(l)
        }`,
      );
    }
    if (m[1] === "sqlite" || m[1] === "fs" || m[1] === "json") {
      relativePath(r, m[2]!, p, "a location path");
    }
    const norm = `${m[1]}:${normalizeLabel(m[2]!)}`;
    if (seenLoc.has(norm)) r.fail(p, `duplicate location ${JSON.stringify(l)}`);
    seenLoc.add(norm);
  });

  // [[adapters]]
  const adapters: AdapterDef[] = [];
  if (Object.hasOwn(raw, "adapters")) {
    if (!Array.isArray(raw.adapters)) {
      r.fail("adapters", "expected an array of tables ([[adapters]])");
    }
    raw.adapters.forEach((a, i) =>
      adapters.push(parseAdapter(r, a, `adapters[${i}]`))
    );
  }
  const seenAdapter = new Map<string, number>();
  adapters.forEach((a, i) => {
    const id = `${a.kind}:${normalizeLabel(a.label)}`;
    if (seenAdapter.has(id)) {
      r.fail(
        `adapters[${i}].label`,
        `duplicate adapter ${id} (also adapters[${seenAdapter.get(id)}])`,
      );
    }
    seenAdapter.set(id, i);
  });

  // [[tools]]
  const tools: ToolDef[] = [];
  if (Object.hasOwn(raw, "tools")) {
    if (!Array.isArray(raw.tools)) {
      r.fail("tools", "expected an array of tables ([[tools]])");
    }
    raw.tools.forEach((t, i) =>
      tools.push(parseTool(r, t, `tools[${i}]`, kind, hasSource))
    );
  }
  const seenTool = new Map<string, number>();
  tools.forEach((t, i) => {
    const id = t.variant === null ? t.name : `${t.name}[${t.variant}]`;
    if (seenTool.has(id)) {
      r.fail(
        `tools[${i}]`,
        `duplicate tool ${id} (also tools[${
          seenTool.get(id)
        }]); give one of them a distinct variant`,
      );
    }
    seenTool.set(id, i);
  });

  return {
    kind,
    file,
    dir: dirname(file),
    digest: "",
    name,
    command,
    env,
    timeouts,
    sandbox,
    read,
    cwd,
    allow,
    locations,
    adapters,
    tools,
    source,
  };
}

function parseAdapter(r: Reader, v: unknown, path: string): AdapterDef {
  const t = r.table(v, path);
  if (!Object.hasOwn(t, "kind")) {
    r.fail(`${path}.kind`, 'missing (one of "sqlite", "fs", "json")');
  }
  const kind = r.string(t.kind, `${path}.kind`);
  if (kind !== "sqlite" && kind !== "fs" && kind !== "json") {
    r.fail(
      `${path}.kind`,
      `expected "sqlite", "fs" or "json", got ${JSON.stringify(kind)}`,
    );
  }
  const common = ["kind", "label", "seed", "business", "append_only", "mask"];
  r.keys(
    t,
    path,
    kind === "json"
      ? [...common, "key", "format", "region_by", "regions"]
      : common,
  );
  if (!Object.hasOwn(t, "label")) {
    r.fail(
      `${path}.label`,
      'missing (path inside the state directory, e.g. "state.db")',
    );
  }
  const label = relativePath(
    r,
    r.nonEmptyString(t.label, `${path}.label`),
    `${path}.label`,
    "label",
  );
  if (kind !== "fs" && normalizeLabel(label) === ".") {
    r.fail(`${path}.label`, `a ${kind} adapter needs a file label, not "."`);
  }
  const seed = Object.hasOwn(t, "seed")
    ? r.nonEmptyString(t.seed, `${path}.seed`)
    : null;
  const business = Object.hasOwn(t, "business")
    ? r.strings(t.business, `${path}.business`)
    : [];
  const append_only = Object.hasOwn(t, "append_only")
    ? r.strings(t.append_only, `${path}.append_only`)
    : [];
  for (const [i, b] of business.entries()) {
    if (business.indexOf(b) !== i) {
      r.fail(`${path}.business[${i}]`, `duplicate ${JSON.stringify(b)}`);
    }
    const j = append_only.indexOf(b);
    if (j !== -1) {
      r.fail(
        `${path}.append_only[${j}]`,
        `${JSON.stringify(b)} is also listed in business`,
      );
    }
  }
  for (const [i, b] of append_only.entries()) {
    if (append_only.indexOf(b) !== i) {
      r.fail(`${path}.append_only[${i}]`, `duplicate ${JSON.stringify(b)}`);
    }
  }
  if (kind === "fs") {
    const base = normalizeLabel(label);
    for (
      const [list, name] of [[business, "business"], [
        append_only,
        "append_only",
      ]] as const
    ) {
      list.forEach((b, i) => {
        relativePath(r, b, `${path}.${name}[${i}]`, "an fs region path");
        const n = normalizeLabel(b);
        if (!(base === "." || n === base || n.startsWith(base + "/"))) {
          r.fail(
            `${path}.${name}[${i}]`,
            `${JSON.stringify(b)} is not inside the adapter's label ${
              JSON.stringify(label)
            }`,
          );
        }
      });
    }
  }
  const mask: MaskRule[] = [];
  if (Object.hasOwn(t, "mask")) {
    if (!Array.isArray(t.mask)) {
      r.fail(
        `${path}.mask`,
        `expected an array of {region, column, kind}, got ${describe(t.mask)}`,
      );
    }
    t.mask.forEach((m, i) => {
      const p = `${path}.mask[${i}]`;
      const mt = r.table(m, p);
      r.keys(mt, p, ["region", "column", "kind"]);
      for (const k of ["region", "column", "kind"]) {
        if (!Object.hasOwn(mt, k)) r.fail(`${p}.${k}`, "missing");
      }
      const mk = r.string(mt.kind, `${p}.kind`);
      if (!(MASK_KINDS as readonly string[]).includes(mk)) {
        r.fail(
          `${p}.kind`,
          `expected one of ${MASK_KINDS.join(", ")}, got ${JSON.stringify(mk)}`,
        );
      }
      mask.push({
        region: r.nonEmptyString(mt.region, `${p}.region`),
        column: r.nonEmptyString(mt.column, `${p}.column`),
        kind: mk as MaskRule["kind"],
      });
    });
  }
  // Labels (and fs region paths) are kept normalised ("notes/" -> "notes",
  // "./x.json" -> "x.json"), the form regions and coverage use.
  const fsPath = (p: string) => (kind === "fs" ? normalizeLabel(p) : p);
  const out: AdapterDef = {
    kind,
    label: normalizeLabel(label),
    seed,
    business: business.map(fsPath),
    append_only: append_only.map(fsPath),
    mask: mask.map((m) => ({ ...m, region: fsPath(m.region) })),
    key: {},
  };
  if (kind === "json") {
    if (Object.hasOwn(t, "key")) {
      const kt = r.table(t.key, `${path}.key`);
      for (const [region, fields] of Object.entries(kt)) {
        const fp = join(`${path}.key`, region);
        const list = r.strings(fields, fp);
        if (list.length === 0) r.fail(fp, "must name at least one field");
        out.key[region] = list;
      }
    }
    if (Object.hasOwn(t, "format")) {
      const f = r.string(t.format, `${path}.format`);
      if (f !== "json" && f !== "jsonl") {
        r.fail(
          `${path}.format`,
          `expected "json" or "jsonl", got ${JSON.stringify(f)}`,
        );
      }
      out.format = f;
    }
    if (Object.hasOwn(t, "region_by")) {
      out.region_by = r.nonEmptyString(t.region_by, `${path}.region_by`);
    }
    if (Object.hasOwn(t, "regions")) {
      if (out.region_by !== undefined) {
        r.fail(`${path}.regions`, "use either regions or region_by, not both");
      }
      const rt = r.table(t.regions, `${path}.regions`);
      const regions: Record<string, string> = {};
      for (const [name, ptr] of Object.entries(rt)) {
        const pp = join(`${path}.regions`, name);
        const s = r.string(ptr, pp);
        if (s !== "" && !s.startsWith("/")) {
          r.fail(
            pp,
            `expected a JSON pointer such as "/items", got ${
              JSON.stringify(s)
            }`,
          );
        }
        regions[name] = s;
      }
      out.regions = regions;
      const ext = /\.(jsonl|ndjson)$/i.test(label) ? "jsonl" : "json";
      if ((out.format ?? ext) === "jsonl") {
        r.fail(
          `${path}.regions`,
          "regions (JSON pointers) apply to json documents, not jsonl",
        );
      }
    }
  }
  return out;
}

function parseTool(
  r: Reader,
  v: unknown,
  path: string,
  kind: "fixture" | "target",
  hasSource: boolean,
): ToolDef {
  const t = r.table(v, path);
  r.keys(t, path, ["name", "arguments", "variant", "expected"]);
  if (!Object.hasOwn(t, "name")) {
    r.fail(`${path}.name`, "missing (the tool's name as listed by the server)");
  }
  const name = r.nonEmptyString(t.name, `${path}.name`);
  const variant = Object.hasOwn(t, "variant")
    ? r.nonEmptyString(t.variant, `${path}.variant`)
    : null;
  let args: Record<string, unknown> = {};
  if (Object.hasOwn(t, "arguments")) {
    args = plain(r.table(t.arguments, `${path}.arguments`)) as Record<
      string,
      unknown
    >;
    r.todoDeep(args, `${path}.arguments`);
    r.placeholdersDeep(args, `${path}.arguments`, hasSource);
  }
  const expected: Partial<Record<TestName, Expectation>> = {};
  if (Object.hasOwn(t, "expected")) {
    if (kind === "target") {
      r.fail(
        `${path}.expected`,
        "targets never carry expected verdicts (audits are measurements)",
      );
    }
    const et = r.table(t.expected, `${path}.expected`);
    r.keys(et, `${path}.expected`, TEST_NAMES);
    for (const [test, e] of Object.entries(et)) {
      const p = `${path}.expected.${test}`;
      const x = r.table(e, p);
      if (!Object.hasOwn(x, "verdict")) {
        r.fail(`${p}.verdict`, 'missing (e.g. "PASS")');
      }
      const verdict = r.string(x.verdict, `${p}.verdict`);
      if (!VERDICT_RE.test(verdict)) {
        r.fail(
          `${p}.verdict`,
          `expected PASS, VIOLATION, INCONCLUSIVE:<REASON> or NOT_APPLICABLE:<REASON>, got ${
            JSON.stringify(verdict)
          }`,
        );
      }
      const exp: Expectation = { verdict };
      for (const [k, val] of Object.entries(x)) {
        if (k === "verdict") continue;
        if (typeof val === "string") r.todo(val, join(p, k));
        else if (
          typeof val !== "boolean" &&
          !(typeof val === "number" && Number.isFinite(val))
        ) {
          r.fail(
            join(p, k),
            `an assertion must be a string, boolean or number, got ${
              describe(val)
            }`,
          );
        }
        exp[k] = val as string | boolean | number;
      }
      expected[test as TestName] = exp;
    }
  }
  return { name, variant, arguments: args, expected };
}

/** List the files of a seed directory (relative paths, sorted) for hashing and copying. */
export async function walkSeed(
  dir: string,
): Promise<{ rel: string; kind: "file" | "dir" | "symlink" }[]> {
  const out: { rel: string; kind: "file" | "dir" | "symlink" }[] = [];
  async function rec(rel: string): Promise<void> {
    const entries: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(rel === "" ? dir : `${dir}/${rel}`)) {
      entries.push(e);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isSymlink) out.push({ rel: r, kind: "symlink" });
      else if (e.isDirectory) {
        out.push({ rel: r, kind: "dir" });
        await rec(r);
      } else out.push({ rel: r, kind: "file" });
    }
  }
  await rec("");
  return out;
}

/** Absolute path of an adapter's seed. */
export function seedPath(def: Pick<Definition, "dir">, seed: string): string {
  return seed.startsWith("/")
    ? normalizeAbsolute(seed)
    : normalizeAbsolute(`${def.dir}/${seed}`);
}

/** The digest over the toml text and every seed's bytes; missing seeds are errors. */
async function definitionDigest(
  def: Definition,
  text: string,
): Promise<string> {
  const h = createHash("sha256");
  const frame = (tag: string, bytes: Uint8Array | string) => {
    const b = typeof bytes === "string"
      ? new TextEncoder().encode(bytes)
      : bytes;
    h.update(`${tag}\0${b.length}\0`);
    h.update(b);
  };
  frame("toml", text);
  for (const [i, a] of def.adapters.entries()) {
    if (a.seed === null) continue;
    const p = seedPath(def, a.seed);
    const keyPath = `adapters[${i}].seed`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(p);
    } catch {
      throw new DefinitionError(
        def.file,
        keyPath,
        `seed ${JSON.stringify(a.seed)} not found (${p})`,
      );
    }
    if (a.kind === "fs") {
      if (!info.isDirectory) {
        throw new DefinitionError(
          def.file,
          keyPath,
          `an fs seed must be a directory: ${p}`,
        );
      }
      frame(`seed:${i}:dir`, a.seed);
      for (const e of await walkSeed(p)) {
        if (e.kind === "file") {
          frame(`file:${e.rel}`, await Deno.readFile(`${p}/${e.rel}`));
        } else if (e.kind === "symlink") {
          frame(`symlink:${e.rel}`, await Deno.readLink(`${p}/${e.rel}`));
        } else frame(`dir:${e.rel}`, "");
      }
    } else {
      if (!info.isFile) {
        throw new DefinitionError(
          def.file,
          keyPath,
          `a ${a.kind} seed must be a file: ${p}`,
        );
      }
      frame(`seed:${i}:file`, await Deno.readFile(p));
    }
  }
  return "sha256:" + h.digest("hex");
}
