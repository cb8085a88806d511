/**
 * Hostile HTTP servers get the stdio guarantees: a stream that never ends, a
 * huge event, a wrong content type, a changing session id, a 5xx storm, a
 * slow drip and an expired session each end the session, bounded in time
 * and bytes, with a named reason; the legacy HTTP+SSE transport is found by
 * fallback (its endpoint on the same origin only); a secret header never
 * reaches the evidence.
 */
import assert from "node:assert/strict";
import { HttpClient } from "../lib/wire/http_client.ts";
import { openSession } from "../lib/wire/session.ts";

const enc = new TextEncoder();
const SECRET = "sk-live-0123456789abcdef";

type Handler = (req: Request, body: Record<string, unknown> | null) =>
  | Response
  | Promise<Response>;

async function withServer(
  handler: Handler,
  f: (url: string) => Promise<void>,
): Promise<void> {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    async (req) => {
      let body: Record<string, unknown> | null = null;
      if (req.method === "POST") {
        try {
          body = await req.json();
        } catch {
          body = null;
        }
      }
      return await handler(req, body);
    },
  );
  try {
    await f(`http://127.0.0.1:${server.addr.port}/mcp`);
  } finally {
    ac.abort();
    await server.finished;
  }
}

function json(value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    headers: { "content-type": "application/json", ...headers },
  });
}

/** An honest answer to initialize / tools/list / notifications. */
function honest(
  body: Record<string, unknown> | null,
  headers: Record<string, string> = {},
): Response {
  if (body?.id === undefined) return new Response(null, { status: 202 });
  if (body.method === "initialize") {
    return json({
      jsonrpc: "2.0",
      id: body.id,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "h", version: "1" },
      },
    }, headers);
  }
  return json({ jsonrpc: "2.0", id: body.id, result: { tools: [] } }, headers);
}

function sseStream(
  produce: (push: (s: string) => void, signal: AbortSignal) => Promise<void>,
): Response {
  const ac = new AbortController();
  const stream = new ReadableStream<Uint8Array>({
    async start(c) {
      try {
        await produce((s) => c.enqueue(enc.encode(s)), ac.signal);
        c.close();
      } catch {
        // client went away
      }
    },
    cancel() {
      ac.abort();
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream" },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function open(url: string, opts = {}) {
  const client = new HttpClient(url, {
    headers: { authorization: `Bearer ${SECRET}` },
    getStream: false,
    ...opts,
  });
  const t0 = performance.now();
  const s = await openSession(client, { timeoutMs: 1500 });
  await client.close(200);
  const ms = performance.now() - t0;
  const evidence = JSON.stringify({
    frames: client.frames,
    exchanges: client.exchanges,
    problems: client.problems,
    failure: s.failure,
  });
  assert.ok(!evidence.includes(SECRET), "the secret reached the evidence");
  return { s, client, ms };
}

Deno.test("hostile http: an SSE stream that never ends is ended by the deadline", async () => {
  await withServer((_req, body) => {
    if (body?.method !== "tools/list") return honest(body);
    return sseStream(async (push, signal) => {
      while (!signal.aborted) {
        push(": still here\n\n");
        await sleep(20);
      }
    });
  }, async (url) => {
    const { s, ms } = await open(url);
    assert.match(String(s.failure?.reason), /^(timeout|deadline)$/);
    assert.match(s.failure!.message, /tools\/list/);
    assert.ok(ms < 5000, `took ${ms} ms`);
  });
});

Deno.test("hostile http: a huge SSE event is refused at the bound", async () => {
  await withServer((_req, body) => {
    if (body?.method !== "tools/list") return honest(body);
    return sseStream(async (push) => {
      const chunk = "x".repeat(64 * 1024);
      push("data: ");
      for (let i = 0; i < 16 * 16 + 1; i++) {
        push(chunk);
        await sleep(0);
      }
      push("\n\n");
    });
  }, async (url) => {
    const { s, client } = await open(url);
    assert.equal(s.failure?.reason, "frame_too_large");
    assert.ok(client.frames.some((f) => f.problem?.includes("exceeds")));
  });
});

Deno.test("hostile http: a wrong content type is named", async () => {
  await withServer((_req, body) => {
    if (body?.method !== "tools/list") return honest(body);
    return new Response("<html>hello</html>", {
      headers: { "content-type": "text/html" },
    });
  }, async (url) => {
    const { s } = await open(url);
    assert.match(s.failure!.message, /content type "text\/html"/);
  });
});

Deno.test("hostile http: a changing session id ends the session", async () => {
  let n = 0;
  await withServer(
    (_req, body) => honest(body, { "mcp-session-id": `s-${n++}` }),
    async (url) => {
      const { s } = await open(url);
      assert.match(s.failure!.message, /changed its session id/);
    },
  );
});

Deno.test("hostile http: a 5xx storm fails fast with the status named", async () => {
  let hits = 0;
  await withServer(() => {
    hits++;
    return new Response("overloaded", { status: 503 });
  }, async (url) => {
    const { s, ms } = await open(url);
    assert.match(s.failure!.message, /HTTP 503: overloaded/);
    assert.ok(hits <= 2, `${hits} requests: POSTs are never retried`);
    assert.ok(ms < 3000);
  });
});

Deno.test("hostile http: a slow drip is ended by the deadline", async () => {
  await withServer((_req, body) => {
    if (body?.method !== "tools/list") return honest(body);
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: body.id,
      result: { tools: [] },
    });
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        await sleep(200);
        c.enqueue(enc.encode(text.slice(0, 1)));
      },
    });
    return new Response(stream, {
      headers: { "content-type": "application/json" },
    });
  }, async (url) => {
    const { s, ms } = await open(url);
    assert.match(String(s.failure?.reason), /^(timeout|deadline)$/);
    assert.ok(ms < 5000);
  });
});

