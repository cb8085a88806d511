/**
 * The census list: which published servers a census audits. Pure: parse
 * and validate a list's TOML text; every refusal is a `DefinitionError`
 * naming the list file and the key path (`servers[3].version`).
 *
 * ```toml
 * name = "npm-census-2026-12"
 * [[servers]]
 * package = "@modelcontextprotocol/server-memory"
 * version = "2026.8.31"
 * bin = "mcp-server-memory"      # optional
 * args = ["{state}"]             # optional
 * env = { MEMORY_FILE_PATH = "{state}/m.jsonl" }   # optional
 * backend = "deno"               # optional: "deno" (default) or "node"
 * allow = { sys = ["hostname"], run = ["git"], read = [] }   # optional
 * timeout = 30                   # optional, seconds
 * ```
 *
 * A server may instead be local (tests, private servers): `id`, `command`
 * and optionally `dir` (relative to the list); it is not prepared.
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { DefinitionError } from "../errors.ts";
import { sha256Hex } from "../evidence/canonical.ts";
import {
  isExactVersion,
  isNpmName,
  isSha512Integrity,
} from "../prepare/source.ts";
import { reservedEnv } from "../definition/parse.ts";
import { PLACEHOLDER_RE, PLACEHOLDERS } from "../definition/placeholders.ts";
import { SYS_NAMES } from "../definition/types.ts";

/** One server of a census list. */
export interface CensusEntry {
  /** Its identity in the census: `package@version` (or `package@version#bin`, or a local `id`). */
  id: string;
  /** A file-system-safe form of the id (directory and prepared-cache names). */
  slug: string;
  /** Position in the list (for messages). */
  index: number;
  /** The npm package, or null for a local server. */
  package: string | null;
  version: string | null;
  /** The chosen bin, or null for the package's only / first one. */
  bin: string | null;
  /** The pinned `dist.integrity`, when the list gives one (checked at prepare). */
  integrity: string | null;
  /** A local server's command (placeholders as in definitions), else null. */
  command: string[] | null;
  /** A local server's directory (absolute; `{target}`), else null. */
  dir: string | null;
  args: string[];
  env: Record<string, string>;
  backend: "deno" | "node";
  allow: { sys: string[]; run: string[]; read: string[] };
  /** Seconds for starting, listing and each call. */
  timeoutS: number;
}

/** A parsed census list. */
export interface CensusList {
  name: string;
  /** The list file as given. */
  file: string;
  /** `sha256:` of the list file's bytes. */
  digest: string;
  /** Every server, in list order. */
  servers: CensusEntry[];
}

/** Default seconds per server step when the list gives no `timeout`. */
export const DEFAULT_CENSUS_TIMEOUT_S = 30;

const SERVER_KEYS = [
  "package",
  "version",
  "bin",
  "args",
  "env",
  "backend",
  "allow",
  "timeout",
  "integrity",
  "id",
  "command",
  "dir",
];

function describe(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (v === null) return "null";
  if (v instanceof Date) return "a date";
  if (typeof v === "object") return "a table";
  return `${typeof v} ${JSON.stringify(v)}`.slice(0, 80);
}

/** A file-system-safe slug of a server id. */
export function slugOf(id: string): string {
  return id.replace(/^@/, "").replace(/[^A-Za-z0-9._-]+/g, "_");
}

