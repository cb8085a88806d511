/**
 * A server's string as a Markdown code span. Pure.
 *
 * @module
 */
import { showControls } from "../lib/common/show_controls.ts";

/**
 * A Markdown (CommonMark) code span holding `s` as it is: the fence is one
 * backtick longer than the longest run of backticks in `s` (so none closes
 * it early), padded with a space when `s` starts or ends with a backtick,
 * and control characters (a newline would end the list item or start a
 * heading) are written as visible escapes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(markdownCode("get_note"), "`get_note`");
 * assert.equal(markdownCode("a`b\n# x"), "``a`b\\n# x``");
 * assert.equal(markdownCode("`x"), "`` `x ``");
 * ```
 */
export function markdownCode(s: string): string {
  const text = showControls(s);
  const longest = Math.max(
    0,
    ...[...text.matchAll(/`+/g)].map((m) => m[0].length),
  );
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}
