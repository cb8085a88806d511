import assert from "node:assert/strict";
import { listingChanges, sameListing } from "./listing_changes.ts";

const page = (id: number, tools: string) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"tools":[${tools}]}}`;
const get = (ro: string) =>
  `{"name":"get","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":${ro}}}`;

Deno.test("listings: another id or key order is the same listing; a flipped hint, a new schema or a missing tool is not", () => {
  const first = [page(2, get("true"))];
  assert.equal(
    sameListing(first, [
      page(
        7,
        `{"annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"},"name":"get"}`,
      ),
    ]),
    true,
  );
  assert.equal(sameListing(first, [page(2, get("false"))]), false);
  assert.equal(sameListing(first, [page(2, "")]), false);
  const changes = listingChanges(first, [
    { kind: "control", tool: null, run: 1 },
    { kind: "twice", tool: "get", run: 2, toolsList: [page(2, get("false"))] },
    {
      kind: "once",
      tool: "get",
      run: 2,
      toolsList: [
        page(
          2,
          `{"name":"get","inputSchema":{"type":"object","required":["x"]},"annotations":{"readOnlyHint":"true"}},{"name":"new","inputSchema":{}}`,
        ),
      ],
    },
    { kind: "once", tool: "get", run: 3, toolsList: [page(2, "")] },
  ]);
  // Sorted by session; a string "true" is a malformed hint, not TRUE.
  assert.deepEqual(changes.get("get")?.map((c) => [c.session, c.fields]), [
    ["once get 2", ["inputSchema", "annotations.readOnlyHint"]],
    ["once get 3", ["listed"]],
    ["twice get 2", ["annotations.readOnlyHint"]],
  ]);
  assert.equal(changes.get("get")?.[1]?.then, null);
  assert.deepEqual(changes.get("new")?.map((c) => c.first), [null]);
});
