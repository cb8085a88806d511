/**
 * OAuth end to end against an authorization server and MCP servers written
 * for this test (in this process, on loopback ports): the authorization
 * code flow with PKCE through `verity login` (the "browser" is curl
 * following the redirect to verity's loopback listener), refresh, client
 * credentials, and wrong audiences refused. The servers are strict where
 * real ones are: PKCE S256 checked, the redirect URI and the `resource`
 * checked at every step, tokens bound to one resource and expiring.
 * Hostile metadata, challenges and token answers are refused with one line.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { runVerity } from "./_verity.ts";
import { OAuth, parseBearerChallenge } from "../lib/wire/oauth.ts";

const BROWSER = "curl -fsSL -o /dev/null";

interface Grant {
  grant: string;
  resource: string | null;
  basic: boolean;
}

/** A tiny strict authorization server. */
function authorizationServer() {
  const clients = new Map<string, string>(); // client_id -> redirect_uri
  const codes = new Map<
    string,
    { challenge: string; resource: string; redirect: string; scope: string }
  >();
  const tokens = new Map<string, { resource: string; expires: number }>();
  const refresh = new Map<string, string>(); // refresh token -> resource
  const log = {
    authorize: [] as URLSearchParams[],
    grants: [] as Grant[],
  };
  let ttlMs = 60_000;
  let n = 0;
  const issue = (resource: string, body: Record<string, unknown>) => {
    const access = `at-${++n}-${crypto.randomUUID()}`;
    const rt = `rt-${n}-${crypto.randomUUID()}`;
    tokens.set(access, { resource, expires: Date.now() + ttlMs });
    refresh.set(rt, resource);
    return Response.json({
      access_token: access,
      token_type: "Bearer",
      expires_in: Math.ceil(ttlMs / 1000),
      refresh_token: rt,
      ...body,
    });
  };
  const refuse = (error: string) => Response.json({ error }, { status: 400 });
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const u = new URL(req.url);
      const base = `http://127.0.0.1:${server.addr.port}`;
      if (u.pathname === "/.well-known/oauth-authorization-server") {
        return Response.json({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          code_challenge_methods_supported: ["S256"],
          grant_types_supported: [
            "authorization_code",
            "refresh_token",
            "client_credentials",
          ],
          token_endpoint_auth_methods_supported: [
            "none",
            "client_secret_basic",
          ],
        });
      }
      if (u.pathname === "/register" && req.method === "POST") {
        const body = await req.json();
        const id = `client-${clients.size + 1}`;
        clients.set(id, body.redirect_uris[0]);
        return Response.json({ client_id: id }, { status: 201 });
      }
      if (u.pathname === "/authorize") {
        const q = u.searchParams;
        log.authorize.push(q);
        const redirect = q.get("redirect_uri") ?? "";
        if (
          clients.get(q.get("client_id") ?? "") !== redirect ||
          q.get("code_challenge_method") !== "S256" || !q.get("resource")
        ) return new Response("bad authorization request", { status: 400 });
        const code = crypto.randomUUID();
        codes.set(code, {
          challenge: q.get("code_challenge")!,
          resource: q.get("resource")!,
          redirect,
          scope: q.get("scope") ?? "",
        });
        const back = new URL(redirect);
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        return Response.redirect(back, 302);
      }
      if (u.pathname === "/token" && req.method === "POST") {
        const f = new URLSearchParams(await req.text());
        const auth = req.headers.get("authorization");
        const resource = f.get("resource");
        log.grants.push({
          grant: f.get("grant_type") ?? "",
          resource,
          basic: auth?.startsWith("Basic ") ?? false,
        });
        if (f.get("grant_type") === "authorization_code") {
          const c = codes.get(f.get("code") ?? "");
          codes.delete(f.get("code") ?? "");
          const s256 = createHash("sha256").update(f.get("code_verifier") ?? "")
            .digest("base64url");
          if (
            !c || s256 !== c.challenge ||
            c.redirect !== f.get("redirect_uri") ||
            c.resource !== resource
          ) return refuse("invalid_grant");
          return issue(c.resource, { scope: c.scope || undefined });
        }
        if (f.get("grant_type") === "refresh_token") {
          const r = refresh.get(f.get("refresh_token") ?? "");
          refresh.delete(f.get("refresh_token") ?? "");
          if (!r || r !== resource) return refuse("invalid_grant");
          return issue(r, {});
        }
        if (f.get("grant_type") === "client_credentials") {
          if (auth !== `Basic ${btoa("m2m:m2m-secret-1234")}` || !resource) {
            return Response.json({ error: "invalid_client" }, { status: 401 });
          }
          return issue(resource, {});
        }
        return refuse("unsupported_grant_type");
      }
      return new Response("not found", { status: 404 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    log,
    tokens,
    set ttlMs(ms: number) {
      ttlMs = ms;
    },
    close: () => server.shutdown(),
  };
}

type AS = ReturnType<typeof authorizationServer>;

/**
 * An MCP server (JSON answers, no sessions) that takes only tokens issued
 * for its own URL; its resource metadata may name another resource.
 */
function mcpServer(as: AS, prmResource?: string) {
  const seen: (string | null)[] = [];
  const methods: string[] = [];
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const u = new URL(req.url);
      const self = `http://127.0.0.1:${server.addr.port}/mcp`;
      if (u.pathname === "/.well-known/oauth-protected-resource/mcp") {
        return Response.json({
          resource: prmResource ?? self,
          authorization_servers: [as.url],
          scopes_supported: ["tools:read"],
        });
      }
      if (u.pathname !== "/mcp") return new Response("no", { status: 404 });
      methods.push(req.method);
      const auth = req.headers.get("authorization");
      seen.push(auth);
      const t = as.tokens.get(auth?.replace(/^Bearer /, "") ?? "");
      if (!t || t.resource !== self || t.expires < Date.now()) {
        await req.body?.cancel();
        return new Response("sign in", {
          status: 401,
          headers: {
            "www-authenticate":
              `Bearer resource_metadata="http://127.0.0.1:${server.addr.port}/.well-known/oauth-protected-resource/mcp"${
                auth ? ', error="invalid_token"' : ""
              }`,
          },
        });
      }
      if (req.method !== "POST") return new Response(null, { status: 405 });
      const m = await req.json();
      if (m.id === undefined) return new Response(null, { status: 202 });
      const result = m.method === "initialize"
        ? {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "oauth-test", version: "1.0.0" },
        }
        : m.method === "tools/list"
        ? {
          tools: [{
            name: "whoami",
            inputSchema: { type: "object" },
            annotations: { readOnlyHint: true },
          }],
        }
        : { content: [{ type: "text", text: `you sent ${auth}` }] };
      return Response.json({ jsonrpc: "2.0", id: m.id, result });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    seen,
    methods,
    close: () => server.shutdown(),
  };
}

