/**
 * Compare two SQLite databases page by page and row by row, without
 * building either snapshot: the sqlite half of a state delta in bounded
 * memory. Pure over two {@linkcode PageSource}s (random access to pages).
 *
 * For every table read in rowid order (an `INTEGER PRIMARY KEY`, or no
 * primary key), both b-trees are walked through their interior pages only,
 * giving each table's leaf pages in key order. A leaf page that is a leaf
 * of the same table on both sides, at the same page number, with the same
 * bytes (the caller says which pages differ) holds the same rows on both
 * sides: it is skipped without being decoded. The remaining leaves are
 * streamed in rowid order on both sides and merge-compared: rows with the
 * same rowid and the same record bytes are equal without decoding; only
 * rows that differ are decoded (with the same record decoder as the
 * snapshot reader) and compared field by field after masking. Memory holds
 * the pages being read, the list of leaf page numbers and the differences
 * (the evidence), never all rows. Tables identified by another primary
 * key are compared by `keyed.ts`.
 *
 * Anything this reader does not handle (generated columns, a short record
 * whose missing column has a default, NULL primary keys, a non-UTF-8
 * database, a malformed tree, keys out of the order computed here) throws
 * {@linkcode PageWalkError} with the reason; the caller then compares full
 * snapshots (docs/state.md lists every reason).
 *
 * @module
 */
import type { MaskRule } from "../../lib/definition/types.ts";
import {
  diffFields,
  emptyRegionDiff,
  type RecordFieldChange,
  type RegionDiff,
  structureChange,
} from "../../lib/state/delta.ts";
import type { Category } from "../../lib/state/types.ts";
import {
  type DiffSide,
  LeafCursor,
  leafOverflows,
  type TreeIndex,
  walkTrees,
} from "./btree.ts";
import {
  flatOrder,
  NO_CHANGES,
  RowComparer,
  RowKeeper,
  sameBytes,
  type SqliteDiffStats,
} from "./compare.ts";
import { geometry, type PageSource } from "./format.ts";
import {
  diffKeyed,
  diffRekeyed,
  indexPageOverflows,
  KeyCursor,
  type KeyedFaults,
} from "./keyed.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { rowValue } from "./plan.ts";

/** Options of {@linkcode diffSqlitePair}. */
export interface SqliteDiffOptions {
  /** The adapter's label (region ids are `label:table`). */
  label: string;
  /** A table's category. */
  categoryOf: (table: string) => Category;
  /** Masks by table name. */
  masks: ReadonlyMap<string, readonly MaskRule[]>;
  /**
   * Pages whose bytes differ between the two sides (index = page number,
   * non-zero = differs; pages beyond the array differ); null: treat every
   * page as different (nothing is skipped).
   */
  changed: Uint8Array | null;
  /**
   * Keep the full rows of every change (`RegionDiff.rows`: the after
   * side's added and changed rows, the before side's changed and removed
   * ones). @default false
   */
  keepRows?: boolean;
  /** Faults injected on purpose (tests of the differential tests). @default {} */
  faults?: KeyedFaults;
}

/**
 * The sqlite regions of a delta between two databases (`before` may be
 * the seed), one {@linkcode RegionDiff} per table on either side, equal to
 * what `computeDelta` finds between the two normalized snapshots. Throws
 * {@linkcode PageWalkError} when full snapshots must be compared instead.
 */
