/**
 * A probe MCP server over stdio for tests/port_relay_test.ts (raw JSON-RPC,
 * no npm imports; the tool is in _dial_rpc.ts).
 */
import { answer } from "./_dial_rpc.ts";

const enc = new TextEncoder();
let buf = "";
const dec = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const out = await answer(JSON.parse(line));
    if (out !== null) {
      Deno.stdout.writeSync(enc.encode(JSON.stringify(out) + "\n"));
    }
  }
}
