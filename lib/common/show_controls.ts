/**
 * Control characters in strings a server sent, made visible before they
 * reach a terminal or a comment line. Pure.
 *
 * A tool name with `ESC[2K` would repaint a terminal line, one with a
 * newline would forge a line of its own (a table row, a TOML key): both are
 * written as escapes instead, so what a person reads is what the server
 * sent.
 *
 * @module
 */

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F). */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same, except the line feed. */
// deno-lint-ignore no-control-regex
const CONTROL_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

function shown(c: string): string {
  return NAMED[c] ?? `\\u{${c.charCodeAt(0).toString(16)}}`;
}

/**
 * Write every C0 and C1 control character and DEL as a visible escape
 * (`\n`, `\r`, `\t`, `\u{1b}`), for a server string put inside one line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(showControls("a\u001b[2Kb\nc"), "a\\u{1b}[2Kb\\nc");
 * ```
 */
export function showControls(s: string): string {
  return s.replace(CONTROL, shown);
}

/**
 * {@linkcode showControls} for a whole block of text verity is about to
 * print: the line feeds that separate its lines stay, every other control
 * character becomes a visible escape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(terminalText("tool\u001b[2K\nnext"), "tool\\u{1b}[2K\nnext");
 * ```
 */
export function terminalText(s: string): string {
  return s.replace(CONTROL_BUT_NEWLINE, shown);
}

/** DEL and the C1 controls, which `JSON.stringify` leaves raw. */
const JSON_RAW_CONTROL = /[\u007f-\u009f]/g;

/**
 * JSON text for a terminal: `JSON.stringify` escapes C0 controls but not
 * DEL or C1 (U+009B is a CSI); those become `\u00XX` escapes, which is the
 * same JSON value (they can only stand inside strings).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = terminalJson(JSON.stringify({ name: "a\u009b2Jb" }));
 * assert.equal(text, '{"name":"a\\u009b2Jb"}');
 * assert.deepEqual(JSON.parse(text), { name: "a\u009b2Jb" });
 * ```
 */
export function terminalJson(json: string): string {
  return json.replace(
    JSON_RAW_CONTROL,
    (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
  );
}
