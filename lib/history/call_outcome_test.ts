import assert from "node:assert/strict";
import {
  ATTEMPT_MESSAGE_LIMIT,
  classifyAnswer,
  classifyResponseFrame,
  classifyResultText,
} from "./call_outcome.ts";

Deno.test("a call is ok, tool_error (isError), protocol_error (JSON-RPC error) or unknown (no answer)", () => {
  assert.deepEqual(classifyAnswer({ status: "ok", result: { content: [] } }), {
    status: "ok",
    message: null,
  });
  assert.deepEqual(
    classifyAnswer({
      status: "ok",
      result: { isError: true, content: [{ type: "text", text: "no" }] },
    }),
    { status: "tool_error", message: '[{"type":"text","text":"no"}]' },
  );
  assert.deepEqual(
    classifyAnswer({ status: "error", error: { code: -32602 } }),
    { status: "protocol_error", message: '{"code":-32602}' },
  );
  assert.deepEqual(
    classifyAnswer({ status: "unknown", failure: { message: "timeout" } }),
    { status: "unknown", message: "timeout" },
  );
});

Deno.test("the raw frame and the kept result text classify the same way as the live answer", () => {
  const result = { isError: true, content: "x".repeat(500) };
  const live = classifyAnswer({ status: "ok", result });
  const frame = classifyResponseFrame(
    JSON.stringify({ jsonrpc: "2.0", id: 2, result }),
  );
  assert.deepEqual(frame, live);
  assert.equal(live.message!.length, 300);
  const kept = classifyResultText(JSON.stringify(result));
  assert.equal(kept.status, "tool_error");
  assert.equal(kept.message!.length, ATTEMPT_MESSAGE_LIMIT);
  assert.equal(
    classifyResponseFrame('{"jsonrpc":"2.0","id":2,"error":{"code":1}}')
      .status,
    "protocol_error",
  );
  assert.equal(classifyResponseFrame("not json").status, "unknown");
  assert.equal(classifyResponseFrame(null).status, "unknown");
  assert.equal(classifyResultText(null).status, "protocol_error_or_unknown");
});
