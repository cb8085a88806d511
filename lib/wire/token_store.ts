/**
 * Where verity keeps OAuth tokens between runs: one JSON file, mode 0600, in
 * a 0700 directory under the user's config directory
 * (`$XDG_CONFIG_HOME/verity/tokens.json`, else `~/.config/verity/tokens.json`),
 * one entry per protected resource. Never in reports or the ledger.
 *
 * Edge module: reads and writes that file. Requires `--allow-env`
 * (`XDG_CONFIG_HOME`, `HOME`), `--allow-read` and `--allow-write` of it.
 *
 * @module
 */
import { EnvironmentError } from "../errors.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** An access token and what it takes to refresh it, bound to one resource (RFC 8707). */
export interface StoredToken {
  /** The resource the token was issued for: it is sent to no other. */
  resource: string;
  /** The authorization server's issuer (the audience of a client assertion). */
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  /** A secret the authorization server gave at registration (never one the user passed). */
  clientSecret?: string;
  /** `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`. */
  authMethod: string;
  accessToken: string;
  refreshToken?: string;
  /** The scopes granted (or asked for, when the answer named none). */
  scope?: string;
}

/**
 * Whether `url` is the resource `resource` or lies under it: same origin,
 * and a path equal to the resource's or below it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(covers("https://a.example", "https://a.example/mcp"));
 * assert.ok(!covers("https://a.example/mcp", "https://a.example/mcpx"));
 * assert.ok(!covers("https://a.example/mcp", "https://b.example/mcp"));
 * ```
 */
export function covers(resource: string, url: string): boolean {
  try {
    const r = new URL(resource);
    const u = new URL(url);
    if (r.hash || r.origin !== u.origin) return false;
    const rp = r.pathname.replace(/\/+$/, "");
    const up = u.pathname.replace(/\/+$/, "");
    return up === rp || up.startsWith(rp + "/");
  } catch {
    return false;
  }
}

const TEXT = ["resource", "issuer", "tokenEndpoint", "clientId", "authMethod"];
const OPTIONAL = ["clientSecret", "refreshToken", "scope"];

/**
 * The token file.
 *
 * @example
 * ```ts ignore
 * const store = new TokenStore(TokenStore.defaultPath()!);
 * const t = store.find("https://mcp.example.com/mcp");
 * ```
 */
export class TokenStore {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** `$XDG_CONFIG_HOME/verity/tokens.json` or `~/.config/verity/tokens.json`; null without either. */
  static defaultPath(): string | null {
    const xdg = Deno.env.get("XDG_CONFIG_HOME");
    const home = Deno.env.get("HOME");
    const base = xdg?.startsWith("/") ? xdg : home ? `${home}/.config` : null;
    return base === null ? null : `${base}/verity/tokens.json`;
  }

  /** The token whose resource covers `url` most narrowly, if any. */
  find(url: string): StoredToken | null {
    let best: StoredToken | null = null;
    for (const t of this.#read()) {
      if (
        covers(t.resource, url) &&
        (best === null || t.resource.length > best.resource.length)
      ) best = t;
    }
    return best;
  }

  /** Keep `token`, replacing the one for the same resource (written whole, atomically, 0600). */
  put(token: StoredToken): void {
    const tokens = this.#read().filter((t) => t.resource !== token.resource);
    tokens.push(token);
    const dir = this.path.slice(0, this.path.lastIndexOf("/"));
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${crypto.randomUUID()}.tmp`;
    try {
      Deno.writeTextFileSync(
        tmp,
        JSON.stringify({ version: 1, tokens }, null, 2) + "\n",
        { mode: 0o600 },
      );
      Deno.renameSync(tmp, this.path);
    } catch (e) {
      try {
        Deno.removeSync(tmp);
      } catch {
        // never written
      }
      throw e;
    }
  }

  #read(): StoredToken[] {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw new EnvironmentError(
        `${this.path}: cannot read the token store: ${(e as Error).message}`,
      );
    }
    const bad = (why: string) =>
      new EnvironmentError(
        `${this.path}: not a verity token store (${why}); delete it and sign in again`,
      );
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw bad("invalid JSON");
    }
    if (
      !isPlainObject(doc) || doc.version !== 1 || !Array.isArray(doc.tokens)
    ) throw bad("no version 1 token list");
    return doc.tokens.map((t, i) => {
      if (
        !isPlainObject(t) || TEXT.some((k) => typeof t[k] !== "string") ||
        typeof t.accessToken !== "string" ||
        OPTIONAL.some((k) => t[k] !== undefined && typeof t[k] !== "string")
      ) throw bad(`entry ${i} is malformed`);
      return t as unknown as StoredToken;
    });
  }
}
