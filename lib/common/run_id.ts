/**
 * Run ids: the start time, the definition's name and a random suffix,
 * unique across concurrent runs (`report verify` re-derives all but the
 * suffix from the report's provenance).
 *
 * @module
 */

/**
 * A run id for a run of `name` started at `now`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const id = runId("memory server", new Date("2026-12-02T06:00:00.000Z"));
 * assert.match(id, /^20261202T060000000Z-memory_server-[0-9a-f]{8}$/);
 * ```
 */
export function runId(name: string, now: Date): string {
  const iso = now.toISOString().replace(/[-:]/g, "").replace(".", "");
  return `${iso}-${name.replace(/[^A-Za-z0-9_.-]/g, "_")}-${
    crypto.randomUUID().slice(0, 8)
  }`;
}