class ListReader {
  constructor(readonly file: string) {}
  fail(path: string, msg: string): never {
    throw new DefinitionError(this.file, path, msg);
  }
  string(v: unknown, path: string): string {
    if (typeof v !== "string") {
      this.fail(path, `expected a string, got ${describe(v)}`);
    }
    return v;
  }
  strings(v: unknown, path: string): string[] {
    if (!Array.isArray(v)) {
      this.fail(path, `expected an array of strings, got ${describe(v)}`);
    }
    return v.map((x, i) => this.string(x, `${path}[${i}]`));
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
  placeholders(s: string, path: string, local: boolean): void {
    for (const m of s.matchAll(PLACEHOLDER_RE)) {
      const name = m[1]!;
      const known = (PLACEHOLDERS as readonly string[]).includes(name) &&
        !name.startsWith("postgres") && name !== "port";
      if (!known || (local && (name === "source" || name === "node_modules"))) {
        this.fail(
          path,
          `unknown placeholder {${name}} in ${
            JSON.stringify(s.slice(0, 80))
          } (known here: {state}, {target}, {deno}, {node}, {python}${
            local ? "" : ", {source}, {node_modules}"
          })`,
        );
      }
    }
  }
}

function parseEntry(
  r: ListReader,
  raw: unknown,
  index: number,
  listDir: string,
): CensusEntry {
  const at = `servers[${index}]`;
  const t = r.table(raw, at);
  for (const k of Object.keys(t)) {
    if (!SERVER_KEYS.includes(k)) {
      r.fail(`${at}.${k}`, `unknown key (allowed: ${SERVER_KEYS.join(", ")})`);
    }
  }
  const opt = (k: string): string | null =>
    Object.hasOwn(t, k) ? r.string(t[k], `${at}.${k}`) : null;
  const pkg = opt("package");
  const local = Object.hasOwn(t, "command");
  let version: string | null = null;
  let bin: string | null = null;
  let integrity: string | null = null;
  let command: string[] | null = null;
  let dir: string | null = null;
  let id: string;
  if (local) {
    if (pkg !== null) {
      r.fail(
        `${at}.command`,
        "a server is either published (package, version) or local (id, command), not both",
      );
    }
    command = r.strings(t.command, `${at}.command`);
    if (command.length === 0) r.fail(`${at}.command`, "must not be empty");
    command.forEach((c, i) => r.placeholders(c, `${at}.command[${i}]`, true));
    const given = opt("id");
    if (given === null || given.trim() === "") {
      r.fail(`${at}.id`, "missing: a local server (command) needs an id");
    }
    id = given;
    const d = opt("dir");
    dir = d === null
      ? listDir
      : d.startsWith("/")
      ? d
      : `${listDir}/${d}`.replace(/\/\.(?=\/|$)/g, "");
    for (const k of ["version", "bin", "integrity"]) {
      if (Object.hasOwn(t, k)) {
        r.fail(
          `${at}.${k}`,
          "applies to a published package, not a local command",
        );
      }
    }
  } else {
    if (pkg === null) {
      r.fail(
        `${at}.package`,
        'missing (an npm package name, e.g. "@modelcontextprotocol/server-memory")',
      );
    }
    if (!isNpmName(pkg)) {
      r.fail(
        `${at}.package`,
        `not a valid npm package name: ${JSON.stringify(pkg)}`,
      );
    }
    version = opt("version");
    if (version === null) {
      r.fail(`${at}.version`, 'missing (an exact version such as "1.2.3")');
    }
    if (!isExactVersion(version)) {
      r.fail(
        `${at}.version`,
        `must be an exact version, not a range or tag: ${
          JSON.stringify(version)
        }`,
      );
    }
    bin = opt("bin");
    if (bin !== null && !/^[A-Za-z0-9@._-][A-Za-z0-9@._/-]*$/.test(bin)) {
      r.fail(`${at}.bin`, `not a bin name: ${JSON.stringify(bin)}`);
    }
    integrity = opt("integrity");
    if (integrity !== null && !isSha512Integrity(integrity)) {
      r.fail(
        `${at}.integrity`,
        `expected "sha512-<base64>" as npm prints it, got ${
          JSON.stringify(integrity)
        }`,
      );
    }
    if (Object.hasOwn(t, "dir")) {
      r.fail(
        `${at}.dir`,
        "applies to a local command, not a published package",
      );
    }
    id = opt("id") ?? `${pkg}@${version}${bin === null ? "" : `#${bin}`}`;
  }
  const args = Object.hasOwn(t, "args") ? r.strings(t.args, `${at}.args`) : [];
  args.forEach((a, i) => r.placeholders(a, `${at}.args[${i}]`, local));
  const env: Record<string, string> = {};
  if (Object.hasOwn(t, "env")) {
    for (const [k, v] of Object.entries(r.table(t.env, `${at}.env`))) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
        r.fail(`${at}.env.${k}`, "not a valid environment variable name");
      }
      const s = r.string(v, `${at}.env.${k}`);
      r.placeholders(s, `${at}.env.${k}`, local);
      const why = reservedEnv(k, s);
      if (why !== null) r.fail(`${at}.env.${k}`, why);
      env[k] = s;
    }
  }
  const backend = opt("backend") ?? "deno";
  if (backend !== "deno" && backend !== "node") {
    r.fail(
      `${at}.backend`,
      `expected "deno" or "node", got ${JSON.stringify(backend)}`,
    );
  }
  const allow = {
    sys: [] as string[],
    run: [] as string[],
    read: [] as string[],
  };
  if (Object.hasOwn(t, "allow")) {
    const a = r.table(t.allow, `${at}.allow`);
    for (const k of Object.keys(a)) {
      if (k !== "sys" && k !== "run" && k !== "read") {
        r.fail(`${at}.allow.${k}`, "unknown key (allowed: sys, run, read)");
      }
      allow[k] = r.strings(a[k], `${at}.allow.${k}`);
    }
    allow.sys.forEach((s, i) => {
      if (!SYS_NAMES.includes(s)) {
        r.fail(
          `${at}.allow.sys[${i}]`,
          `unknown name ${JSON.stringify(s)} (known: ${SYS_NAMES.join(", ")})`,
        );
      }
    });
    allow.read.forEach((p, i) =>
      r.placeholders(p, `${at}.allow.read[${i}]`, local)
    );
  }
  let timeoutS = DEFAULT_CENSUS_TIMEOUT_S;
  if (Object.hasOwn(t, "timeout")) {
    const n = t.timeout;
    if (typeof n !== "number" || !Number.isFinite(n) || n <= 0 || n > 3600) {
      r.fail(
        `${at}.timeout`,
        `expected seconds from 1 to 3600, got ${describe(n)}`,
      );
    }
    timeoutS = n;
  }
  return {
    id,
    slug: slugOf(id),
    index,
    package: pkg,
    version,
    bin,
    integrity,
    command,
    dir,
    args,
    env,
    backend,
    allow,
    timeoutS,
  };
}