Deno.test("hostile http: 404 to the session id is an expired session", async () => {
  await withServer((req, body) => {
    if (body?.method === "initialize") {
      return honest(body, { "mcp-session-id": "abc" });
    }
    if (
      req.headers.get("mcp-session-id") === "abc" &&
      body?.method === "tools/list"
    ) {
      return new Response("gone", { status: 404 });
    }
    return honest(body);
  }, async (url) => {
    const { s } = await open(url);
    assert.match(s.failure!.message, /session expired/);
  });
});

Deno.test("http: the legacy HTTP+SSE transport is found by fallback", async () => {
  let push: ((s: string) => void) | null = null;
  await withServer((req, body) => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/mcp") {
      return sseStream(async (p, signal) => {
        push = p;
        p("event: endpoint\ndata: /messages?session=1\n\n");
        while (!signal.aborted) await sleep(20);
      });
    }
    if (req.method === "POST" && path === "/messages" && body) {
      if (body.id !== undefined) {
        const answer = honest(body);
        answer.text().then((t) => push?.(`event: message\ndata: ${t}\n\n`));
      }
      // A session id means nothing in this transport: ignored.
      const headers = { "mcp-session-id": crypto.randomUUID() };
      return new Response("Accepted", { status: 202, headers });
    }
    return new Response("method not allowed", { status: 405 });
  }, async (url) => {
    const { s, client } = await open(url, { getStream: true });
    assert.equal(s.failure, null);
    assert.equal(client.mode, "legacy");
    assert.equal(s.pages.length, 1);
    // No GET stream and no DELETE; no session headers on the legacy POSTs.
    assert.deepEqual(
      client.exchanges.map((e) => `${e.method} ${e.purpose} ${e.status}`),
      [
        "POST initialize 405",
        "GET legacy-stream 200",
        "POST initialize 202",
        "POST notifications/initialized 202",
        "POST tools/list 202",
      ],
    );
    assert.ok(
      client.exchanges.slice(2).every((e) =>
        e.url.endsWith("/messages?session=redacted") &&
        !e.requestHeaders.some(([k]) => k.startsWith("mcp-"))
      ),
    );
  });
});

Deno.test("http: a legacy endpoint on another origin is refused", async () => {
  await withServer((req) => {
    if (req.method === "GET") {
      const other = "event: endpoint\ndata: http://example.com/messages\n\n";
      return sseStream((p) => Promise.resolve(p(other)));
    }
    return new Response("method not allowed", { status: 405 });
  }, async (url) => {
    const { s, client } = await open(url);
    assert.match(
      s.failure!.message,
      /^initialize: HTTP 405: method not allowed; legacy HTTP\+SSE fallback failed: endpoint http:\/\/example\.com is on another origin$/,
    );
    assert.deepEqual(client.exchanges.map((e) => e.method), ["POST", "GET"]);
  });
});

Deno.test("http: every exchange is kept with status, headers, frames and stamps", async () => {
  await withServer(
    (_req, body) => honest(body, { "mcp-session-id": "sid-1" }),
    async (url) => {
      const { s, client } = await open(url);
      assert.equal(s.failure, null);
      const init = client.exchanges[0]!;
      assert.equal(init.purpose, "initialize");
      assert.equal(init.status, 200);
      assert.deepEqual(
        init.requestHeaders.find(([k]) => k === "authorization"),
        ["authorization", "[redacted]"],
      );
      assert.ok(init.tHeaders !== null && init.tHeaders >= init.t);
      const list = client.exchanges.find((e) => e.purpose === "tools/list")!;
      assert.ok(
        list.requestHeaders.some(([k, v]) =>
          k === "mcp-session-id" && v === "sid-1"
        ),
      );
      assert.ok(
        list.requestHeaders.some(([k, v]) =>
          k === "mcp-protocol-version" && v === "2025-11-25"
        ),
      );
      assert.equal(
        client.frames[list.frames[0]!]?.text,
        '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}',
      );
      const del = client.exchanges.at(-1)!;
      assert.equal(del.method, "DELETE");
    },
  );
});

Deno.test("http: a JSON-RPC error answer under an HTTP error status is the server's answer", async () => {
  await withServer((_req, body) => {
    if (body?.method !== "tools/list") return honest(body);
    return new Response(
      JSON.stringify({
        jsonrpc: "2.0",
        id: body.id,
        error: { code: -32602, message: "bad cursor" },
      }),
      { status: 400, headers: { "content-type": "application/json" } },
    );
  }, async (url) => {
    const { s, client } = await open(url);
    assert.match(s.failure!.message, /tools\/list failed: .*bad cursor/);
    const ex = client.exchanges.find((e) => e.purpose === "tools/list")!;
    assert.equal(ex.status, 400);
    assert.equal(ex.frames.length, 1);
  });
});
