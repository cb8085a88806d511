/**
 * Lists read_graph (declared read-only), search_nodes and open_nodes (no
 * annotations); records every call to stderr. Used by the unlisted-tool
 * definition beside it and by the reality low-coverage test (1/3 checked).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "unlisted-tool", version: "1.0.0" });
for (const name of ["read_graph", "search_nodes", "open_nodes"]) {
  server.registerTool(name, {
    description: `${name} (test server)`,
    inputSchema: { query: z.string().optional() },
    ...(name === "read_graph"
      ? { annotations: { readOnlyHint: true, openWorldHint: false } }
      : {}),
  }, () => {
    console.error(`CALLED ${name}`);
    return { content: [{ type: "text" as const, text: "graph: 0 nodes" }] };
  });
}
await server.connect(new StdioServerTransport());