async function withServers(
  f: (as: AS, a: ReturnType<typeof mcpServer>, config: string) => Promise<void>,
) {
  const as = authorizationServer();
  const a = mcpServer(as);
  const config = Deno.makeTempDirSync({ prefix: "verity-oauth-" });
  try {
    await f(as, a, config);
  } finally {
    await a.close();
    await as.close();
    Deno.removeSync(config, { recursive: true });
  }
}

function stored(config: string): { accessToken: string; resource: string }[] {
  return JSON.parse(Deno.readTextFileSync(`${config}/verity/tokens.json`))
    .tokens;
}

Deno.test("oauth: verity login runs the code flow with PKCE and the resource; the token is kept 0600 and used by tools --url", async () => {
  await withServers(async (as, a, config) => {
    const env = { XDG_CONFIG_HOME: config, BROWSER };
    const login = await runVerity(["login", a.url], { env });
    assert.equal(login.code, 0, login.stderr);
    assert.match(login.stdout, /signed in to .*with a refresh token; kept in/);
    assert.match(
      login.stderr,
      /to sign in, open http:\/\/127\.0\.0\.1:\d+\/authorize\?/,
    );
    const [q] = as.log.authorize;
    assert.equal(q!.get("code_challenge_method"), "S256");
    assert.equal(q!.get("resource"), a.url);
    assert.equal(q!.get("scope"), "tools:read"); // the resource's scopes_supported
    assert.match(
      q!.get("redirect_uri")!,
      /^http:\/\/127\.0\.0\.1:\d+\/callback$/,
    );
    assert.deepEqual(as.log.grants, [
      { grant: "authorization_code", resource: a.url, basic: false },
    ]);
    const file = `${config}/verity/tokens.json`;
    assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(`${config}/verity`).mode! & 0o777, 0o700);
    const [t] = stored(config);
    assert.equal(t!.resource, a.url);
    assert.ok(!login.stdout.includes(t!.accessToken));
    assert.ok(!login.stderr.includes(t!.accessToken));

    // The kept token is used as is: no browser, no new sign-in.
    const tools = await runVerity(["tools", "--url", a.url], {
      env: { XDG_CONFIG_HOME: config, BROWSER: "false" },
    });
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /whoami\s+TRUE/);
    assert.equal(as.log.authorize.length, 1);
    assert.ok(a.seen.at(-1) === `Bearer ${t!.accessToken}`);

    // capture and init --url reach it the same way.
    const manifest = `${config}/manifest.json`;
    const capture = await runVerity(
      ["capture", "--url", a.url, "--out", manifest],
      { env: { XDG_CONFIG_HOME: config } },
    );
    assert.equal(capture.code, 0, capture.stderr);
    assert.match(Deno.readTextFileSync(manifest), /"whoami"/);
    const init = await runVerity(["init", `${config}/t`, "--url", a.url], {
      env: { XDG_CONFIG_HOME: config },
    });
    assert.equal(init.code, 0, init.stderr);
    assert.match(Deno.readTextFileSync(`${config}/t/target.toml`), /whoami/);
    assert.equal(as.log.authorize.length, 1);

    // In evidence the token is [redacted], even where the server echoes it.
    const out = `${config}/reality.json`;
    const r = await runVerity(["reality", "--url", a.url, "--out", out], {
      env: { XDG_CONFIG_HOME: config },
    });
    assert.equal(r.code, 0, r.stderr);
    const report = Deno.readTextFileSync(out);
    assert.ok(!report.includes(t!.accessToken), "token in the report");
    assert.match(report, /you sent Bearer \[redacted\]/);
  });
});

