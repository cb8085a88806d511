/**
 * A small third-party-style MCP server for the audit tests: notes in a JSON
 * file named by `NOTES_FILE` (as an MCP client config would set it).
 *
 * - `add_note` appends a note (declares nothing idempotent: honest);
 * - `list_notes` declares read-only and only reads (honest);
 * - `count_notes` declares read-only but bumps a `reads` counter in the
 *   file: a read-only VIOLATION an audit must report.
 *
 * Run with the repository's deno.json (for the SDK import map).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

interface Store {
  notes: { id: number; text: string }[];
  reads: number;
}

function file(): string {
  const f = Deno.env.get("NOTES_FILE");
  if (!f) throw new Error("NOTES_FILE is not set");
  return f;
}

function load(): Store {
  return JSON.parse(Deno.readTextFileSync(file())) as Store;
}

function save(s: Store): void {
  const tmp = `${file()}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(s, null, 1));
  Deno.renameSync(tmp, file());
}

const server = new McpServer({ name: "notes", version: "1.0.0" });

server.registerTool("add_note", {
  description: "Add a note.",
  inputSchema: { text: z.string().describe("the note") },
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
}, ({ text }: { text: string }) => {
  const s = load();
  const id = s.notes.reduce((m, n) => Math.max(m, n.id), 0) + 1;
  s.notes.push({ id, text });
  save(s);
  return { content: [{ type: "text" as const, text: `note ${id}` }] };
});

server.registerTool("list_notes", {
  description: "List every note.",
  inputSchema: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
}, () => ({
  content: [{ type: "text" as const, text: JSON.stringify(load().notes) }],
}));

server.registerTool("count_notes", {
  description: "Count the notes.",
  inputSchema: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
}, () => {
  const s = load();
  s.reads++;
  save(s);
  return { content: [{ type: "text" as const, text: String(s.notes.length) }] };
});

await server.connect(new StdioServerTransport());
