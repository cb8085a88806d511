/**
 * Parse a definition's TOML text into a {@linkcode Definition}, strictly:
 * unknown keys, wrong types, `TODO(verity)` values and unknown placeholders
 * are `DefinitionError`s naming the file and key path. Pure.
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { normalizeAbsolute, normalizeLabel } from "../common/paths.ts";
import {
  type AdapterDef,
  type Allowances,
  DEFAULT_TIMEOUTS,
  type Definition,
  SYS_NAMES,
  type ToolDef,
} from "./types.ts";
import { join, plain, Reader, relativePath } from "./_reader.ts";

import { parseAdapter } from "./_parse_adapter.ts";
import { parseTool } from "./_parse_tool.ts";

function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/** Longest definition name (it names run directories and ledger blocks). */
export const MAX_NAME_CHARS = 100;

/** Longest timeout in seconds (an hour; timers cannot hold more than ~24 days). */
export const MAX_TIMEOUT_S = 3600;

/**
 * Why a declared environment variable would take over what verity itself
 * controls, or null. The sandbox sets `DENO_DIR`, the audit log and the
 * state directory; `HOME` must stay inside the state directory.
 */
export function reservedEnv(name: string, value: string): string | null {
  if (
    ["DENO_DIR", "DENO_AUDIT_PERMISSIONS", "DENO_NO_UPDATE_CHECK"].includes(
      name,
    ) || name.startsWith("DENO_TRACE")
  ) {
    return `${name} is set by verity's sandbox and may not be declared`;
  }
  if (name === "VERITY_STATE_DIR" && value !== "{state}") {
    return `VERITY_STATE_DIR is the session's state directory; declare it as "{state}" or not at all, got ${
      JSON.stringify(value.slice(0, 80))
    }`;
  }
  if (name === "HOME" && !/^\{state\}(\/|$)/.test(value)) {
    return `HOME must be inside the state directory ("{state}" or "{state}/..."), got ${
      JSON.stringify(value.slice(0, 80))
    }`;
  }
  return null;
}

/**
 * Parse and validate a definition's TOML text. Pure: seeds
 * are not read here (`loadDefinition` in `load.ts` does). The digest is left
 * empty.
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
    "transport",
    "url",
  ]);
  if (!Object.hasOwn(head, "name")) {
    r.fail(`${kind}.name`, "missing (the definition's name)");
  }
  const name = r.nonEmptyString(head.name, `${kind}.name`);
  if (
    name.length > MAX_NAME_CHARS || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)
  ) {
    r.fail(
      `${kind}.name`,
      name.length > MAX_NAME_CHARS
        ? `must be at most ${MAX_NAME_CHARS} characters, got ${name.length}`
        : `must be letters, digits, ".", "_" or "-" (it names run directories), got ${
          JSON.stringify(name.slice(0, 80))
        }`,
    );
  }
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
      const why = reservedEnv(k, env[k]);
      if (why !== null) r.fail(join(`${kind}.env`, k), why);
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
      if (n <= 0 || n > MAX_TIMEOUT_S) {
        r.fail(
          `${kind}.timeouts.${k}`,
          `must be a positive number of seconds up to ${MAX_TIMEOUT_S}, got ${n}`,
        );
      }
      timeouts[field] = n;
    }
  }
  const sandbox: Definition["sandbox"] = Object.hasOwn(head, "sandbox")
    ? r.oneOf(head.sandbox, `${kind}.sandbox`, ["deno", "bubblewrap", "none"])
    : null;
  const read: string[] = r.optional(head, kind, "read", "strings", []);
  const readKeys = read.map((_, i) => `${kind}.read[${i}]`);
  // A path the sandbox grants: known placeholders, no climbing out of one.
  const granted = (p: string, at: string) => {
    r.placeholders(p, at, hasSource);
    noTraversal(r, p, at);
  };
  read.forEach((p, i) => granted(p, readKeys[i]!));
  const cwd = r.optional(head, kind, "cwd", "nonEmptyString", null);
  if (cwd !== null) {
    r.placeholders(cwd, `${kind}.cwd`, hasSource);
    if (!cwd.startsWith("/") && !cwd.startsWith("{")) {
      r.fail(
        `${kind}.cwd`,
        `must be absolute or start with a placeholder such as {state}, got ${
          JSON.stringify(cwd)
        }`,
      );
    }
    granted(cwd, `${kind}.cwd`);
  }
  const allow: Allowances = { sys: [], run: [] };
  if (Object.hasOwn(head, "allow")) {
    const a = r.table(head.allow, `${kind}.allow`);
    r.keys(a, `${kind}.allow`, ["sys", "run", "read"]);
    allow.sys = r.optional(a, `${kind}.allow`, "sys", "strings", []);
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
    allow.run = r.optional(a, `${kind}.allow`, "run", "strings", []);
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
    const extra: string[] = r.optional(
      a,
      `${kind}.allow`,
      "read",
      "strings",
      [],
    );
    extra.forEach((p, i) => {
      granted(p, `${kind}.allow.read[${i}]`);
      read.push(p);
      readKeys.push(`${kind}.allow.read[${i}]`);
    });
  }
  if (cwd !== null) cwdReadable(r, cwd, read, dirname(file), `${kind}.cwd`);

  const { transport, url } = parseTransport(r, head, kind, [
    ...command.map((c, i) => [c, `${kind}.command[${i}]`] as const),
    ...Object.entries(env).map(([k, v]) =>
      [v, join(`${kind}.env`, k)] as const
    ),
    ...read.map((p, i) => [p, `${kind}.read[${i}]`] as const),
    ...(cwd === null ? [] : [[cwd, `${kind}.cwd`] as const]),
  ]);

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

  const pgAdapters = adapters.filter((a) => a.kind === "postgres");
  if (pgAdapters.length > 1) {
    r.fail(
      `adapters[${adapters.lastIndexOf(pgAdapters.at(-1)!)}]`,
      "at most one postgres adapter per definition (its database is what {postgres_url} names)",
    );
  }
  if (pgAdapters.length === 0) {
    const uses = [...command, ...Object.values(env), ...read].find((v) =>
      /\{postgres_[a-z]+\}/.test(v)
    );
    if (uses !== undefined) {
      r.fail(
        kind,
        `${
          JSON.stringify(uses)
        } uses a {postgres_…} placeholder but no [[adapters]] has kind = "postgres"`,
      );
    }
  }

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
    readKeys,
    cwd,
    allow,
    transport,
    url,
    locations,
    adapters,
    tools,
    source,
  };
}

/**
 * `transport` and `url`: stdio by default; `"http"` needs a loopback `url`
 * holding `{port}` (and no other placeholder), and `{port}` appears nowhere
 * else unless the transport is HTTP.
 */
