/**
 * The client side of MCP authorization (2025-11-25; OAuth 2.1). When a
 * remote server answers 401 or 403, the {@linkcode HttpClient} asks its
 * {@linkcode Authorizer} for a token and sends the request once more. The
 * steps (resource and authorization server metadata, the client, the grant,
 * scopes and step-up, at most three sign-ins) are in docs/http.md,
 * "Servers behind sign-in: OAuth".
 *
 * Everything the servers send is hostile: documents and token answers are
 * bounded (64 KiB, the request timeout) and validated field by field, come
 * only from https or loopback http URLs, and redirects are not followed. A
 * resource whose metadata names another resource is refused before any
 * sign-in, and a token is only ever sent to the resource it was issued for.
 *
 * Edge module: network, clock, randomness, a loopback listener. Requires
 * `--allow-net` (and what {@linkcode TokenStore} needs).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { covers, type StoredToken, type TokenStore } from "./token_store.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { readAtMost } from "./lines.ts";

/** A 401 or 403 answer, as the HTTP client saw it. */
export interface AuthChallenge {
  /** The URL that was refused. */
  url: string;
  status: number;
  /** Its `WWW-Authenticate` header, if any. */
  wwwAuthenticate: string | null;
  /** The `Authorization` header that was sent, if any. */
  sent: string | null;
}

/** Where an HTTP client gets its `Authorization` header. */
export interface Authorizer {
  /** The header value for a request to `url`, or null. */
  header(url: string): string | null;
  /** After a 401 or 403: null when a new token is ready (send again), else one line saying why not and what would help. */
  challenge(c: AuthChallenge): Promise<string | null>;
}

/** A client registered beforehand (`--client-id`). */
export interface OAuthClient {
  id: string;
  /** For `client_secret_basic` or `client_secret_post`. */
  secret?: string;
  /** A P-256 (ES256) or RSA (RS256) private key, for `private_key_jwt`. */
  key?: () => Promise<CryptoKey>;
}

/** Options for {@linkcode OAuth}. */
export interface OAuthOptions {
  /**
   * Sign in with the authorization code flow when the server asks: called
   * with the URL the person opens. Without it (and without client
   * credentials), a server asking for sign-in is one line naming the
   * `verity login` command that would satisfy it.
   */
  signIn?: (authorizationUrl: string) => void;
  /** A pre-registered client. */
  client?: OAuthClient;
  /** Use the client credentials grant (machine to machine) with `client`. */
  clientCredentials?: boolean;
  /** The URL of verity's client ID metadata document, used where the authorization server takes them. */
  clientMetadataUrl?: string;
  /** The scopes to ask for at the first sign-in (else from the challenge or the metadata). */
  scope?: string;
  /** Where tokens are kept between runs (not for client credentials). */
  store?: TokenStore;
  /**
   * Ignore a stored token (`verity login` always signs in anew).
   * @default {false}
   */
  fresh?: boolean;
  /** The `Authorization` header came from the user (named here): it is never replaced. */
  userHeader?: string;
  /**
   * Milliseconds to wait for the browser to come back to the loopback redirect.
   * @default {300000}
   */
  signInTimeoutMs?: number;
}

/** The parameters of a Bearer challenge that verity uses, validated. */
export interface BearerChallenge {
  scope?: string;
  resourceMetadata?: string;
  error?: string;
  errorDescription?: string;
}

