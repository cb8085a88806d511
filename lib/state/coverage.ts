/**
 * Coverage: is every declared state location observed by some adapter?
 * Pure. Verdicts that need an unobserved location cannot PASS
 * (`PARTIAL_COVERAGE`).
 *
 * A location `kind:path` is observed by an adapter of the same kind on the
 * same path, or by an fs adapter on that path or a directory above it (an
 * fs adapter on `.` observes the whole state directory, byte by byte).
 * Locations of other kinds (`memory:…`, `http:…`) are never observed.
 *
 * @module
 */
import type { Definition } from "../definition/types.ts";
import { isUnder, normalizeLabel } from "../common/paths.ts";

/** Coverage of a definition's declared locations. */
export interface Coverage {
  complete: boolean;
  /** One entry per declared location; `observedBy` is `"<kind>:<label>"` or null. */
  locations: { location: string; observedBy: string | null }[];
}

/**
 * Which adapter observes each `[state].locations` entry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const c = coverage({
 *   locations: ["sqlite:state.db", "fs:uploads"],
 *   adapters: [{ kind: "sqlite", label: "state.db", seed: null, business: [], append_only: [], mask: [], key: {} }],
 * });
 * assert.equal(c.complete, false);
 * assert.deepEqual(c.locations.filter((l) => l.observedBy === null).map((l) => l.location), ["fs:uploads"]);
 * ```
 */
export function coverage(
  def: Pick<Definition, "locations" | "adapters">,
): Coverage {
  const locations = def.locations.map((location) => {
    const i = location.indexOf(":");
    const kind = location.slice(0, i);
    const path = normalizeLabel(location.slice(i + 1));
    const file = kind === "sqlite" || kind === "fs" || kind === "json";
    const a = def.adapters.find((a) =>
      a.kind === kind && normalizeLabel(a.label) === path
    ) ?? def.adapters.find((a) =>
      file && a.kind === "fs" && isUnder(path, normalizeLabel(a.label))
    );
    return {
      location,
      observedBy: a ? `${a.kind}:${normalizeLabel(a.label)}` : null,
    };
  });
  return { complete: locations.every((l) => l.observedBy !== null), locations };
}
