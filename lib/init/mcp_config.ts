/**
 * MCP client configuration files: the server table that Claude Desktop
 * (`claude_desktop_config.json`), Cursor (`.cursor/mcp.json`), Windsurf and
 * Claude Code (`.mcp.json`) keep under `mcpServers`, and VS Code keeps under
 * `servers` (`.vscode/mcp.json`) or `mcp.servers` (`settings.json`). VS Code
 * files are JSON with comments and trailing commas; both are accepted.
 * Pure: text in, data out.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** One server as a client would start it (stdio) or reach it (`url`). */
export interface ConfiguredServer {
  /** The key it is listed under. */
  name: string;
  /** A remote server's URL (`verity init --url`), else null. */
  url: string | null;
  /** A remote server's headers, as written. */
  headers: Record<string, string>;
  /** The program to start ("" for a remote server). */
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Working directory, when the config sets one. */
  cwd: string | null;
  /** Where in the file the table was found, e.g. `mcpServers`. */
  table: string;
}

/**
 * Strip `//` and `/* *\/` comments and trailing commas outside strings, so
 * JSONC (VS Code) parses as JSON. Offsets of everything else are kept.
 */
export function stripJsonComments(text: string): string {
  // A string (to its end when unterminated) is kept; a comment is blanked,
  // its line breaks kept; then a comma before `}` or `]` is blanked.
  const string = String.raw`"(?:[^"\\]|\\[\s\S]?)*(?:"|$)`;
  const comments = new RegExp(
    `${string}|//[^\n]*|/\\*[\\s\\S]*?(?:\\*/|$)`,
    "g",
  );
  const commas = new RegExp(`${string}|,(?=\\s*[}\\]])`, "g");
  return text
    .replace(comments, (m) => m[0] === '"' ? m : m.replace(/[^\n]/g, " "))
    .replace(commas, (m) => m === "," ? " " : m);
}

/** The server tables a config file holds, by where they were found. */
export function serverTables(
  doc: unknown,
): { table: string; servers: Record<string, unknown> }[] {
  const out: { table: string; servers: Record<string, unknown> }[] = [];
  if (!isPlainObject(doc)) return out;
  if (isPlainObject(doc.mcpServers)) {
    out.push({ table: "mcpServers", servers: doc.mcpServers });
  }
  if (isPlainObject(doc.servers)) {
    out.push({ table: "servers", servers: doc.servers });
  }
  if (isPlainObject(doc.mcp) && isPlainObject(doc.mcp.servers)) {
    out.push({ table: "mcp.servers", servers: doc.mcp.servers });
  }
  return out;
}

/** A table of strings (`env`, `headers`); `where` names it in errors. */
function strings(raw: unknown, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  if (!isPlainObject(raw)) {
    throw new ConfigError(`${where}: expected an object`);
  }
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== "string") {
      throw new ConfigError(
        `${where}.${k}: expected a string, got ${JSON.stringify(v)}`,
      );
    }
    out[k] = v;
  }
  return out;
}

/**
 * Read one server's entry from an MCP client configuration file. Every
 * problem is a {@linkcode ConfigError} naming the file and the key.
 *
 * @example
 * ```ts
 * const s = readConfiguredServer(
 *   '{"mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}}}',
 *   "claude_desktop_config.json",
 *   "memory",
 * );
 * s.command; // "npx"
 * ```
 */