function parseTransport(
  r: Reader,
  head: Record<string, unknown>,
  kind: string,
  strings: readonly (readonly [string, string])[],
): { transport: "stdio" | "http"; url: string | null } {
  const transport = Object.hasOwn(head, "transport")
    ? r.oneOf(head.transport, `${kind}.transport`, ["stdio", "http"])
    : "stdio";
  const url = r.optional(head, kind, "url", "nonEmptyString", null);
  if (url !== null) {
    if (transport !== "http") {
      r.fail(`${kind}.url`, 'applies only with transport = "http"');
    }
    const m = /^http:\/\/(127\.0\.0\.1|localhost):\{port\}(\/[^{}\s]*)?$/
      .exec(url);
    if (!m) {
      r.fail(
        `${kind}.url`,
        `expected http://127.0.0.1:{port}/<path> (a loopback URL with the {port} placeholder), got ${
          JSON.stringify(url)
        }`,
      );
    }
  } else if (transport === "http") {
    r.fail(
      `${kind}.url`,
      'missing: transport = "http" needs the server\'s URL, e.g. "http://127.0.0.1:{port}/mcp"',
    );
  }
  if (transport !== "http") {
    for (const [v, path] of strings) {
      if (v.includes("{port}")) {
        r.fail(path, '{port} needs transport = "http"');
      }
    }
  }
  return { transport, url };
}

/**
 * Where a path the sandbox grants really points: `{target}` is the
 * definition's directory, `..` segments resolved. A path under another
 * placeholder stays relative to it (`{state}/a`); null when it climbs out
 * of it (`{state}/../..`: another session's directory, or the host).
 */
function resolvedPath(p: string, dir: string): string | null {
  const t = p.startsWith("{target}") ? dir + p.slice("{target}".length) : p;
  if (t.startsWith("/")) return normalizeAbsolute(t);
  const m = /^(\{[a-z_]+\})(.*)$/.exec(t);
  if (m === null) return t;
  const out: string[] = [];
  for (const seg of m[2]!.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return [m[1]!, ...out].join("/");
}

/**
 * A path the sandbox grants may not climb out of the placeholder it starts
 * with (hardening, round three): `{state}/../..` names the run's other
 * sessions, never this session's state.
 */
function noTraversal(r: Reader, p: string, keyPath: string): void {
  if (resolvedPath(p, "/") === null) {
    r.fail(
      keyPath,
      `${JSON.stringify(p)} climbs out of ${
        p.slice(0, p.indexOf("}") + 1)
      } with "..": name the directory itself`,
    );
  }
}

/** Directories a server may always read: its state, its definition, its source. */
const READABLE_ROOTS = ["{state}", "{target}", "{source}", "{node_modules}"];

/**
 * The server's working directory must be one it may read (the state or
 * definition directory, the source, a read path), as the launcher requires:
 * checked here so a wrong `cwd` is one line before anything runs, not a
 * battery of SETUP_FAILED.
 */
function cwdReadable(
  r: Reader,
  cwd: string,
  read: readonly string[],
  dir: string,
  keyPath: string,
): void {
  const at = resolvedPath(cwd, dir) ?? cwd;
  const within = (d: string) => {
    const base = (resolvedPath(d, dir) ?? d).replace(/\/+$/, "");
    return at === base || at.startsWith(base + "/");
  };
  if ([...READABLE_ROOTS, dir, ...read].some(within)) return;
  r.fail(
    keyPath,
    `${
      JSON.stringify(cwd)
    } is outside what the server may read ({state}, {target}, {source}, the definition's directory, read paths): add it to allow.read or choose one of those`,
  );
}
