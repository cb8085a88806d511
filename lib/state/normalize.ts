/**
 * Apply a definition's masks to a snapshot. Pure.
 *
 * A mask names a volatile field (a timestamp, uuid, random token or
 * counter) of one region; its non-null values become a placeholder such as
 * `"<timestamp>"`, so two runs that differ only there compare equal. A null
 * stays null: a field that gains or loses a value is still seen.
 *
 * @module
 */
import type { Definition, MaskRule } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { pathSegments, replacePath } from "./json_path.ts";
import type { Region, Snapshot, StateRecord } from "./types.ts";

/** The placeholder a masked value becomes. */
export function maskPlaceholder(kind: MaskRule["kind"]): string {
  return `<${kind}>`;
}

/**
 * Return a snapshot with every mask of `def` applied (the input is not
 * modified; unmasked regions are shared).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const snap = normalize({
 *   problems: [],
 *   regions: [{
 *     adapter: "state.db", kind: "sqlite", name: "log", category: "append_only",
 *     records: [{ key: "[1]", value: { id: 1, at: "2026-12-02T10:00:00Z" } }],
 *   }],
 * }, {
 *   adapters: [{
 *     kind: "sqlite", label: "state.db", seed: null, business: [], append_only: ["log"], key: {},
 *     mask: [{ region: "log", column: "at", kind: "timestamp" }],
 *   }],
 * });
 * assert.deepEqual(snap.regions[0]?.records[0]?.value, { id: 1, at: "<timestamp>" });
 * ```
 */
export function normalize(
  snap: Snapshot,
  def: Pick<Definition, "adapters">,
): Snapshot {
  const masks = new Map<string, MaskRule[]>();
  for (const a of def.adapters) {
    const label = normalizeLabel(a.label);
    for (const m of a.mask) {
      const id = `${label}\0${a.kind}\0${m.region}`;
      const list = masks.get(id) ?? [];
      list.push(m);
      masks.set(id, list);
    }
  }
  if (masks.size === 0) return snap;
  const regions = snap.regions.map((r): Region => {
    const rules = masks.get(`${r.adapter}\0${r.kind}\0${r.name}`);
    if (!rules) return r;
    return {
      ...r,
      records: r.records.map((rec) =>
        maskRecord(rec, rules, r.kind === "sqlite" || r.kind === "postgres")
      ),
    };
  });
  return { regions, problems: snap.problems };
}

/**
 * Mask one flat row (a sqlite or postgres record's value): each rule's
 * column, when present and not null, becomes its placeholder. Returns the
 * same object when nothing changes, else a copy.
 */
export function maskRow(
  value: Record<string, unknown>,
  rules: readonly MaskRule[],
): Record<string, unknown> {
  for (const m of rules) {
    const ph = maskPlaceholder(m.kind);
    if (
      Object.hasOwn(value, m.column) && value[m.column] !== null &&
      value[m.column] !== ph
    ) {
      value = { ...value, [m.column]: ph };
    }
  }
  return value;
}

function maskRecord(
  rec: StateRecord,
  rules: readonly MaskRule[],
  flat: boolean,
): StateRecord {
  let value: Record<string, unknown> = rec.value;
  if (flat) value = maskRow(value, rules);
  else {
    for (const m of rules) {
      const ph = maskPlaceholder(m.kind);
      value = replacePath(
        value,
        pathSegments(m.column),
        (old) => (old === null ? null : ph),
      ) as Record<string, unknown>;
    }
  }
  return value === rec.value ? rec : { key: rec.key, value };
}
