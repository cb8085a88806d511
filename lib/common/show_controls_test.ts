import assert from "node:assert/strict";
import { showControls, terminalText } from "./show_controls.ts";

Deno.test("showControls: C0, DEL and C1 become visible escapes, the rest is kept", () => {
  assert.equal(
    showControls("x\u0000\u0007\t\r\n\u001b[2K\u007f\u0085\u009by é✓"),
    "x\\u{0}\\u{7}\\t\\r\\n\\u{1b}[2K\\u{7f}\\u{85}\\u{9b}y é✓",
  );
  assert.equal(showControls("get_note"), "get_note");
});

Deno.test("terminalText: keeps verity's own line feeds, escapes every other control character", () => {
  const out = terminalText("a\u001b[2K\r\nb\u009b31m\n");
  assert.equal(out, "a\\u{1b}[2K\\r\nb\\u{9b}31m\n");
  // deno-lint-ignore no-control-regex
  assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(out));
});
