import assert from "node:assert/strict";
import { looksLikeRead, renderTargetTemplate } from "./init_template.ts";

const tool = (name: string, readOnly = "ABSENT") => ({
  name,
  description: null,
  hints: { readOnlyHint: readOnly },
  inputSchema: { type: "object", properties: {} },
});

Deno.test("init suggests a probe (commented out) for a tool that does not look like a read, naming the reads", () => {
  assert.equal(looksLikeRead(tool("listItems")), true);
  assert.equal(looksLikeRead(tool("peek", "TRUE")), true);
  assert.equal(looksLikeRead(tool("getaway")), false);
  const text = renderTargetTemplate({
    name: "counter",
    command: ["{deno}", "run", "server.ts"],
    env: {},
    read: [],
    source: null,
    notes: [],
    generatedBy: "verity test",
    origin: "deno run server.ts",
    tools: [tool("increment"), tool("get_count"), tool("peek", "TRUE")],
  });
  const blocks = text.split("# ---- ");
  const inc = blocks.find((b) => b.startsWith("increment"))!;
  assert.match(inc, /Reads listed: get_count, peek\./);
  assert.match(inc, /^# probe = \{ name = "get_count", arguments = \{\} \}$/m);
  // A read gets no suggestion, and no probe is ever written live.
  const get = blocks.find((b) => b.startsWith("get_count"))!;
  assert.doesNotMatch(get, /probe/);
  assert.doesNotMatch(text, /^probe/m);
});
