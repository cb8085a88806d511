/**
 * Escaping shared by the HTML and JUnit XML renderers. Pure.
 *
 * Every string a server can influence (tool names, descriptions, deltas,
 * error messages) goes through {@linkcode escapeMarkup} before it is put in
 * a page or a document.
 *
 * @module
 */

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Whether this code point goes into a page or document as itself: XML 1.0
 * can carry it at all, and it is not DEL or a C1 control (XML allows those,
 * HTML counts them parse errors and a terminal showing the file obeys them).
 */
function xmlCharacter(c: number): boolean {
  if (c === 0x9 || c === 0xa || c === 0xd) return true;
  if (c < 0x20) return false;
  if (c >= 0x7f && c <= 0x9f) return false;
  if (c >= 0xd800 && c <= 0xdfff) return false; // a lone surrogate
  return c !== 0xfffe && c !== 0xffff;
}

/**
 * Escape text for an XML or HTML text node or a quoted attribute value:
 * `& < > " '` become entities, and characters XML 1.0 cannot carry (control
 * characters, lone surrogates, U+FFFE/U+FFFF) and DEL and the C1 controls
 * become a visible `\u{…}`.
 *
 * @example
 * ```ts
 * escapeMarkup(`<&"'>`); // "&lt;&amp;&quot;&#39;&gt;"
 * ```
 */
export function escapeMarkup(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (!xmlCharacter(c)) out += `\\u{${c.toString(16)}}`;
    else out += ENTITIES[ch] ?? ch;
  }
  return out;
}

/**
 * Escape an attribute value, also keeping tabs and line breaks (an XML
 * parser would otherwise normalize them to spaces).
 */
export function escapeAttribute(s: string): string {
  return escapeMarkup(s).replace(/\t/g, "&#9;").replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;");
}

/** Escaped, with line-break opportunities after `_ = [ . : ,` (no mid-word breaks in narrow columns). */
export function breakable(text: string): string {
  return escapeMarkup(text).replace(/([_=\[.:,])/g, "$1<wbr>");
}

/** Shorten a string to at most `max` characters, marking the cut. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A tool's display name: `name` or `name[variant]`. */
export function toolLabel(
  v: { tool: string; variant: string | null },
): string {
  return v.variant === null ? v.tool : `${v.tool}[${v.variant}]`;
}

/** A verdict's claim as `hint: value`, e.g. `readOnlyHint: true`. */
export function declaredHint(v: { hint: string; declared: string }): string {
  return `${v.hint}: ${v.declared.toLowerCase()}`;
}