export function readConfiguredServer(
  text: string,
  file: string,
  name: string,
): ConfiguredServer {
  let doc: unknown;
  try {
    doc = JSON.parse(stripJsonComments(text));
  } catch (e) {
    throw new ConfigError(
      `${file}: not JSON (or JSON with comments): ${(e as Error).message}`,
    );
  }
  const tables = serverTables(doc);
  if (tables.length === 0) {
    throw new ConfigError(
      `${file}: no server table: expected "mcpServers" (Claude Desktop, Cursor), "servers" (VS Code mcp.json) or "mcp.servers" (VS Code settings)`,
    );
  }
  const found = tables.find((t) => Object.hasOwn(t.servers, name));
  if (!found) {
    const names = tables.flatMap((t) => Object.keys(t.servers));
    throw new ConfigError(
      `${file}: no server named ${JSON.stringify(name)} (listed: ${
        names.length ? names.map((n) => JSON.stringify(n)).join(", ") : "none"
      })`,
    );
  }
  const where = `${found.table}.${JSON.stringify(name)}`;
  const entry = found.servers[name];
  if (!isPlainObject(entry)) {
    throw new ConfigError(`${file}: ${where}: expected an object`);
  }
  const type = entry.type;
  if (typeof entry.url === "string") {
    return {
      name,
      url: entry.url,
      headers: strings(entry.headers, `${file}: ${where}.headers`),
      command: "",
      args: [],
      env: {},
      cwd: null,
      table: found.table,
    };
  }
  if (
    entry.url !== undefined ||
    (type !== undefined && type !== "stdio")
  ) {
    throw new ConfigError(
      `${file}: ${where}: ${
        entry.url !== undefined
          ? "url: expected a string"
          : `type ${JSON.stringify(type)} without a url`
      }`,
    );
  }
  if (typeof entry.command !== "string" || entry.command.trim() === "") {
    throw new ConfigError(
      `${file}: ${where}.command: expected the program to start, as a string`,
    );
  }
  const args: string[] = [];
  if (entry.args !== undefined) {
    if (!Array.isArray(entry.args)) {
      throw new ConfigError(
        `${file}: ${where}.args: expected an array of strings`,
      );
    }
    entry.args.forEach((a, i) => {
      if (typeof a !== "string") {
        throw new ConfigError(
          `${file}: ${where}.args[${i}]: expected a string, got ${
            JSON.stringify(a)
          }`,
        );
      }
      args.push(a);
    });
  }
  const env = strings(entry.env, `${file}: ${where}.env`);
  const cwd = typeof entry.cwd === "string" ? entry.cwd : null;
  return {
    name,
    url: null,
    headers: {},
    command: entry.command,
    args,
    env,
    cwd,
    table: found.table,
  };
}

/**
 * The config text with server `name` rewritten to start through `guard`
 * (the argv of `verity guard`) with `options`: the entry keeps every other key, and
 * its original command and arguments follow `--`, so nothing is lost. The
 * file is written back as plain JSON (comments are not kept). Throws
 * {@linkcode ConfigError} as {@linkcode readConfiguredServer} does, and
 * for an entry already wrapped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = wrapConfiguredServer('{"mcpServers":{"m":{"command":"npx","args":["-y","srv"]}}}', "c.json", "m", ["verity", "guard"], ["--ledger", "/l"]);
 * assert.deepEqual(JSON.parse(text).mcpServers.m.args, ["guard", "--ledger", "/l", "--", "npx", "-y", "srv"]);
 * ```
 */
export function wrapConfiguredServer(
  text: string,
  file: string,
  name: string,
  guard: readonly string[],
  options: readonly string[],
): string {
  const s = readConfiguredServer(text, file, name);
  if (s.url !== null) {
    throw new ConfigError(
      `${file}: ${s.table}.${
        JSON.stringify(name)
      }: a remote server (url); verity guard stands between a client and a server it starts over stdio`,
    );
  }
  const rest = guard.slice(1);
  if (
    s.command === guard[0] &&
    rest.every((a, i) => s.args[i] === a)
  ) {
    throw new ConfigError(
      `${file}: ${s.table}.${
        JSON.stringify(name)
      }: already runs through verity guard`,
    );
  }
  const doc = JSON.parse(stripJsonComments(text));
  const servers = serverTables(doc).find((t) => t.table === s.table)!.servers;
  servers[name] = {
    ...servers[name] as Record<string, unknown>,
    command: guard[0],
    args: [...rest, ...options, "--", s.command, ...s.args],
  };
  return JSON.stringify(doc, null, 2) + "\n";
}
