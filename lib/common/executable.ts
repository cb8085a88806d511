/**
 * Whether a program can be run: one copy of the check the wire client, the
 * definition loader and the command launcher make before they start
 * anything. Reads the disk (requires `--allow-read`).
 *
 * @module
 */

/** Whether `path` is a file some execute bit is set on. */
export function isExecutable(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The executable `program` names: itself when it holds a `/`, else the
 * first on `path` (a `:`-separated list); null when there is none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(findExecutable("sh", "/nonexistent:/bin"), "/bin/sh");
 * assert.equal(findExecutable("/nonexistent/sh", "/bin"), null);
 * ```
 */
export function findExecutable(program: string, path: string): string | null {
  const candidates = program.includes("/")
    ? [program]
    : path.split(":").filter((d) => d !== "").map((d) => `${d}/${program}`);
  return candidates.find(isExecutable) ?? null;
}
