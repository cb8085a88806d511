/**
 * A tiny MCP server over stdio, written by hand (no SDK), for capture tests:
 * two `tools/list` pages, a schema holding `1.0` and non-ASCII text.
 * `MINI_VARIANT=b` serves a drifted declaration.
 *
 * @module
 */
const variant = Deno.env.get("MINI_VARIANT") ?? "a";
const page1 =
  `{"tools":[{"name":"search","description":"Search notes — café","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"weight":{"type":"number","maximum":1.0}},"required":["q"]},"annotations":{"readOnlyHint":true}}],"nextCursor":"p2"}`;
const page2a =
  `{"tools":[{"name":"add","title":"Add","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"annotations":{"readOnlyHint":false,"destructiveHint":false}},{"name":"purge","inputSchema":{"type":"object"}}]}`;
const page2b =
  `{"tools":[{"name":"add","title":"Add a note","inputSchema":{"type":"object","properties":{"text":{"type":"string"},"tags":{"type":"array"}}},"annotations":{"readOnlyHint":false,"destructiveHint":true}},{"name":"export","inputSchema":{"type":"object"}}]}`;

const enc = new TextEncoder();
const dec = new TextDecoder();
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) !== -1) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.id === undefined) continue;
    let result: string;
    if (msg.method === "initialize") {
      result =
        `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"mini-notes","version":"${
          variant === "a" ? "1.0.0" : "1.1.0"
        }"}}`;
    } else if (msg.method === "tools/list") {
      result = msg.params?.cursor === "p2"
        ? (variant === "a" ? page2a : page2b)
        : page1;
    } else {
      await Deno.stdout.write(
        enc.encode(
          `{"jsonrpc":"2.0","id":${
            JSON.stringify(msg.id)
          },"error":{"code":-32601,"message":"no"}}\n`,
        ),
      );
      continue;
    }
    await Deno.stdout.write(
      enc.encode(
        `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}\n`,
      ),
    );
  }
}
