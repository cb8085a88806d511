/**
 * How the sqlite adapter reads one table through SQL: the table's plan
 * (identity, column order, fast-path eligibility) and the row reader.
 * Private to adapters/.
 *
 * @module
 */
import { PageWalkError } from "./page_walk_error.ts";
import { bytesToBase64 } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import type { SqlDatabase } from "./sql_engine.ts";

export function quoteIdent(s: string): string {
  return '"' + s.replaceAll('"', '""') + '"';
}

export function encodeValue(v: unknown): unknown {
  if (v === null || typeof v === "string") return v;
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : { $real: String(v) };
  }
  if (typeof v === "bigint") {
    return Number.isSafeInteger(Number(v)) ? Number(v) : { $int: v.toString() };
  }
  if (v instanceof Uint8Array) return { $bytes: bytesToBase64(v) };
  return v;
}

/** How one table is read. */
export interface TablePlan {
  name: string;
  columns: string[];
  identity: string[];
  /** Columns selected: the table's, then (if any) the rowid alias. */
  select: string;
  /** Full-scan ORDER BY. */
  order: string;
  /** Indexes (into a selected row) of the identity values. */
  keyIdx: number[];
  /** Rowid column name usable in SQL, when rows can be read in rowid order. */
  rowidName: string | null;
  /** Index of the rowid in a selected row (fast path only). */
  rowidIdx: number;
  /** Whether the single integer primary key must equal the rowid (checked per row). */
  intPk: boolean;
  /** The table's CREATE statement (part of the page-cache signature). */
  sql: string;
  /**
   * Whether leaf pages can be decoded in JS: a rowid table without hidden
   * (generated) columns. Anything else goes through SQL.
   */
  decodable: boolean;
  /** Index of the INTEGER PRIMARY KEY column (stored as NULL, value = rowid), or -1. */
  aliasIdx: number;
  /** Whether the table is `WITHOUT ROWID` (stored as an index b-tree keyed by its primary key). */
  withoutRowid: boolean;
  /** Hidden (generated) columns. */
  hidden: number;
  /** Whether each column has a non-NULL default (short records then need SQL). */
  hasDefault: boolean[];
  /** Build a value object from decoded fields (fixed shape). */
  make: (fields: unknown[]) => Record<string, unknown>;
}

/** A value-object constructor with a fixed shape for these column names. */
function valueMaker(
  columns: readonly string[],
): (fields: unknown[]) => Record<string, unknown> {
  if (columns.some((c) => c === "__proto__") || columns.length > 200) {
    return (f) => {
      const o: Record<string, unknown> = {};
      columns.forEach((c, i) =>
        Object.defineProperty(o, c, {
          value: f[i],
          enumerable: true,
          writable: true,
          configurable: true,
        })
      );
      return o;
    };
  }
  // Column names are embedded as JSON string literals: no code can be injected.
  const body = "return {" +
    columns.map((c, i) => `${JSON.stringify(c)}: f[${i}]`).join(", ") + "};";
  return new Function("f", body) as (
    fields: unknown[],
  ) => Record<string, unknown>;
}

