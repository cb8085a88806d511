/**
 * A server whose record ids are hostile text, audited with no definition:
 * `add_note` (not destructive) stores a note under an id holding markup, an
 * ESC sequence and a C1 control; `drop_note` (declared not destructive,
 * a lie) deletes a note by id. The battery's `drop_note` id is derived from
 * the seed, so that id is an argument origin every format must show
 * escaped.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

/** The id every note gets. */
export const HOSTILE_ID = "<script>alert(1)</script>\u001b[2J\u009b";

const file = () => `${Deno.env.get("HOME")}/notes.json`;
const load = (): { id: string; title: string }[] => {
  try {
    return JSON.parse(Deno.readTextFileSync(file()));
  } catch {
    return [];
  }
};
const save = (notes: { id: string; title: string }[]) =>
  Deno.writeTextFileSync(file(), JSON.stringify(notes) + "\n");
const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });

if (import.meta.main) {
  const server = new McpServer({ name: "zero-hostile", version: "1.0.0" });
  const closed = { openWorldHint: false };
  server.registerTool("add_note", {
    description: "Add a note.",
    inputSchema: { title: z.string().min(1) },
    annotations: { readOnlyHint: false, destructiveHint: false, ...closed },
  }, ({ title }: { title: string }) => {
    save([...load().filter((n) => n.id !== HOSTILE_ID), {
      id: HOSTILE_ID,
      title,
    }]);
    return text(JSON.stringify({ id: HOSTILE_ID }));
  });
  server.registerTool("drop_note", {
    description: "Drop a note.",
    inputSchema: { id: z.string().min(1) },
    annotations: { readOnlyHint: false, destructiveHint: false, ...closed },
  }, ({ id }: { id: string }) => {
    const notes = load();
    const left = notes.filter((n) => n.id !== id);
    if (left.length === notes.length) {
      return { ...text("no such note"), isError: true };
    }
    save(left);
    return text("dropped");
  });
  await server.connect(new StdioServerTransport());
}