const MAX_DOCUMENT = 64 * 1024;
/** Milliseconds each metadata, registration or token request may take. */
const REQUEST_MS = 30_000;
const MAX_SIGN_INS = 3;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;
const enc = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The Bearer challenge of a `WWW-Authenticate` header (first 8 KiB), or
 * null when it holds none. A malformed `scope` is dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const c = parseBearerChallenge(
 *   'Basic realm="x", Bearer error="insufficient_scope", scope="a b"',
 * );
 * assert.deepEqual(c, { error: "insufficient_scope", scope: "a b" });
 * ```
 */
export function parseBearerChallenge(
  header: string | null,
): BearerChallenge | null {
  if (header === null) return null;
  const h = header.slice(0, 8192);
  const start = /(?:^|[\s,])Bearer(?=\s|,|$)/i.exec(h);
  if (start === null) return null;
  const param =
    /[\s,]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))/y;
  param.lastIndex = start.index + start[0].length;
  const p: Record<string, string> = {};
  for (let m = param.exec(h); m !== null; m = param.exec(h)) {
    p[m[1]!.toLowerCase()] ??= m[2]?.replace(/\\(.)/g, "$1") ?? m[3] ?? "";
  }
  const out: BearerChallenge = {};
  if (p.scope && p.scope.length <= 2048 && SCOPE.test(p.scope)) {
    out.scope = p.scope;
  }
  if (p.resource_metadata) out.resourceMetadata = p.resource_metadata;
  if (p.error && /^[\x21-\x7e]{1,64}$/.test(p.error)) out.error = p.error;
  if (p.error_description) {
    out.errorDescription = p.error_description.slice(0, 200);
  }
  return out;
}

/** What the server asked for, for a message. */
function asked(status: number, c: BearerChallenge | null, raw: string | null) {
  const parts = [`HTTP ${status}`];
  if (c === null) {
    parts.push(raw === null ? "no WWW-Authenticate" : "no Bearer challenge");
  }
  if (c?.error) parts.push(c.error);
  if (c?.scope) parts.push(`scope "${c.scope}"`);
  if (c?.errorDescription) parts.push(JSON.stringify(c.errorDescription));
  return parts.join(", ");
}

/** A URL verity may fetch for OAuth: https, or http on a loopback host; no credentials or fragment. */
function safeUrl(raw: unknown, what: string): string {
  const u = typeof raw === "string" && raw.length <= 2048
    ? URL.parse(raw)
    : null;
  if (u === null) {
    throw new Error(
      `${what} ${JSON.stringify(String(raw).slice(0, 80))} is not a URL`,
    );
  }
  const loopback = u.hostname === "localhost" || u.hostname === "[::1]" ||
    /^127(\.\d{1,3}){3}$/.test(u.hostname);
  if (u.protocol !== "https:" && !(u.protocol === "http:" && loopback)) {
    throw new Error(
      `${what} ${
        JSON.stringify(u.origin)
      } is neither https nor http on a loopback address`,
    );
  }
  if (u.username || u.password || u.hash) {
    throw new Error(
      `${what} ${JSON.stringify(u.origin)} carries credentials or a fragment`,
    );
  }
  return u.toString();
}

/** GET or POST `url`; the answer's status and JSON (undefined when not JSON), at most 64 KiB. */
async function fetchJson(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; json: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      ...init,
      redirect: "manual",
      signal: AbortSignal.timeout(REQUEST_MS),
    });
  } catch (e) {
    throw new Error(`cannot reach ${url}: ${(e as Error).message}`);
  }
  const { bytes, over } = await readAtMost(res.body, MAX_DOCUMENT);
  if (over) throw new Error(`${url} answered more than ${MAX_DOCUMENT} bytes`);
  try {
    return { status: res.status, json: JSON.parse(utf8.decode(bytes)) };
  } catch {
    return { status: res.status, json: undefined };
  }
}

/** An OAuth error answer (a JSON body, or a redirect's query) in a few words. */
function errorOf(head: string, answer: unknown): string {
  const o = isPlainObject(answer) ? answer : {};
  const err = typeof o.error === "string" ? `: ${o.error.slice(0, 64)}` : "";
  const desc = typeof o.error_description === "string"
    ? ` (${JSON.stringify(o.error_description.slice(0, 200))})`
    : "";
  return head + err + desc;
}

/** A list of strings, or undefined when absent or malformed. */
function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.length <= 256 &&
      v.every((x) => typeof x === "string" && x.length <= 256)
    ? v as string[]
    : undefined;
}

interface ResourceMetadata {
  resource: string;
  servers: string[];
  scopes: string[] | undefined;
}

/** The protected resource metadata for `url` (RFC 9728), or null when the server publishes none. */
async function resourceMetadata(
  url: string,
  named: string | undefined,
): Promise<ResourceMetadata | null> {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, "");
  const well = `${u.origin}/.well-known/oauth-protected-resource`;
  const tries = named !== undefined
    ? [safeUrl(named, "resource_metadata")]
    : [...(path ? [well + path] : []), well];
  for (const at of tries) {
    const { status, json } = await fetchJson(at);
    if (status !== 200 || !isPlainObject(json)) {
      if (named === undefined) continue;
      throw new Error(
        `the resource metadata at ${at} is unusable (${
          errorOf(`HTTP ${status}`, json)
        })`,
      );
    }
    const servers = strings(json.authorization_servers);
    if (typeof json.resource !== "string" || !servers?.length) {
      throw new Error(
        `the resource metadata at ${at} lacks resource or authorization_servers`,
      );
    }
    if (!covers(json.resource, url)) {
      throw new Error(
        `the resource metadata at ${at} is for ${
          JSON.stringify(json.resource.slice(0, 200))
        }, not ${url}: refusing to sign in for another resource`,
      );
    }
    const scopes = strings(json.scopes_supported)?.filter((s) => SCOPE.test(s));
    return { resource: json.resource, servers, scopes };
  }
  return null;
}

interface ServerMetadata {
  issuer: string;
  authorizationEndpoint: string | undefined;
  tokenEndpoint: string;
  registrationEndpoint: string | undefined;
  pkce: boolean;
  authMethods: string[];
  scopes: string[];
  cimd: boolean;
}

/**
 * The authorization server's metadata (RFC 8414 and OpenID discovery, in
 * the spec's order), or null when none is published. For a 2025-03-26
 * server (`legacy`), only its origin's RFC 8414 document, whose issuer need
 * only share the origin.
 */
async function serverMetadata(
  issuer: string,
  legacy: boolean,
): Promise<ServerMetadata | null> {
  const u = new URL(safeUrl(issuer, "authorization server"));
  const path = legacy ? "" : u.pathname.replace(/\/+$/, "");
  const o = u.origin;
  const tries = path
    ? [
      `${o}/.well-known/oauth-authorization-server${path}`,
      `${o}/.well-known/openid-configuration${path}`,
      `${o}${path}/.well-known/openid-configuration`,
    ]
    : [
      `${o}/.well-known/oauth-authorization-server`,
      ...(legacy ? [] : [`${o}/.well-known/openid-configuration`]),
    ];
  for (const at of tries) {
    const { status, json: m } = await fetchJson(at);
    if (status !== 200 || !isPlainObject(m)) continue;
    const iss = typeof m.issuer === "string" ? m.issuer : "";
    const same = legacy
      ? URL.canParse(iss) && new URL(iss).origin === o
      : iss.replace(/\/+$/, "") === issuer.replace(/\/+$/, "");
    if (!same) {
      throw new Error(
        `the authorization server metadata at ${at} names issuer ${
          JSON.stringify(iss.slice(0, 200))
        }, not ${issuer}`,
      );
    }
    const optional = (k: string) =>
      m[k] === undefined ? undefined : safeUrl(m[k], k);
    return {
      issuer: iss,
      authorizationEndpoint: optional("authorization_endpoint"),
      tokenEndpoint: safeUrl(m.token_endpoint, "token_endpoint"),
      registrationEndpoint: optional("registration_endpoint"),
      pkce: strings(m.code_challenge_methods_supported)?.includes("S256") ??
        false,
      authMethods: strings(m.token_endpoint_auth_methods_supported) ?? [],
      scopes: strings(m.scopes_supported) ?? [],
      cimd: m.client_id_metadata_document_supported === true,
    };
  }
  return null;
}

/** Where a token is asked for: the resource and the authorization server. */
interface Discovery {
  scopes: string[] | undefined;
  server: ServerMetadata;
  /** What a token from there is bound to. */
  where: Pick<StoredToken, "resource" | "issuer" | "tokenEndpoint">;
}

/** A client ready for the token endpoint. */
interface Client extends OAuthClient {
  method: string;
}

function b64url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

function randomText(bytes: number): string {
  return b64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function union(
  a: string | undefined,
  b: string | undefined,
): string | undefined {
  const all = [...new Set(`${a ?? ""} ${b ?? ""}`.split(" ").filter(Boolean))];
  return all.length > 0 ? all.join(" ") : undefined;
}

/** A token text that can travel in a header: 1 to 16384 visible ASCII characters. */
function tokenText(v: unknown): v is string {
  return typeof v === "string" && v.length <= 16384 &&
    /^[\x21-\x7e]+$/.test(v);
}

/** A signed client assertion (RFC 7523) for `private_key_jwt`. */
async function clientAssertion(
  key: CryptoKey,
  clientId: string,
  audience: string,
): Promise<string> {
  const ec = key.algorithm.name === "ECDSA";
  const now = Math.floor(Date.now() / 1000);
  const part = (o: unknown) => b64url(enc.encode(JSON.stringify(o)));
  const input = `${part({ alg: ec ? "ES256" : "RS256", typ: "JWT" })}.${
    part({
      iss: clientId,
      sub: clientId,
      aud: audience,
      iat: now,
      exp: now + 300,
      jti: crypto.randomUUID(),
    })
  }`;
  const sig = await crypto.subtle.sign(
    ec ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5" },
    key,
    enc.encode(input),
  );
  return `${input}.${b64url(new Uint8Array(sig))}`;
}

/** A listener on 127.0.0.1 for the authorization answer (RFC 8252 loopback redirect). */
function loopbackRedirect(timeoutMs: number) {
  let got!: (q: URLSearchParams) => void;
  const answer = new Promise<URLSearchParams>((r) => (got = r));
  let state: string | null = null;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (
    req,
  ) => {
    const u = new URL(req.url);
    const q = u.searchParams;
    if (u.pathname !== "/callback" || q.get("state") !== state) {
      return new Response("not found\n", { status: 404 });
    }
    got(q);
    return new Response("verity: signed in; you can close this page.\n");
  });
  return {
    uri: `http://127.0.0.1:${server.addr.port}/callback`,
    /** The query of the redirect that carries `expected` as its state. */
    wait(expected: string): Promise<URLSearchParams> {
      state = expected;
      let timer: ReturnType<typeof setTimeout> | undefined;
      return Promise.race([
        answer,
        new Promise<never>((_, fail) => {
          timer = setTimeout(
            () => fail(new Error(`no sign-in within ${timeoutMs / 1000} s`)),
            timeoutMs,
          );
        }),
      ]).finally(() => clearTimeout(timer));
    },
    close: () => server.shutdown(),
  };
}

