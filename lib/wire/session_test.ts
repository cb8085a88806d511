import assert from "node:assert/strict";
import type { McpClient, RpcOutcome } from "./client.ts";
import type { Frame } from "./frames.ts";
import { listTools } from "./list_tools.ts";
import { openSession } from "./session.ts";

/** An in-memory server whose `tools/list` has `pages` pages (Infinity: never ends). */
function pagingClient(pages: number): McpClient {
  const frames: Frame[] = [];
  let t = 0;
  const answer = (id: number, result: unknown): RpcOutcome => {
    const text = JSON.stringify({ jsonrpc: "2.0", id, result });
    frames.push({ dir: "in", t: t++, text, bytes: text.length });
    return { status: "ok", result, frameIndex: frames.length - 1, ms: 0 };
  };
  let id = 0;
  return {
    frames,
    problems: [],
    failure: null,
    now: () => t,
    stderr: () => ({ text: "", dropped: 0 }),
    notify: () => {},
    abort: () => {},
    request: (method, params) => {
      id++;
      if (method === "initialize") {
        return Promise.resolve(
          answer(id, { serverInfo: { name: "pages", version: "1" } }),
        );
      }
      const cursor = (params as { cursor?: string }).cursor;
      const page = cursor === undefined ? 0 : Number(cursor);
      const tools = [{ name: `t${page}`, inputSchema: { type: "object" } }];
      return Promise.resolve(
        answer(
          id,
          page + 1 < pages
            ? { tools, nextCursor: String(page + 1) }
            : { tools },
        ),
      );
    },
    kill: () => {},
    close: () =>
      Promise.resolve({ code: 0, signal: null, stoppedBy: "self" as const }),
  };
}

Deno.test("a listing follows every page to the last and lists each page's tools once", async () => {
  const s = await openSession(pagingClient(5));
  assert.equal(s.failure, null);
  assert.equal(s.pages.length, 5);
  const listed = listTools(s);
  assert.deepEqual(listed.contracts.map((c) => c.name), [
    "t0",
    "t1",
    "t2",
    "t3",
    "t4",
  ]);
});

Deno.test("a listing stops after 1000 pages by default, naming the cap", async () => {
  const s = await openSession(pagingClient(Infinity), { timeoutMs: 60_000 });
  assert.equal(s.pages.length, 1000);
  assert.equal(s.failure?.reason, "closed");
  assert.equal(s.failure?.message, "tools/list returned more than 1000 pages");
  const exactly = await openSession(pagingClient(1000), { timeoutMs: 60_000 });
  assert.equal(exactly.failure, null);
  assert.equal(exactly.pages.length, 1000);
});
