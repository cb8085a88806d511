/**
 * The private PostgreSQL clusters this process has running, so that an
 * interrupted verity (SIGINT/SIGTERM) stops them without loading the
 * database client. Kept apart from `postgres_cluster.ts` for that reason.
 *
 * @module
 */

/** Something that can be stopped at once and synchronously. */
export interface Killable {
  kill(): void;
}

/** Clusters started and not yet stopped. */
export const liveClusters: Set<Killable> = new Set();

/**
 * Stop every cluster this process started, at once (immediate shutdown,
 * scratch removed): for SIGINT/SIGTERM handlers. Returns how many.
 *
 * @example
 * ```ts
 * Deno.addSignalListener("SIGINT", () => { stopAllClusters(); Deno.exit(130); });
 * ```
 */
export function stopAllClusters(): number {
  const all = [...liveClusters];
  for (const c of all) c.kill();
  return all.length;
}
