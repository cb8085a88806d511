/**
 * Pins how the official TypeScript SDK client reads the same bytes that
 * verity reads raw: the reason verity parses `tools/list` itself.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { parseToolPages } from "../lib/contracts/contracts.ts";

const SERVER =
  new URL("../fixtures/malformed-hints/server.ts", import.meta.url).pathname;

async function connect(): Promise<Client> {
  const client = new Client({ name: "sdk-pin", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: ["run", "--allow-env", "--allow-read", SERVER],
      stderr: "pipe",
    }),
  );
  return client;
}

Deno.test("SDK v1 listTools() rejects the whole page when one tool is malformed", async () => {
  const client = await connect();
  try {
    // Page 0 holds string_hint ("true") and number_hint (1): both malformed.
    await assert.rejects(() => client.listTools(), (e: unknown) => {
      assert.match(
        String((e as Error).message ?? e),
        /readOnlyHint|idempotentHint|boolean/i,
      );
      return true;
    });
    // The last page holds list_hint ([false]) beside valid_hints: the valid tool is lost too.
    await assert.rejects(() => client.listTools({ cursor: "page-2" }));
  } finally {
    await client.close();
  }
});

Deno.test("SDK v1 silently keeps the last duplicate key that verity reports", () => {
  const raw =
    '{"tools":[{"name":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"readOnlyHint":true},"x-extra":1}]}';
  const sdk = ListToolsResultSchema.parse(JSON.parse(raw));
  // The SDK sees a clean `true` and strips the unknown key: no trace of either.
  assert.equal(sdk.tools[0]?.annotations?.readOnlyHint, true);
  assert.equal("x-extra" in (sdk.tools[0] ?? {}), false);
  const c =
    parseToolPages([`{"jsonrpc":"2.0","id":1,"result":${raw}}`]).contracts[0];
  assert.equal(c?.hints.readOnlyHint.state, "MALFORMED");
  assert.match(c?.hints.readOnlyHint.detail ?? "", /^duplicate_key/);
  assert.equal(c?.raw["x-extra"], 1);
});

Deno.test("verity reads every tool the SDK rejects, on every page", async () => {
  const client = await connect();
  try {
    for (const cursor of ["page-1", "page-2"]) {
      await assert.rejects(() => client.listTools({ cursor }));
    }
  } finally {
    await client.close();
  }
});
