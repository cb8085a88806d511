/**
 * `--url URL`, `--header NAME=VALUE` and `--header-env NAME=ENV_VAR`: how
 * `tools`, `capture`, `reality` and `init` reach a remote MCP server over
 * Streamable HTTP. Header values are secrets: they are sent, never shown.
 *
 * Requires `--allow-env` (for `--header-env`), and what the command
 * launcher needs to start a server.
 *
 * @module
 */
import {
  type OptionSpec,
  type ParsedCommandLine,
  parseEnvPairs,
  requireServerCommand,
} from "./args.ts";
import { launchCommand, type LaunchedCommand } from "../launcher/command.ts";
import { UsageError } from "../errors.ts";
import { HttpClient, type HttpClientOptions } from "../wire/http_client.ts";
import { Redactor } from "../wire/redact.ts";
import type { OAuth, OAuthOptions } from "../wire/oauth.ts";
import { parseSignIn, SIGN_IN_OPTIONS, signInFlags } from "./_sign_in.ts";

/** The options every remote-capable command accepts. */
export const REMOTE_OPTIONS: OptionSpec = {
  url: { type: "string" },
  header: { type: "string", multiple: true },
  "header-env": { type: "string", multiple: true },
  ...SIGN_IN_OPTIONS,
};

/** A remote server to speak to, its headers, and the URL safe to show. */
export interface RemoteServer {
  url: string;
  /** The URL with password and query values redacted. */
  shownUrl: string;
  headers: Record<string, string>;
  /** Its OAuth client (tokens stored, obtained, refreshed). */
  auth: OAuth;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED = new Set([
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "content-length",
  "host",
]);

/** A repeatable option's values (none: empty). */
export function listOption(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)];
}

function headerName(command: string, flag: string, raw: string): string {
  const eq = raw.indexOf("=");
  const name = eq < 0 ? raw : raw.slice(0, eq);
  if (eq <= 0 || !TOKEN.test(name)) {
    throw new UsageError(
      `verity ${command}: --${flag} expects NAME=${
        flag === "header" ? "VALUE" : "ENV_VAR"
      }, got ${JSON.stringify(flag === "header" ? `${name}=…` : raw)}`,
    );
  }
  if (RESERVED.has(name.toLowerCase())) {
    throw new UsageError(
      `verity ${command}: --${flag} ${name}: verity sets this header itself`,
    );
  }
  return name;
}

/**
 * Read `--url`, `--header` and `--header-env`; null when `--url` is absent
 * (then the header flags are refused).
 *
 * @example
 * ```ts
 * import { parseRemote } from "./remote.ts";
 * const r = parseRemote("tools", {
 *   positionals: [],
 *   serverCommand: null,
 *   values: { url: "http://127.0.0.1:1/mcp", header: ["x-k=v"] },
 * });
 * console.assert(r?.headers["x-k"] === "v");
 * ```
 */
export function parseRemote(
  command: string,
  p: ParsedCommandLine,
  signIn: OAuthOptions = {},
): RemoteServer | null {
  const url = p.values.url;
  const headers: Record<string, string> = {};
  const raw = listOption(p.values.header);
  const fromEnv = listOption(p.values["header-env"]);
  if (url === undefined) {
    if (raw.length > 0 || fromEnv.length > 0) {
      throw new UsageError(
        `verity ${command}: --header and --header-env need --url`,
      );
    }
    const flag = signInFlags(p)[0];
    if (flag) throw new UsageError(`verity ${command}: --${flag} needs --url`);
    return null;
  }
  if (typeof url !== "string" || url === "") {
    throw new UsageError(`verity ${command}: --url expects a URL`);
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(
      `verity ${command}: --url ${
        JSON.stringify(new Redactor(Redactor.urlSecrets(url)).text(url))
      } is not a URL`,
    );
  }
  const shownUrl = new Redactor(Redactor.urlSecrets(url)).url(url);
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new UsageError(
      `verity ${command}: --url ${
        JSON.stringify(shownUrl)
      } must be http:// or https://`,
    );
  }
  if (p.serverCommand !== null || p.positionals.length > 0) {
    throw new UsageError(
      `verity ${command}: give either --url or a server to start, not both`,
    );
  }
  for (const h of raw) {
    const name = headerName(command, "header", h);
    headers[name] = h.slice(h.indexOf("=") + 1);
  }
  for (const h of fromEnv) {
    const name = headerName(command, "header-env", h);
    const v = h.slice(h.indexOf("=") + 1);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) {
      throw new UsageError(
        `verity ${command}: --header-env ${name}: ${
          JSON.stringify(v)
        } is not an environment variable name`,
      );
    }
    const value = Deno.env.get(v);
    if (value === undefined) {
      throw new UsageError(
        `verity ${command}: --header-env ${name}: environment variable ${v} is not set`,
      );
    }
    headers[name] = value;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n\0]/.test(value)) {
      throw new UsageError(
        `verity ${command}: header ${name}: the value holds a line break or NUL`,
      );
    }
  }
  const auth = parseSignIn(command, p, url, headers, signIn);
  return { url, shownUrl, headers, auth };
}

/** Refuse options that only apply to a started server when `--url` is given. */
export function refuseWithUrl(
  command: string,
  p: ParsedCommandLine,
  flags: readonly string[],
): void {
  for (const flag of flags) {
    if (p.values[flag] !== undefined) {
      throw new UsageError(
        `verity ${command}: --${flag} applies to a started server, not --url`,
      );
    }
  }
}

/** The options of a command that lists a server: started, or `--url`. */
export const LISTING_OPTIONS: OptionSpec = {
  timeout: { type: "string" },
  env: { type: "string", multiple: true },
  "no-sandbox": { type: "boolean" },
  offline: { type: "boolean" },
  ...REMOTE_OPTIONS,
};

/**
 * The server `verity tools` or `verity capture` lists: `--url`, or the
 * command after `--` started by the command launcher (sandboxed unless
 * `--no-sandbox`; `dispose` it after the session).
 */
export async function listedServer(
  command: string,
  p: ParsedCommandLine,
): Promise<
  | { remote: RemoteServer; launched: null; command: [] }
  | { remote: null; launched: LaunchedCommand; command: string[] }
> {
  const remote = parseRemote(command, p);
  if (remote !== null) {
    refuseWithUrl(command, p, ["env", "no-sandbox", "offline"]);
    return { remote, launched: null, command: [] };
  }
  const argv = requireServerCommand(command, p);
  const launched = await launchCommand(
    argv,
    parseEnvPairs(command, p.values.env),
    {
      noSandbox: p.values["no-sandbox"] === true,
      commandName: `verity ${command}`,
      offline: p.values.offline === true,
    },
  );
  return { remote: null, launched, command: argv };
}

/** A fresh client for `remote` (one per session). */
export function remoteClient(
  remote: RemoteServer,
  opts: HttpClientOptions = {},
): HttpClient {
  return new HttpClient(remote.url, {
    ...opts,
    headers: remote.headers,
    auth: remote.auth,
  });
}
