/**
 * Regions a definition excludes from judgment on purpose (an adapter's
 * `exclude`): still observed and kept as evidence, but no verdict counts a
 * change there. Every format lists them in its headline, so an exclusion is
 * never silent. Pure.
 *
 * @module
 */
import { type CategoryDelta, categoryDelta, type Delta } from "./delta.ts";
import { isUnder, normalizeLabel } from "../common/paths.ts";
import type { AdapterDef } from "../definition/types.ts";
import { isPattern, matchesPattern } from "./classify.ts";

/** One adapter's exclusions, as the history keeps them. */
export interface Exclusion {
  /** The adapter's label (regions are `<label>:<name>`). */
  adapter: string;
  kind: "sqlite" | "fs" | "json" | "postgres";
  /** Table or region names, or fs paths under the label; names or patterns. */
  entries: string[];
}

/**
 * The headline's words for a run's exclusions, one per entry:
 * `state.db: sqlite_stat1`, `.: logs/**`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   exclusionText([{ adapter: ".", kind: "fs", entries: ["logs/**"] }]),
 *   [".: logs/**"],
 * );
 * ```
 */
export function exclusionText(ex: readonly Exclusion[]): string[] {
  return ex.flatMap((e) => e.entries.map((x) => `${e.adapter}: ${x}`));
}

/** Whether a change at (region id, record key) is excluded. */
function excluded(
  ex: readonly Exclusion[],
  region: string,
  key: string | undefined,
): boolean {
  for (const e of ex) {
    if (!region.startsWith(`${e.adapter}:`)) continue;
    const name = region.slice(e.adapter.length + 1);
    if (e.kind === "fs") {
      // fs records are keyed by their path: ["cache/count.json"].
      let path: unknown;
      try {
        path = key === undefined ? undefined : JSON.parse(key)[0];
      } catch {
        path = undefined;
      }
      if (typeof path !== "string") continue;
      if (
        e.entries.some((x) =>
          isPattern(x)
            ? matchesPattern(x, path as string)
            : isUnder(path as string, x)
        )
      ) return true;
    } else if (
      e.entries.some((x) => isPattern(x) ? matchesPattern(x, name) : x === name)
    ) return true;
  }
  return false;
}

/**
 * A category's changes without those `drop` names (by region id and, for
 * records, key); `lossy` and `empty` derived again.
 */
export function filterCategory(
  c: CategoryDelta,
  drop: (region: string, key: string | undefined) => boolean,
): CategoryDelta {
  const keep = <T extends { region: string; key?: string }>(xs: T[]) =>
    xs.filter((x) => !drop(x.region, x.key));
  return categoryDelta({
    added: keep(c.added),
    removed: keep(c.removed),
    changed: keep(c.changed),
    structure: c.structure.filter((x) => !drop(x.region, undefined)),
  });
}

/**
 * A delta without the changes in excluded regions (the same delta when
 * nothing is excluded).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const cat = { added: [], removed: [], changed: [], structure: [], lossy: false, empty: true };
 * const d = {
 *   business: cat,
 *   append_only: cat,
 *   unclassified: { ...cat, added: [{ region: ".:.", key: '["logs/a.log"]' }], empty: false },
 *   empty: false,
 * };
 * const out = excludeFromDelta(d, [{ adapter: ".", kind: "fs", entries: ["logs"] }]);
 * assert.equal(out.empty, true);
 * ```
 */
export function excludeFromDelta(
  d: Delta,
  ex: readonly Exclusion[],
): Delta {
  if (ex.length === 0 || d.empty) return d;
  const drop = (region: string, key: string | undefined) =>
    excluded(ex, region, key);
  const business = filterCategory(d.business, drop);
  const append_only = filterCategory(d.append_only, drop);
  const unclassified = filterCategory(d.unclassified, drop);
  return {
    business,
    append_only,
    unclassified,
    empty: business.empty && append_only.empty && unclassified.empty,
  };
}

/**
 * The exclusions of a definition, as the history records them: `{}` when
 * there are none (reports without exclusions keep their shape).
 */
export function exclusionsOf(
  def: { adapters: readonly Pick<AdapterDef, "kind" | "label" | "exclude">[] },
): { excluded?: Exclusion[] } {
  const excluded = def.adapters.flatMap((a) =>
    a.exclude && a.exclude.length > 0
      ? [{ adapter: normalizeLabel(a.label), kind: a.kind, entries: a.exclude }]
      : []
  );
  return excluded.length > 0 ? { excluded } : {};
}
