/**
 * The `<target>` form of `verity reality` (placeholder until the definition,
 * state-reset and sandbox modules land).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import type { RealityReport } from "./report.ts";

/** Options for {@linkcode runTargetReality}. */
export interface TargetRealityOptions {
  seed: number;
  includeDestructive: boolean;
  timeoutMs: number;
}

/** Run a reality check on a target definition. */
export function runTargetReality(
  target: string,
  _options: TargetRealityOptions,
): Promise<RealityReport> {
  return Promise.reject(
    new UsageError(
      `verity reality: ${target}: the <target> form is not available yet; use -- <command...>`,
    ),
  );
}
