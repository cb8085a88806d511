/**
 * A server that leaves more entries in its state directory than an audit
 * with no definition will learn from: `flood` (declared not read-only)
 * writes 20,001 empty files under `~/flood/`. Learning must stop with one
 * line (exit 2), not walk without end or write a partial target.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "zero-flood", version: "1.0.0" });
server.registerTool("flood", {
  description: "Write many files.",
  annotations: { readOnlyHint: false, destructiveHint: false },
}, () => {
  const dir = `${Deno.env.get("HOME")}/flood`;
  Deno.mkdirSync(dir, { recursive: true });
  for (let i = 0; i <= 20_000; i++) {
    Deno.writeFileSync(`${dir}/${i}`, new Uint8Array());
  }
  return { content: [{ type: "text", text: "flooded" }] };
});
await server.connect(new StdioServerTransport());