export function diffSqlitePair(
  before: DiffSide | null,
  after: DiffSide | null,
  options: SqliteDiffOptions,
): { regions: RegionDiff[]; stats: SqliteDiffStats } {
  const stats: SqliteDiffStats = {
    leavesSkipped: 0,
    leavesRead: 0,
    rowsDecoded: 0,
    treePagesRead: 0,
    orderedByIndex: 0,
  };
  const gB = before ? geometry(before.src) : null;
  const gA = after ? geometry(after.src) : null;
  const changed = options.changed;
  const differs = (pgno: number) =>
    changed === null || pgno >= changed.length || changed[pgno] !== 0;
  const same = (pgno: number) => !differs(pgno);
  // Walk every tree on both sides; the after side takes what it can from
  // the before side (pages with equal bytes have equal kinds and children).
  let wb: TreeIndex | null = null;
  if (before) {
    const r = walkTrees(before);
    wb = r.index;
    stats.treePagesRead += r.pagesRead;
  }
  let wa: TreeIndex | null = null;
  if (after) {
    const r = walkTrees(after, wb, same);
    wa = r.index;
    stats.treePagesRead += r.pagesRead;
  }
  // A changed page that is no table, index or freelist page on either
  // side may be an overflow page of an unchanged leaf: then leaves with
  // overflow cells are never skipped.
  let suspect = changed === null;
  if (!suspect && wb && wa) {
    const n = Math.max(wb.mark.length, wa.mark.length);
    for (let p = 1; p < n && !suspect; p++) {
      if (!differs(p)) continue;
      if ((wb.mark[p] ?? 0) === 0 && (wa.mark[p] ?? 0) === 0) suspect = true;
    }
  }
  const regions: RegionDiff[] = [];
  const byName = (side: DiffSide | null) =>
    new Map((side?.tables ?? []).map((t, i) => [t.name, { t, i }]));
  const tb = byName(before);
  const ta = byName(after);
  const names = [...new Set([...tb.keys(), ...ta.keys()])];
  for (const name of names) {
    const id = `${options.label}:${name}`;
    const part = emptyRegionDiff(id, options.categoryOf(name));
    const xb = tb.get(name);
    const xa = ta.get(name);
    part.structure = structureChange(
      id,
      xb?.t.plan.columns ?? null,
      xa?.t.plan.columns ?? null,
    );
    const masks = options.masks.get(name);
    const leavesB = xb ? wb!.leaves.get(name)! : [];
    const leavesA = xa ? wa!.leaves.get(name)! : [];
    const planB = xb?.t.plan;
    const planA = xa?.t.plan;
    const samePlan = planB !== undefined && planA !== undefined &&
      planB.sql === planA.sql && planB.select === planA.select;
    const keyed = (xb?.t.key ?? xa?.t.key ?? null) !== null;
    if (xb && xa && (xb.t.key === null) !== (xa.t.key === null)) {
      throw new PageWalkError(
        `table ${name} is WITHOUT ROWID on one side only`,
      );
    }
    // Leaves identical on both sides, of this table on both sides.
    let common: (pgno: number) => boolean = () => false;
    if (samePlan && changed !== null) {
      const tagB = xb!.i + 1;
      const tagA = xa!.i + 1;
      const markB = wb!.mark;
      const markA = wa!.mark;
      const srcA = after!.src;
      const verdict = new Map<number, boolean>();
      common = (pgno) => {
        if (markB[pgno] !== tagB || markA[pgno] !== tagA || differs(pgno)) {
          return false;
        }
        if (!suspect) return true;
        let v = verdict.get(pgno);
        if (v === undefined) {
          v = !(keyed ? indexPageOverflows : leafOverflows)(
            srcA.page(pgno),
            pgno,
            gA!,
          );
          verdict.set(pgno, v);
        }
        return v;
      };
      for (const p of leavesA) if (p > 0 && common(p)) stats.leavesSkipped++;
    }
    if (keyed) {
      diffKeyed(
        part,
        new KeyCursor(before?.src ?? emptySource, gB!, leavesB, common, xb),
        new KeyCursor(after?.src ?? emptySource, gA!, leavesA, common, xa),
        samePlan,
        masks,
        stats,
        new RowKeeper(options.keepRows === true),
        options.faults ?? {},
      );
      regions.push(part);
      continue;
    }
    const comparer = samePlan && flatOrder(planB!.columns)
      ? new RowComparer(planB!, masks)
      : null;
    const cb = new LeafCursor(before?.src ?? emptySource, gB!, leavesB, common);
    const ca = new LeafCursor(after?.src ?? emptySource, gA!, leavesA, common);
    const keyColsB = xb?.t.keyCols ?? null;
    const keyColsA = xa?.t.keyCols ?? null;
    if (keyColsB !== null || keyColsA !== null) {
      if (
        xb && xa && (keyColsB === null || keyColsA === null ||
          planB!.identity.join("\0") !== planA!.identity.join("\0"))
      ) {
        throw new PageWalkError(`table ${name}: its key changed`);
      }
      const ixName = xa?.t.pkIndex ?? null;
      const ixRow = ixName === null
        ? undefined
        : after!.schema.find((r) => r.type === "index" && r.name === ixName);
      diffRekeyed(
        part,
        cb,
        ca,
        planB,
        planA,
        comparer,
        masks,
        stats,
        new RowKeeper(options.keepRows === true),
        ixRow === undefined || ixRow.rootpage < 1 ? null : {
          src: after!.src,
          g: gA!,
          root: ixRow.rootpage,
          nKey: planA!.keyIdx.length,
        },
        options.faults ?? {},
      );
      regions.push(part);
      continue;
    }
    const rows = new RowKeeper(options.keepRows === true);
    const removeRow = () =>
      rows.row(
        part,
        "was",
        "[" + cb.rowid + "]",
        () => rowValue(cb.payload(), cb.rowid, planB!, masks),
      );
    const addRow = () =>
      rows.row(
        part,
        "put",
        "[" + ca.rowid + "]",
        () => rowValue(ca.payload(), ca.rowid, planA!, masks),
      );
    let hb = cb.next();
    let ha = ca.next();
    while (hb && ha) {
      if (cb.rowid === ca.rowid) {
        let fields: RecordFieldChange[];
        if (comparer !== null) {
          if (
            cb.size === ca.size && cb.local === cb.size &&
            sameBytes(cb.page, cb.at, ca.page, ca.at, cb.size)
          ) {
            fields = NO_CHANGES;
          } else if (cb.local === cb.size && ca.local === ca.size) {
            stats.rowsDecoded += 2;
            fields = comparer.compare(
              cb.page,
              cb.at,
              cb.size,
              ca.page,
              ca.at,
              ca.size,
              cb.rowid,
            );
          } else {
            const pb = cb.payload();
            const pa = ca.payload();
            fields =
              pb.length === pa.length && sameBytes(pb, 0, pa, 0, pb.length)
                ? NO_CHANGES
                : comparer.compare(
                  pb,
                  0,
                  pb.length,
                  pa,
                  0,
                  pa.length,
                  cb.rowid,
                );
            if (fields !== NO_CHANGES) stats.rowsDecoded += 2;
          }
        } else {
          stats.rowsDecoded += 2;
          const vb = rowValue(cb.payload(), cb.rowid, planB!, masks);
          const va = rowValue(ca.payload(), ca.rowid, planA!, masks);
          fields = diffFields(vb, va);
        }
        if (fields.length > 0) {
          rows.changed(
            part,
            "[" + cb.rowid + "]",
            fields,
            () => rowValue(cb.payload(), cb.rowid, planB!, masks),
            () => rowValue(ca.payload(), ca.rowid, planA!, masks),
          );
        }
        hb = cb.next();
        ha = ca.next();
      } else if (cb.rowid < ca.rowid) {
        removeRow();
        hb = cb.next();
      } else {
        addRow();
        ha = ca.next();
      }
    }
    for (; hb; hb = cb.next()) removeRow();
    for (; ha; ha = ca.next()) addRow();
    rows.done(part, false);
    stats.leavesRead += cb.leavesRead + ca.leavesRead;
    regions.push(part);
  }
  return { regions, stats };
}

const emptySource: PageSource = {
  pageSize: 4096,
  pageCount: 0,
  page(pgno: number): Uint8Array {
    throw new PageWalkError(`bad page ${pgno}`);
  },
};