Deno.test("oauth: an expired token is refreshed (with the resource) and the store updated", async () => {
  await withServers(async (as, a, config) => {
    const env = { XDG_CONFIG_HOME: config, BROWSER };
    as.ttlMs = 1000;
    assert.equal((await runVerity(["login", a.url], { env })).code, 0);
    const [before] = stored(config);
    await new Promise((r) => setTimeout(r, 1100));
    const tools = await runVerity(["tools", "--url", a.url], {
      env: { XDG_CONFIG_HOME: config, BROWSER: "false" },
    });
    assert.equal(tools.code, 0, tools.stderr);
    assert.deepEqual(as.log.grants.map((g) => [g.grant, g.resource]), [
      ["authorization_code", a.url],
      ["refresh_token", a.url],
    ]);
    assert.equal(as.log.authorize.length, 1);
    const [after] = stored(config);
    assert.notEqual(after!.accessToken, before!.accessToken);
    assert.ok(a.seen.includes(`Bearer ${before!.accessToken}`));
    assert.equal(a.seen.at(-1), `Bearer ${after!.accessToken}`);
  });
});

Deno.test("oauth: client credentials with --client-id and a secret from the environment; nothing stored", async () => {
  await withServers(async (as, a, config) => {
    const r = await runVerity([
      "tools",
      "--url",
      a.url,
      "--client-credentials",
      "--client-id",
      "m2m",
      "--client-secret-env",
      "M2M_SECRET",
    ], { env: { XDG_CONFIG_HOME: config, M2M_SECRET: "m2m-secret-1234" } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(as.log.grants, [
      { grant: "client_credentials", resource: a.url, basic: true },
    ]);
    assert.equal(as.log.authorize.length, 0);
    assert.ok(!r.stderr.includes("m2m-secret-1234"));
    assert.throws(() => Deno.statSync(`${config}/verity/tokens.json`));
  });
});

Deno.test("oauth: wrong audiences are refused: A's token never goes to B, and metadata naming another resource stops before sign-in", async () => {
  await withServers(async (as, a, config) => {
    const env = { XDG_CONFIG_HOME: config, BROWSER };
    assert.equal((await runVerity(["login", a.url], { env })).code, 0);
    const [t] = stored(config);
    const b = mcpServer(as);
    const c = mcpServer(as, a.url); // claims to be A
    try {
      const toB = await runVerity(["tools", "--url", b.url], { env });
      assert.equal(toB.code, 2);
      assert.ok(b.seen.length > 0 && b.seen.every((h) => h === null));
      // One line: what the server asked for and the command that would do it.
      assert.equal(toB.stderr.trim().split("\n").length, 1, toB.stderr);
      assert.match(
        toB.stderr,
        new RegExp(
          `asks for OAuth sign-in \\(HTTP 401.*\\): run verity login ${b.url}$`,
          "m",
        ),
      );
      assert.ok(!b.methods.includes("GET"), "no legacy-transport retry");

      const authorizations = as.log.authorize.length;
      const toC = await runVerity(["tools", "--login", "--url", c.url], {
        env,
      });
      assert.equal(toC.code, 2);
      assert.match(
        toC.stderr,
        /is for "http:\/\/127\.0\.0\.1:\d+\/mcp", not .*refusing to sign in for another resource/,
      );
      assert.equal(as.log.authorize.length, authorizations);
      assert.ok(c.seen.every((h) => h === null));
      assert.ok(!toC.stderr.includes(t!.accessToken));
    } finally {
      await b.close();
      await c.close();
    }
  });
});

Deno.test("oauth: a token from --token-env that the server refuses is one line naming the variable", async () => {
  await withServers(async (_as, a, config) => {
    const r = await runVerity(["tools", "--url", a.url, "--token-env", "TOK"], {
      env: { XDG_CONFIG_HOME: config, TOK: "not-a-real-token-123" },
    });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /the server refused the token in TOK \(HTTP 401, invalid_token\)/,
    );
    assert.ok(!r.stderr.includes("not-a-real-token-123"));
    assert.deepEqual(a.seen, ["Bearer not-a-real-token-123"]);
  });
});

Deno.test("oauth: WWW-Authenticate parsing takes the Bearer challenge and drops what is malformed", () => {
  assert.deepEqual(
    parseBearerChallenge(
      'Basic realm="r", Bearer realm="a\\"b", scope="x:read x:write", resource_metadata="https://r.example/.well-known/oauth-protected-resource"',
    ),
    {
      scope: "x:read x:write",
      resourceMetadata:
        "https://r.example/.well-known/oauth-protected-resource",
    },
  );
  assert.equal(parseBearerChallenge('Basic realm="x"'), null);
  assert.equal(parseBearerChallenge(null), null);
  assert.deepEqual(parseBearerChallenge('Bearer scope="a\u0001b", error=x'), {
    error: "x",
  });
  const long = parseBearerChallenge(
    `Bearer error_description="${"d".repeat(20_000)}"`,
  );
  assert.equal(long?.errorDescription, undefined); // cut at 8 KiB: unterminated
});

/** An OAuth client answering one 401 from a server whose documents are `docs`. */
async function answer401(
  docs: Record<string, (base: string, req: Request) => Response>,
): Promise<string | null> {
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const base = `http://127.0.0.1:${server.addr.port}`;
      return docs[new URL(req.url).pathname]?.(base, req) ??
        new Response("no", { status: 404 });
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  try {
    const auth = new OAuth(url, {
      signIn: (u) => void fetch(u).then((r) => r.body?.cancel()),
      signInTimeoutMs: 5000,
    });
    return await auth.challenge({
      url,
      status: 401,
      wwwAuthenticate: "Bearer",
      sent: null,
    });
  } finally {
    await server.shutdown();
  }
}

const prm = (base: string, extra: Record<string, unknown> = {}) =>
  Response.json({
    resource: `${base}/mcp`,
    authorization_servers: [base],
    ...extra,
  });
const asMeta = (base: string, extra: Record<string, unknown> = {}) =>
  Response.json({
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    code_challenge_methods_supported: ["S256"],
    ...extra,
  });

Deno.test("oauth: hostile metadata and token answers are refused with one line", async () => {
  const PRM = "/.well-known/oauth-protected-resource/mcp";
  const AS = "/.well-known/oauth-authorization-server";
  const cases: [
    string,
    Record<string, (b: string, req: Request) => Response>,
    RegExp,
  ][] = [
    [
      "an authorization server on plain http elsewhere",
      {
        [PRM]: (b) => prm(b, { authorization_servers: ["http://as.example"] }),
      },
      /"http:\/\/as\.example" is neither https nor http on a loopback address/,
    ],
    [
      "metadata larger than 64 KiB",
      { [PRM]: (b) => prm(b, { pad: "x".repeat(70_000) }) },
      /answered more than 65536 bytes/,
    ],
    [
      "an issuer that is not the one asked for",
      {
        [PRM]: (b) => prm(b),
        [AS]: (b) => asMeta(b, { issuer: "https://evil.example" }),
      },
      /names issuer "https:\/\/evil\.example", not http:\/\/127/,
    ],
    [
      "no PKCE",
      {
        [PRM]: (b) => prm(b),
        [AS]: (b) => asMeta(b, { code_challenge_methods_supported: ["plain"] }),
      },
      /does not offer PKCE with S256.*refusing to sign in/,
    ],
    [
      "a token endpoint elsewhere on plain http",
      {
        [PRM]: (b) => prm(b),
        [AS]: (b) => asMeta(b, { token_endpoint: "http://t.example/token" }),
      },
      /token_endpoint "http:\/\/t\.example" is neither https nor http on a loopback/,
    ],
    [
      "a token that is not a Bearer token",
      {
        [PRM]: (b) => prm(b),
        [AS]: (b) => asMeta(b),
        "/register": () => Response.json({ client_id: "c1" }, { status: 201 }),
        "/authorize": (_b, req) => {
          const q = new URL(req.url).searchParams;
          const back = new URL(q.get("redirect_uri")!);
          back.searchParams.set("code", "c1");
          back.searchParams.set("state", q.get("state")!);
          return Response.redirect(back, 302);
        },
        "/token": () => Response.json({ access_token: "t", token_type: "mac" }),
      },
      /gave a "mac" token, not a Bearer token/,
    ],
  ];
  for (const [what, docs, expected] of cases) {
    const line = await answer401(docs);
    assert.match(line ?? "", expected, what);
    assert.ok(!line!.includes("\n"), what);
  }
});

Deno.test("oauth: a 403 signs in again only for scopes the token lacks", async () => {
  const url = "http://127.0.0.1:1/mcp";
  const auth = new OAuth(url, { signIn: () => assert.fail("no sign-in") });
  const refused = (www: string) =>
    auth.challenge({ url, status: 403, wwwAuthenticate: www, sent: null });
  assert.match(
    (await refused('Bearer error="insufficient_scope"'))!,
    /insufficient_scope.*naming no scope the token lacks/,
  );
  assert.match(
    (await refused('Bearer error="access_denied"'))!,
    /^the server refused the request \(HTTP 403, access_denied\)$/,
  );
});