/**
 * Parse a census list. `bytes` is the file's content (its digest identifies
 * the list); `file` names it in errors; `listDir` is its absolute directory
 * (local servers' `dir` is relative to it). Throws `DefinitionError`.
 *
 * @example
 * ```ts
 * const text = 'name = "n"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\n';
 * const list = parseCensusList(new TextEncoder().encode(text), "l.toml", "/x");
 * console.assert(list.servers[0]!.id === "a@1.0.0");
 * ```
 */
export function parseCensusList(
  bytes: Uint8Array,
  file: string,
  listDir: string,
): CensusList {
  const r: ListReader = new ListReader(file);
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      r.fail(
        "",
        `invalid TOML at line ${e.line}, column ${e.column}: ${
          e.message.split("\n")[0]
        }`,
      );
    }
    r.fail("", `invalid TOML: ${(e as Error).message.split("\n")[0]}`);
  }
  for (const k of Object.keys(raw)) {
    if (k !== "name" && k !== "servers") {
      r.fail(k, "unknown key (allowed at the top: name, servers)");
    }
  }
  if (!Object.hasOwn(raw, "name")) r.fail("name", "missing (the list's name)");
  const name = r.string(raw.name, "name");
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    r.fail(
      "name",
      `must be letters, digits, ".", "_" or "-" (it names directories), got ${
        JSON.stringify(name.slice(0, 80))
      }`,
    );
  }
  if (!Array.isArray(raw.servers) || raw.servers.length === 0) {
    r.fail("servers", "missing or empty: add [[servers]] tables");
  }
  const servers = raw.servers.map((s, i) => parseEntry(r, s, i, listDir));
  const ids = new Map<string, number>();
  const slugs = new Map<string, number>();
  for (const s of servers) {
    const prev = ids.get(s.id);
    if (prev !== undefined) {
      r.fail(
        `servers[${s.index}]`,
        `${s.id} is listed twice (also servers[${prev}]); give one an id`,
      );
    }
    const same = slugs.get(s.slug);
    if (same !== undefined) {
      r.fail(
        `servers[${s.index}]`,
        `${s.id} and servers[${same}] share the directory name ${s.slug}; give one an id`,
      );
    }
    ids.set(s.id, s.index);
    slugs.set(s.slug, s.index);
  }
  return { name, file, digest: `sha256:${sha256Hex(bytes)}`, servers };
}
