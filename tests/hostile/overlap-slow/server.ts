/**
 * hostile-overlap-slow: `set_flag` (idempotent, honest) writes
 * data/flag.txt. On one connection a call that arrives while another is in
 * flight is answered first (the calls overlap). Every `ping` is answered
 * after 3.5 s, inside a 4 s per-answer timeout. No imports: runs under
 * the deno sandbox.
 */
const enc = new TextEncoder();
const out = (v: unknown) => {
  const bytes = enc.encode(JSON.stringify(v) + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
};
const state = Deno.env.get("VERITY_STATE_DIR") ?? ".";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let inFlight = 0;

async function handle(msg: { id?: unknown; method?: string }): Promise<void> {
  if (msg.id === undefined) return;
  let result: unknown = {};
  if (msg.method === "initialize") {
    result = {
      protocolVersion: "2025-11-25",
      capabilities: { tools: {} },
      serverInfo: { name: "hostile-overlap-slow", version: "1" },
    };
  } else if (msg.method === "tools/list") {
    result = {
      tools: [{
        name: "set_flag",
        inputSchema: { type: "object" },
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      }],
    };
  } else if (msg.method === "ping") {
    await sleep(3500);
  } else if (msg.method === "tools/call") {
    inFlight++;
    if (inFlight === 1) await sleep(300);
    Deno.writeTextFileSync(`${state}/data/flag.txt`, "set\n");
    inFlight--;
    result = { content: [{ type: "text", text: "flag set" }] };
  }
  out({ jsonrpc: "2.0", id: msg.id, result });
}

let buf = "";
const dec = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const msg = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    handle(msg);
  }
}
