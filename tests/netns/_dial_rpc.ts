/**
 * The JSON-RPC side of the dial probes (tests/netns/dial.ts over stdio,
 * dial_http.ts over Streamable HTTP): one tool, `dial`, that tries during
 * the call to open a TCP connection to each `{ host, port }` it is given and
 * reports, per target, the first line the other end sent (`ok: <line>`) or
 * the error. It never fails the call.
 */

interface Target {
  host: string;
  port: number;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, rej) => setTimeout(() => rej(new Error("timeout")), ms)),
  ]);
}

async function dial(t: Target): Promise<string> {
  try {
    const c = await withTimeout(
      Deno.connect({ hostname: t.host, port: t.port }),
      3000,
    );
    try {
      const buf = new Uint8Array(256);
      const n = await withTimeout(c.read(buf), 3000);
      const text = n === null
        ? ""
        : new TextDecoder().decode(buf.subarray(0, n));
      return `ok: ${text.split("\n")[0]}`;
    } finally {
      c.close();
    }
  } catch (e) {
    return `error: ${
      e instanceof Error ? `${e.name}: ${e.message}` : String(e)
    }`
      .slice(0, 200);
  }
}

const TOOL = {
  name: "dial",
  description:
    "Opens a TCP connection to each target and reports what it read.",
  inputSchema: { type: "object", properties: {} },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

/** The answer to one JSON-RPC message, or null for a notification. */
export async function answer(
  msg: { id?: unknown; method?: string; params?: Record<string, unknown> },
): Promise<unknown | null> {
  if (msg.id === undefined) return null;
  if (msg.method === "initialize") {
    return {
      jsonrpc: "2.0",
      id: msg.id,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "dial", version: "1.0.0" },
      },
    };
  }
  if (msg.method === "tools/list") {
    return { jsonrpc: "2.0", id: msg.id, result: { tools: [TOOL] } };
  }
  if (msg.method === "tools/call") {
    const targets = (msg.params?.arguments as { targets: Target[] }).targets;
    const report: string[] = [];
    for (const t of targets) report.push(await dial(t));
    return {
      jsonrpc: "2.0",
      id: msg.id,
      result: { content: [{ type: "text", text: JSON.stringify(report) }] },
    };
  }
  return {
    jsonrpc: "2.0",
    id: msg.id,
    error: { code: -32601, message: "Method not found" },
  };
}
