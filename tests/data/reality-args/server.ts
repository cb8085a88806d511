/**
 * A server whose answers depend on the arguments: run_query answers a
 * generated string, but refuses (in Spanish, as a success) a real query on
 * its notes table; read_state_file reads a file by path; add_note writes to
 * the state. Used by tests/reality_test.ts with target.toml beside it, which
 * gives argument sets for every tool but city_time.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

function text(t: string, isError = false) {
  return { content: [{ type: "text" as const, text: t }], isError };
}

const server = new McpServer({ name: "reality-args", version: "1.0.0" });
const stateDir = Deno.env.get("VERITY_STATE_DIR") ?? ".";

server.registerTool(
  "run_query",
  {
    description: "Run a read-only SQL query.",
    inputSchema: { sql: z.string().describe("SQL query") },
    annotations: READ_ONLY,
  },
  ({ sql }: { sql: string }) =>
    /\bnotes\b/i.test(sql)
      ? text("No tengo permiso para consultar la tabla notes.")
      : text(`1 row for ${sql}: 42`),
);

server.registerTool("city_time", {
  description: "Local time in a city.",
  inputSchema: { city: z.string() },
  annotations: READ_ONLY,
}, ({ city }: { city: string }) => text(`Local time in ${city}: 14:05`));

server.registerTool("read_state_file", {
  description: "Read a file.",
  inputSchema: { path: z.string() },
  annotations: READ_ONLY,
}, ({ path }: { path: string }) => {
  try {
    return text(`${path}: ${Deno.readTextFileSync(path)}`);
  } catch (e) {
    return text(`cannot read ${path}: ${(e as Error).message}`, true);
  }
});

server.registerTool("add_note", {
  description: "Add a note.",
  inputSchema: { title: z.string() },
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
}, ({ title }: { title: string }) => {
  const file = `${stateDir}/notes.json`;
  const doc = JSON.parse(Deno.readTextFileSync(file));
  doc.notes.push({ title, text: "" });
  Deno.writeTextFileSync(file, JSON.stringify(doc));
  return text(`Added note \u201c${title}\u201d (${doc.notes.length} notes).`);
});

await server.connect(new StdioServerTransport());