export function planTable(
  db: SqlDatabase,
  name: string,
  sql: string,
): TablePlan {
  const info = db.exec(
    `SELECT name, type, pk, dflt_value FROM pragma_table_info(${
      sqlString(name)
    }) ORDER BY cid`,
  )[0]
    ?.values ?? [];
  const hidden = Number(
    db.exec(
      `SELECT count(*) FROM pragma_table_xinfo(${
        sqlString(name)
      }) WHERE hidden != 0`,
    )[0]?.values[0]?.[0] ?? 0,
  );
  const columns = info.map((r) => String(r[0]));
  const hasDefault = info.map((r) =>
    r[3] !== null && String(r[3]).toUpperCase() !== "NULL"
  );
  const make = valueMaker(columns);
  const pkCols = info.filter((r) => Number(r[2]) > 0).sort((a, b) =>
    Number(a[2]) - Number(b[2])
  ).map((r) => String(r[0]));
  let hasRowid = true;
  try {
    db.prepare(`SELECT rowid FROM ${quoteIdent(name)} LIMIT 0`).free();
  } catch {
    hasRowid = false;
  }
  const shadowed = new Set(columns.map((c) => c.toLowerCase()));
  const rowidAlias = hasRowid
    ? ["rowid", "_rowid_", "oid"].find((a) => !shadowed.has(a)) ?? null
    : null;
  const intPk = pkCols.length === 1 && hasRowid &&
    String(info.find((r) => r[0] === pkCols[0])?.[1] ?? "").toUpperCase() ===
      "INTEGER";
  const n = columns.length;
  const cols = columns.map(quoteIdent);
  if (pkCols.length > 0) {
    return {
      name,
      columns,
      identity: pkCols,
      select: [...cols, ...(intPk && rowidAlias ? [rowidAlias] : [])].join(
        ", ",
      ),
      order: intPk
        ? quoteIdent(pkCols[0]!)
        : pkCols.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", "),
      keyIdx: pkCols.map((c) => columns.indexOf(c)),
      rowidName: intPk ? rowidAlias : null,
      rowidIdx: n,
      intPk,
      sql,
      decodable: intPk && rowidAlias !== null && hidden === 0,
      aliasIdx: intPk ? columns.indexOf(pkCols[0]!) : -1,
      withoutRowid: !hasRowid,
      hidden,
      hasDefault,
      make,
    };
  }
  if (rowidAlias !== null) {
    return {
      name,
      columns,
      identity: ["rowid"],
      select: [...cols, rowidAlias].join(", "),
      order: rowidAlias,
      keyIdx: [n],
      rowidName: rowidAlias,
      rowidIdx: n,
      intPk: false,
      sql,
      decodable: hidden === 0,
      aliasIdx: -1,
      withoutRowid: !hasRowid,
      hidden,
      hasDefault,
      make,
    };
  }
  // No usable identity: rows are identified by their whole value.
  return {
    name,
    columns,
    identity: columns,
    select: cols.join(", "),
    order: columns.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", "),
    keyIdx: columns.map((_, i) => i),
    rowidName: null,
    rowidIdx: -1,
    intPk: false,
    sql,
    decodable: false,
    aliasIdx: -1,
    withoutRowid: !hasRowid,
    hidden,
    hasDefault,
    make,
  };
}

/** Run a SELECT of `plan.select` and turn its rows into records (and rowids, for the fast path). */
export function readRows(
  db: SqlDatabase,
  plan: TablePlan,
  where: string,
  order: string,
  rowids: number[] | null,
): StateRecord[] {
  const st = db.prepare(
    `SELECT ${plan.select} FROM ${
      quoteIdent(plan.name)
    }${where} ORDER BY ${order}`,
  );
  const n = plan.columns.length;
  const keyIdx = plan.keyIdx;
  const single = keyIdx.length === 1 ? keyIdx[0]! : -1;
  const records: StateRecord[] = [];
  try {
    while (st.step()) {
      let row = st.get();
      for (let i = 0; i < row.length; i++) {
        const v = row[i];
        if (
          typeof v === "number" && Number.isInteger(v) &&
          !Number.isSafeInteger(v)
        ) {
          row = st.get(null, { useBigInt: true });
          break;
        }
      }
      for (let i = 0; i < n; i++) {
        const v = row[i];
        if (
          !(v === null || typeof v === "string" ||
            (typeof v === "number" && Number.isFinite(v)))
        ) {
          row[i] = encodeValue(v);
        }
      }
      const value = plan.make(row);
      let key: string;
      if (single !== -1) {
        const k = row[single];
        key = typeof k === "number" && Number.isFinite(k)
          ? "[" + k + "]"
          : "[" + JSON.stringify(encodeValue(k)) + "]";
      } else {
        // Encoded values ({$bytes}, {$int}, {$real}) have one key, so plain JSON is canonical.
        key = "[" + keyIdx.map((i) =>
          JSON.stringify(encodeValue(row[i]))
        ).join(",") + "]";
      }
      if (rowids !== null) {
        const rid = row[plan.rowidIdx];
        if (
          typeof rid !== "number" || (plan.intPk && row[keyIdx[0]!] !== rid)
        ) {
          throw new PageWalkError(
            `rowid ${String(rid)} is not a safe integer key`,
          );
        }
        rowids.push(rid);
      }
      records.push({ key, value });
    }
  } finally {
    st.free();
  }
  return records;
}

export { PageWalkError };

export function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'";
}
