/**
 * The meaningful tail of a dying server's stderr, and a one-line account of
 * how it died. Pure.
 *
 * @module
 */

/** Options for {@linkcode meaningfulTail}. */
export interface TailOptions {
  /**
   * Most lines kept.
   * @default {8}
   */
  maxLines?: number;
  /**
   * Longest line kept, in characters (longer lines are cut with `…`).
   * @default {240}
   */
  maxLineChars?: number;
}

/** Lines that say nothing about why a server died. */
const NOISE: readonly RegExp[] = [
  /^Node\.js v\d/, // Node's version footer
  /^at\s/, // stack frames (the message above them is kept)
  /^\^+$/, // the caret under a source excerpt
  /^[{}()[\],]+$/, // lone brackets of a printed error object
];

const HEADLINE = /\b(Error|Exception|Traceback|panic|error:|Fatal|FATAL)\b/;

/**
 * The last lines of stderr that explain a crash: blank lines, stack frames,
 * Node's version footer and lone brackets dropped; the error headline kept
 * even when it is further up; at most `maxLines` lines, each bounded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = "Error: Cannot find module 'x'\n    at require (a.js:1)\n\nNode.js v20.20.2\n";
 * assert.deepEqual(meaningfulTail(text), ["Error: Cannot find module 'x'"]);
 * ```
 */
export function meaningfulTail(
  text: string,
  options: TailOptions = {},
): string[] {
  const maxLines = options.maxLines ?? 8;
  const maxChars = options.maxLineChars ?? 240;
  const kept = text.split(/\r?\n/).map((l) => l.trim()).filter((l) =>
    l !== "" && !NOISE.some((re) => re.test(l))
  );
  let tail = kept.slice(-maxLines);
  if (!tail.some((l) => HEADLINE.test(l))) {
    const head = kept.slice(0, kept.length - tail.length).findLast((l) =>
      HEADLINE.test(l)
    );
    if (head !== undefined) tail = [head, ...tail.slice(-(maxLines - 1))];
  }
  return tail.map((l) => l.length > maxChars ? `${l.slice(0, maxChars)}…` : l);
}

/** How a process ended, in words: `exit code 3`, `signal SIGSEGV`. */
export function exitStatusText(
  code: number | null,
  signal: string | null,
): string {
  if (signal) return `signal ${signal}`;
  if (code !== null) return `exit code ${code}`;
  return "unknown exit status";
}

/**
 * One line for a server that died: its exit status and the meaningful tail
 * of its stderr, lines joined with ` | `.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   deathMessage("server exited before answering", 1, null, "boom\n"),
 *   "server exited before answering (exit code 1); stderr: boom",
 * );
 * ```
 */
export function deathMessage(
  what: string,
  code: number | null,
  signal: string | null,
  stderr: string,
): string {
  const tail = meaningfulTail(stderr);
  return `${what} (${exitStatusText(code, signal)})${
    tail.length ? `; stderr: ${tail.join(" | ")}` : "; stderr empty"
  }`;
}