/**
 * The OAuth client of one remote MCP server: tokens loaded from the store,
 * obtained, refreshed and kept. Challenges are answered one at a time, so
 * sessions sharing it sign in once.
 *
 * @example
 * ```ts ignore
 * const auth = new OAuth(url, { signIn: (u) => console.error(`open ${u}`) });
 * const client = new HttpClient(url, { auth });
 * ```
 */
export class OAuth implements Authorizer {
  readonly #url: string;
  readonly #opts: OAuthOptions;
  #token: StoredToken | null;
  #found: Discovery | null = null;
  #signIns = 0;
  #queue: Promise<unknown> = Promise.resolve();

  /** `url` is the MCP endpoint. */
  constructor(url: string, opts: OAuthOptions = {}) {
    this.#url = url;
    this.#opts = opts;
    this.#token = opts.fresh ? null : opts.store?.find(url) ?? null;
  }

  /** The token in use, if any. */
  get token(): StoredToken | null {
    return this.#token;
  }

  header(url: string): string | null {
    const t = this.#token;
    return t !== null && covers(t.resource, url)
      ? `Bearer ${t.accessToken}`
      : null;
  }

  challenge(c: AuthChallenge): Promise<string | null> {
    const next = this.#queue.then(() => this.#answer(c)).catch((e) =>
      (e as Error).message
    );
    this.#queue = next;
    return next;
  }

  async #answer(c: AuthChallenge): Promise<string | null> {
    const now = this.header(c.url);
    if (now !== null && now !== c.sent) return null;
    const ch = parseBearerChallenge(c.wwwAuthenticate);
    const what = asked(c.status, ch, c.wwwAuthenticate);
    const opts = this.#opts;
    if (opts.userHeader !== undefined) {
      return `the server refused ${opts.userHeader} (${what})`;
    }
    const step = c.status === 403;
    if (step && ch?.error !== "insufficient_scope") {
      return `the server refused the request (${what})`;
    }
    const held = this.#token?.scope?.split(" ") ?? [];
    if (
      step && (!ch?.scope || ch.scope.split(" ").every((s) => held.includes(s)))
    ) {
      return `the server answers insufficient_scope (${what}) naming no scope the token lacks`;
    }
    if (!step && this.#token?.refreshToken && await this.#refresh()) {
      return null;
    }
    if (opts.signIn === undefined && !opts.clientCredentials) {
      const scope = step ? union(this.#token?.scope, ch?.scope) : undefined;
      return `the server asks for OAuth sign-in (${what}): run verity login ${this.#url}${
        scope ? ` --scope "${scope}"` : ""
      }`;
    }
    if (this.#signIns >= MAX_SIGN_INS) {
      return `the server still refuses after ${MAX_SIGN_INS} sign-ins (${what})`;
    }
    this.#signIns++;
    const d = await this.#discover(c.url, ch);
    let scope = step
      ? union(this.#token?.scope, ch?.scope)
      : opts.scope ?? ch?.scope ?? d.scopes?.join(" ");
    if (
      scope !== undefined && !opts.clientCredentials &&
      d.server.scopes.includes("offline_access")
    ) scope = union(scope, "offline_access");
    const token = opts.clientCredentials
      ? await this.#grant(
        d.where,
        this.#client(d.server, opts.client!),
        { grant_type: "client_credentials", ...(scope ? { scope } : {}) },
        scope,
      )
      : await this.#authorizationCode(d, scope);
    this.#keep(token);
    return null;
  }

  async #discover(url: string, ch: BearerChallenge | null): Promise<Discovery> {
    if (this.#found) return this.#found;
    const prm = await resourceMetadata(url, ch?.resourceMetadata);
    let server: ServerMetadata | null = null;
    for (const issuer of prm?.servers ?? []) {
      server = await serverMetadata(issuer, false);
      if (server !== null) break;
    }
    if (prm !== null && server === null) {
      throw new Error(
        `no authorization server metadata found for ${prm.servers[0]}`,
      );
    }
    const u = new URL(url);
    if (server === null) {
      // A 2025-03-26 server: its origin is the authorization server, with
      // the default endpoints when it publishes no metadata.
      const o = new URL(safeUrl(u.origin, "authorization server")).origin;
      server = await serverMetadata(o, true) ?? {
        issuer: o,
        authorizationEndpoint: `${o}/authorize`,
        tokenEndpoint: `${o}/token`,
        registrationEndpoint: `${o}/register`,
        pkce: true,
        authMethods: [],
        scopes: [],
        cimd: false,
      };
    }
    this.#found = {
      scopes: prm?.scopes,
      server,
      where: {
        resource: prm?.resource ?? u.origin + u.pathname.replace(/\/+$/, ""),
        issuer: server.issuer,
        tokenEndpoint: server.tokenEndpoint,
      },
    };
    return this.#found;
  }

  /** `c` with the token endpoint authentication it will use. */
  #client(s: ServerMetadata, c: OAuthClient, registered?: string): Client {
    const methods = s.authMethods;
    const method = c.key
      ? "private_key_jwt"
      : c.secret === undefined
      ? "none"
      : registered === "client_secret_post" ||
          registered === "client_secret_basic"
      ? registered
      : !methods.includes("client_secret_basic") &&
          methods.includes("client_secret_post")
      ? "client_secret_post"
      : "client_secret_basic";
    return { ...c, method };
  }

  /** A client for the code flow: pre-registered, a metadata document, or registered now. */
  async #register(s: ServerMetadata, redirectUri: string): Promise<Client> {
    const opts = this.#opts;
    if (opts.client) return this.#client(s, opts.client);
    if (opts.clientMetadataUrl && s.cimd) {
      return { id: opts.clientMetadataUrl, method: "none" };
    }
    if (s.registrationEndpoint === undefined) {
      throw new Error(
        `the authorization server ${s.issuer} offers no dynamic client registration${
          s.cimd
            ? " (it takes client ID metadata documents: --client-metadata-url)"
            : ""
        }: pass --client-id of a client registered there`,
      );
    }
    const { status, json } = await fetchJson(s.registrationEndpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({
        client_name: "verity",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    });
    const r = isPlainObject(json) ? json : {};
    if ((status !== 200 && status !== 201) || !tokenText(r.client_id)) {
      throw new Error(
        `client registration at ${s.registrationEndpoint} failed (${
          errorOf(`HTTP ${status}`, json)
        })`,
      );
    }
    return this.#client(
      s,
      {
        id: r.client_id,
        ...(tokenText(r.client_secret) ? { secret: r.client_secret } : {}),
      },
      typeof r.token_endpoint_auth_method === "string"
        ? r.token_endpoint_auth_method
        : undefined,
    );
  }

  async #authorizationCode(d: Discovery, scope?: string): Promise<StoredToken> {
    const s = d.server;
    if (s.authorizationEndpoint === undefined || !s.pkce) {
      throw new Error(
        `the authorization server ${s.issuer} ${
          s.authorizationEndpoint === undefined
            ? "has no authorization_endpoint"
            : "does not offer PKCE with S256 (code_challenge_methods_supported)"
        }: refusing to sign in`,
      );
    }
    const redirect = loopbackRedirect(this.#opts.signInTimeoutMs ?? 300_000);
    try {
      const client = await this.#register(s, redirect.uri);
      const verifier = randomText(32);
      const state = randomText(16);
      const u = new URL(s.authorizationEndpoint);
      const q = {
        response_type: "code",
        client_id: client.id,
        redirect_uri: redirect.uri,
        code_challenge: b64url(createHash("sha256").update(verifier).digest()),
        code_challenge_method: "S256",
        state,
        resource: d.where.resource,
        ...(scope ? { scope } : {}),
      };
      for (const [k, v] of Object.entries(q)) u.searchParams.set(k, v);
      const back = redirect.wait(state);
      this.#opts.signIn!(u.toString());
      const a = await back;
      const code = a.get("code");
      if (a.get("error") !== null || !code) {
        throw new Error(
          errorOf(
            "the authorization server did not sign in",
            Object.fromEntries(a),
          ),
        );
      }
      return await this.#grant(d.where, client, {
        grant_type: "authorization_code",
        code,
        redirect_uri: redirect.uri,
        code_verifier: verifier,
      }, scope);
    } finally {
      await redirect.close();
    }
  }

  /** A token request (RFC 6749 section 3.2), with `resource` and the client's authentication. */
  async #grant(
    where: Pick<StoredToken, "resource" | "issuer" | "tokenEndpoint">,
    client: Client,
    params: Record<string, string>,
    scope: string | undefined,
  ): Promise<StoredToken> {
    const body = new URLSearchParams({ ...params, resource: where.resource });
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    if (client.method === "client_secret_basic") {
      headers.authorization = `Basic ${
        btoa(
          `${encodeURIComponent(client.id)}:${
            encodeURIComponent(client.secret ?? "")
          }`,
        )
      }`;
    } else body.set("client_id", client.id);
    if (client.method === "client_secret_post") {
      body.set("client_secret", client.secret ?? "");
    }
    if (client.method === "private_key_jwt") {
      body.set(
        "client_assertion_type",
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      );
      body.set(
        "client_assertion",
        await clientAssertion(await client.key!(), client.id, where.issuer),
      );
    }
    const { status, json } = await fetchJson(
      safeUrl(where.tokenEndpoint, "token_endpoint"),
      { method: "POST", headers, body: body.toString() },
    );
    const t = isPlainObject(json) ? json : {};
    if (status !== 200 || !tokenText(t.access_token)) {
      throw new Error(
        `the token endpoint ${where.tokenEndpoint} gave no access token (${
          errorOf(`HTTP ${status}`, json)
        })`,
      );
    }
    if (
      typeof t.token_type !== "string" ||
      t.token_type.toLowerCase() !== "bearer"
    ) {
      throw new Error(
        `the token endpoint ${where.tokenEndpoint} gave a ${
          JSON.stringify(String(t.token_type).slice(0, 40))
        } token, not a Bearer token`,
      );
    }
    const granted = typeof t.scope === "string" && SCOPE.test(t.scope)
      ? t.scope
      : scope;
    return {
      ...where,
      clientId: client.id,
      ...(client.secret !== undefined &&
          client.secret !== this.#opts.client?.secret
        ? { clientSecret: client.secret }
        : {}),
      authMethod: client.method,
      accessToken: t.access_token,
      ...(tokenText(t.refresh_token) ? { refreshToken: t.refresh_token } : {}),
      ...(granted ? { scope: granted } : {}),
    };
  }

  /** Trade the refresh token for a new access token; false when refused. */
  async #refresh(): Promise<boolean> {
    const { refreshToken, ...t } = this.#token!;
    const mine = this.#opts.client;
    const secret = mine?.secret ?? t.clientSecret;
    const client: Client = {
      id: t.clientId,
      ...(secret !== undefined ? { secret } : {}),
      ...(mine?.key ? { key: mine.key } : {}),
      method: t.authMethod,
    };
    try {
      const next = await this.#grant(t, client, {
        grant_type: "refresh_token",
        refresh_token: refreshToken!,
      }, t.scope);
      this.#keep({ ...next, refreshToken: next.refreshToken ?? refreshToken! });
      return true;
    } catch {
      this.#token = t;
      return false;
    }
  }

  #keep(t: StoredToken): void {
    this.#token = t;
    if (!this.#opts.clientCredentials) this.#opts.store?.put(t);
  }
}
