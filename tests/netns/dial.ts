/**
 * A probe MCP server for tests/port_relay_test.ts (raw JSON-RPC, no npm
 * imports). Its one tool, `dial`, tries during the call to open a TCP
 * connection to each `{ host, port }` it is given and reports, per target,
 * the first line the other end sent (`ok: <line>`) or the error. It never
 * fails the call.
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

const enc = new TextEncoder();
function send(msg: unknown): void {
  Deno.stdout.writeSync(enc.encode(JSON.stringify(msg) + "\n"));
}

const TOOL = {
  name: "dial",
  description:
    "Opens a TCP connection to each target and reports what it read.",
  inputSchema: { type: "object", properties: {} },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

let buf = "";
const dec = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.id === undefined) continue;
    if (msg.method === "initialize") {
      send({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "dial", version: "1.0.0" },
        },
      });
    } else if (msg.method === "tools/list") {
      send({ jsonrpc: "2.0", id: msg.id, result: { tools: [TOOL] } });
    } else if (msg.method === "tools/call") {
      const targets = (msg.params.arguments as { targets: Target[] }).targets;
      const report: string[] = [];
      for (const t of targets) report.push(await dial(t));
      send({
        jsonrpc: "2.0",
        id: msg.id,
        result: { content: [{ type: "text", text: JSON.stringify(report) }] },
      });
    } else {
      send({
        jsonrpc: "2.0",
        id: msg.id,
        error: { code: -32601, message: "Method not found" },
      });
    }
  }
}
