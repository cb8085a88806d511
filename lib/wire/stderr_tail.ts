/**
 * The meaningful tail of a dying server's stderr, and a one-line account of
 * how it died. Pure.
 *
 * @module
 */

/** Lines that say nothing about why a server died. */
const NOISE: readonly RegExp[] = [
  /^Node\.js v\d/, // Node's version footer
  /^at\s/, // stack frames (the message above them is kept)
  /^\^+$/, // the caret under a source excerpt
  /^[{}()[\],]+$/, // lone brackets of a printed error object
];

const MAX_LINES = 8;
const HEADLINE = /\b(Error|Exception|Traceback|panic|error:|Fatal|FATAL)\b/;

/**
 * The last lines of stderr that explain a crash: blank lines, stack frames,
 * Node's version footer and lone brackets dropped; the error headline kept
 * even when it is further up; at most 8 lines, each cut at 240 characters
 * with `…`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = "Error: Cannot find module 'x'\n    at require (a.js:1)\n\nNode.js v20.20.2\n";
 * assert.deepEqual(meaningfulTail(text), ["Error: Cannot find module 'x'"]);
 * ```
 */
export function meaningfulTail(text: string): string[] {
  const kept = text.split(/\r?\n/).map((l) => l.trim()).filter((l) =>
    l !== "" && !NOISE.some((re) => re.test(l))
  );
  let tail = kept.slice(-MAX_LINES);
  if (!tail.some((l) => HEADLINE.test(l))) {
    const head = kept.slice(0, kept.length - tail.length).findLast((l) =>
      HEADLINE.test(l)
    );
    if (head !== undefined) tail = [head, ...tail.slice(-(MAX_LINES - 1))];
  }
  return tail.map((l) => l.length > 240 ? `${l.slice(0, 240)}…` : l);
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
  const status = signal
    ? `signal ${signal}`
    : code !== null
    ? `exit code ${code}`
    : "unknown exit status";
  return `${what} (${status})${
    tail.length ? `; stderr: ${tail.join(" | ")}` : "; stderr empty"
  }`;
}
