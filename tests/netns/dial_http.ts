/**
 * A probe MCP server over Streamable HTTP for tests/port_relay_test.ts:
 * `dial_http.ts --port N` answers each POSTed JSON-RPC message with JSON
 * (no sessions, no stream; GET is 405). The tool is in _dial_rpc.ts.
 */
import { answer } from "./_dial_rpc.ts";

const i = Deno.args.indexOf("--port");
const port = Number(Deno.args[i + 1]);
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (req) => {
  if (req.method !== "POST") return new Response(null, { status: 405 });
  const out = await answer(await req.json());
  if (out === null) return new Response(null, { status: 202 });
  return Response.json(out);
});
