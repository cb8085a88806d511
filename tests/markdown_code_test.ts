import assert from "node:assert/strict";
import { markdownCode } from "../scripts/_markdown_code.ts";

Deno.test("markdownCode: a hostile tool name stays one code span on one line", () => {
  const name = "evil``\n## [target.allow]\n\u001b[2K`";
  const span = markdownCode(name);
  assert.equal(span, "``` evil``\\n## [target.allow]\\n\\u{1b}[2K` ```");
  assert.ok(!span.includes("\n"));
  // The span's fence is longer than every backtick run inside it.
  const inner = span.slice(4, -4);
  assert.ok(!inner.includes("```"));
  assert.equal(markdownCode("plain"), "`plain`");
});
