/**
 * The schema plan: how each table of a database is read, found by SQLite
 * itself on an empty database holding only the schema's tables (the rows
 * are never given to SQL): its columns and identity (primary key columns,
 * else the rowid), how its records are keyed and stored, and the decoder
 * that turns a record's bytes into the row a snapshot holds.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { MaskRule } from "../../lib/definition/types.ts";
import { maskRow } from "../../lib/state/normalize.ts";
import { RecordHeader, TextWindow, valueAt } from "./format.ts";
import { PageWalkError } from "./page_walk_error.ts";
import { emptyDatabase, queryRows, quoteIdent, sqlString } from "./sql.ts";

/** One row of `sqlite_schema`. */
export interface SchemaRow {
  type: string;
  name: string;
  rootpage: number;
  sql: string;
}

/** How one table is read. */
export interface TablePlan {
  name: string;
  columns: string[];
  identity: string[];
  /** Whether the identity is the table's PRIMARY KEY columns. */
  primaryKey: boolean;
  /** Columns selected by SQL: the table's, then (if any) the rowid alias. */
  select: string;
  /** Full-scan ORDER BY, in the snapshot's key order. */
  order: string;
  /** Indexes (into a selected row) of the identity values. */
  keyIdx: number[];
  /** Rowid column name usable in SQL, when rows can be read in rowid order. */
  rowidName: string | null;
  /** Whether the single integer primary key must equal the rowid. */
  intPk: boolean;
  /** The table's CREATE statement. */
  sql: string;
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

/** The plan of table `name` of `db` (whose CREATE statement is `sql`). */
export function planTable(
  db: DatabaseSync,
  name: string,
  sql: string,
): TablePlan {
  const info = queryRows(
    db,
    `SELECT name, type, pk, dflt_value FROM pragma_table_info(${
      sqlString(name)
    }) ORDER BY cid`,
  );
  const hidden = Number(
    queryRows(
      db,
      `SELECT count(*) FROM pragma_table_xinfo(${
        sqlString(name)
      }) WHERE hidden != 0`,
    )[0]?.[0] ?? 0,
  );
  const columns = info.map((r) => String(r[0]));
  const hasDefault = info.map((r) =>
    r[3] !== null && String(r[3]).toUpperCase() !== "NULL"
  );
  const pkCols = info.filter((r) => Number(r[2]) > 0).sort((a, b) =>
    Number(a[2]) - Number(b[2])
  ).map((r) => String(r[0]));
  let hasRowid = true;
  try {
    db.prepare(`SELECT rowid FROM ${quoteIdent(name)} LIMIT 0`);
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
  const base = {
    name,
    columns,
    sql,
    withoutRowid: !hasRowid,
    hidden,
    hasDefault,
    make: valueMaker(columns),
  };
  if (pkCols.length > 0) {
    return {
      ...base,
      identity: pkCols,
      primaryKey: true,
      select: [...cols, ...(intPk && rowidAlias ? [rowidAlias] : [])].join(
        ", ",
      ),
      order: intPk
        ? quoteIdent(pkCols[0]!)
        : pkCols.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", "),
      keyIdx: pkCols.map((c) => columns.indexOf(c)),
      rowidName: intPk ? rowidAlias : null,
      intPk,
      aliasIdx: intPk ? columns.indexOf(pkCols[0]!) : -1,
    };
  }
  if (rowidAlias !== null) {
    return {
      ...base,
      identity: ["rowid"],
      primaryKey: false,
      select: [...cols, rowidAlias].join(", "),
      order: rowidAlias,
      keyIdx: [n],
      rowidName: rowidAlias,
      intPk: false,
      aliasIdx: -1,
    };
  }
  // No usable identity: rows are identified by their whole value.
  return {
    ...base,
    identity: columns,
    primaryKey: false,
    select: cols.join(", "),
    order: columns.map((c) => `${quoteIdent(c)} COLLATE BINARY`).join(", "),
    keyIdx: columns.map((_, i) => i),
    rowidName: null,
    intPk: false,
    aliasIdx: -1,
  };
}

/**
 * How a `WITHOUT ROWID` table is stored: an index b-tree whose records hold
 * the primary-key columns first (in key order), then the other columns,
 * ordered by the key columns under their collations and directions.
 */
export interface KeyOrder {
  /** Per table column (declaration order): the record field holding it. */
  colField: Int32Array;
  /** Key columns (the first fields of a record). */
  nKey: number;
  /** Per key column: 0 BINARY, 1 NOCASE, 2 RTRIM. */
  coll: Uint8Array;
  /** Per key column: 1 when descending. */
  desc: Uint8Array;
  /** Whether the key order is the snapshot's (every key column BINARY, ascending). */
  binaryAsc: boolean;
}

/** The tables a snapshot observes, in the snapshot reader's order, with their plans. */
export interface PlannedTable {
  name: string;
  rootpage: number;
  plan: TablePlan;
  /** How a `WITHOUT ROWID` table's records are keyed; null: a rowid table. */
  key: KeyOrder | null;
  /**
   * A rowid table identified by a primary key other than its rowid (`TEXT
   * PRIMARY KEY`, composite keys): the key's columns; null otherwise.
   */
  keyCols: number[] | null;
  /**
   * Of such a table: its primary-key index when that lists the key
   * columns in the snapshot's order (the key's columns in order, BINARY,
   * ascending; then the rowid), so the index gives rowids in key order.
   */
  pkIndex?: string | null;
  /** Why the page reader cannot read this table (SQL reads it); undefined: it can. */
  needsSql?: string;
}

const COLLATIONS: Record<string, number> = { BINARY: 0, NOCASE: 1, RTRIM: 2 };

/**
 * The key order of a `WITHOUT ROWID` table, from its primary-key index as
 * SQLite describes it (`pragma_index_xinfo` of the table). Throws
 * PageWalkError when the layout is not the one the page reader compares (a
 * collation other than BINARY, NOCASE and RTRIM, columns missing).
 */
function keyOrder(db: DatabaseSync, plan: TablePlan): KeyOrder {
  const name = plan.name;
  const xs = queryRows(
    db,
    `SELECT seqno, cid, "desc", coll, "key" FROM pragma_index_xinfo(${
      sqlString(name)
    }) ORDER BY seqno`,
  );
  const n = plan.columns.length;
  const colField = new Int32Array(n).fill(-1);
  const keyCols: number[] = [];
  const coll: number[] = [];
  const desc: number[] = [];
  xs.forEach((r, f) => {
    const cid = Number(r[1]);
    if (!(cid >= 0 && cid < n) || colField[cid] !== -1) {
      throw new PageWalkError(`table ${name}: unexpected key layout`);
    }
    colField[cid] = f;
    if (Number(r[4]) === 1) {
      if (keyCols.length !== f) {
        throw new PageWalkError(`table ${name}: unexpected key layout`);
      }
      const c = COLLATIONS[String(r[3] ?? "BINARY").toUpperCase()];
      if (c === undefined) {
        throw new PageWalkError(
          `table ${name}: key collation ${String(r[3])} is not compared here`,
        );
      }
      keyCols.push(cid);
      coll.push(c);
      desc.push(Number(r[2]) ? 1 : 0);
    }
  });
  if (
    xs.length !== n || keyCols.length === 0 ||
    keyCols.length !== plan.keyIdx.length ||
    keyCols.some((c, i) => c !== plan.keyIdx[i])
  ) {
    throw new PageWalkError(`table ${name}: unexpected key layout`);
  }
  return {
    colField,
    nKey: keyCols.length,
    coll: Uint8Array.from(coll),
    desc: Uint8Array.from(desc),
    binaryAsc: coll.every((c) => c === 0) && desc.every((d) => d === 0),
  };
}

/**
 * The primary-key index of a rowid table when its records are the key's
 * columns `keyIdx` in that order, BINARY and ascending, then the rowid;
 * else null.
 */
function pkIndexInKeyOrder(
  db: DatabaseSync,
  table: string,
  keyIdx: readonly number[],
): string | null {
  const name = queryRows(
    db,
    `SELECT name FROM pragma_index_list(${
      sqlString(table)
    }) WHERE origin = 'pk'`,
  )[0]?.[0];
  if (typeof name !== "string") return null;
  const xs = queryRows(
    db,
    `SELECT cid, "desc", coll, "key" FROM pragma_index_xinfo(${
      sqlString(name)
    }) ORDER BY seqno`,
  );
  const n = keyIdx.length;
  const ok = xs.length === n + 1 &&
    keyIdx.every((c, i) =>
      Number(xs[i]![0]) === c && Number(xs[i]![1]) === 0 &&
      String(xs[i]![2] ?? "BINARY").toUpperCase() === "BINARY" &&
      Number(xs[i]![3]) === 1
    ) && Number(xs[n]![0]) === -1 && Number(xs[n]![3]) === 0;
  return ok ? name : null;
}

/** Whether a table is observed as a table of records (not internal, not virtual). */
export function isObserved(t: SchemaRow): boolean {
  return t.type === "table" && !t.name.startsWith("sqlite_") &&
    !/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql);
}

/**
 * Plan every observed table of a schema with SQLite on an empty database
 * holding only the schema's tables (the rows are never given to SQL), in
 * the snapshot's order (by name). A table the page reader cannot read
 * (keys not in rowid order, generated columns) gets why in `needsSql`
 * ({@linkcode planSchema} with `strict` throws PageWalkError instead).
 * Internal tables are left to `readSqliteMeta`.
 */
export function planSchema(
  schema: readonly SchemaRow[],
  strict = true,
): PlannedTable[] {
  const tables = schema.filter(isObserved).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  );
  const db = emptyDatabase();
  try {
    const out: PlannedTable[] = [];
    for (const t of tables) {
      if (!/^\s*CREATE\s+TABLE\b/i.test(t.sql)) {
        throw new PageWalkError(`schema of ${t.name} is no CREATE TABLE`);
      }
      try {
        db.prepare(t.sql).run();
      } catch (e) {
        throw new PageWalkError(
          `schema of ${t.name} not replayable: ${(e as Error).message}`,
        );
      }
      const planned = planOne(db, t);
      if (planned.needsSql !== undefined && strict) {
        throw new PageWalkError(planned.needsSql);
      }
      out.push(planned);
    }
    return out;
  } finally {
    db.close();
  }
}

function planOne(db: DatabaseSync, t: SchemaRow): PlannedTable {
  const plan = planTable(db, t.name, t.sql);
  const base = { name: t.name, rootpage: t.rootpage, plan, keyCols: null };
  const sqlOnly = (why: string): PlannedTable => ({
    ...base,
    key: null,
    needsSql: why,
  });
  if (t.rootpage < 1) return sqlOnly(`table ${t.name} has no b-tree`);
  if (plan.hidden > 0) return sqlOnly(`table ${t.name} has generated columns`);
  if (plan.withoutRowid) {
    try {
      return { ...base, key: keyOrder(db, plan) };
    } catch (e) {
      if (!(e instanceof PageWalkError)) throw e;
      return sqlOnly(e.message);
    }
  }
  // `INTEGER PRIMARY KEY DESC` is no rowid alias: the key is stored,
  // with an index of its own.
  const alias = plan.intPk &&
    Number(
        queryRows(
          db,
          `SELECT count(*) FROM pragma_index_list(${
            sqlString(t.name)
          }) WHERE origin = 'pk'`,
        )[0]?.[0] ?? 0,
      ) === 0;
  if (plan.primaryKey && !alias) {
    // Stored by rowid, identified by its primary key.
    return {
      ...base,
      plan: { ...plan, aliasIdx: -1 },
      key: null,
      keyCols: plan.keyIdx,
      pkIndex: pkIndexInKeyOrder(db, t.name, plan.keyIdx),
    };
  }
  if (plan.rowidName === null) {
    return sqlOnly(
      `table ${t.name} has no rowid name (rowid, _rowid_ and oid are all columns)`,
    );
  }
  return { ...base, key: null };
}

/**
 * Decodes rows of one table as a snapshot holds them (masks applied),
 * reusing its header arrays and the view of the page memory the payloads
 * lie in: a stream decodes millions of rows.
 */
export class RowDecoder {
  #plan: TablePlan;
  #masks: readonly MaskRule[] | undefined;
  #colField: Int32Array | null;
  #n: number;
  #header: RecordHeader;
  #fields: unknown[];
  #buffer: ArrayBufferLike | null = null;
  #whole: Uint8Array = new Uint8Array();
  #view: DataView = new DataView(new ArrayBuffer(0));
  #text = new TextWindow();

  /** `colField`: per column, its record field (a `WITHOUT ROWID` table's records hold the key first). */
  constructor(
    plan: TablePlan,
    masks: readonly MaskRule[] | undefined,
    colField: Int32Array | null = null,
  ) {
    this.#plan = plan;
    this.#masks = masks;
    this.#colField = colField;
    this.#n = plan.columns.length;
    this.#header = new RecordHeader(this.#n);
    this.#fields = new Array(this.#n);
  }

  /** The row of the record `p` (its rowid given for an `INTEGER PRIMARY KEY`). */
  decode(p: Uint8Array, rowid: number): Record<string, unknown> {
    return this.decodeAt(p, 0, p.length, rowid, null);
  }

  /**
   * The row of the record at `buf[at, at + size)`. `epoch`: a number that
   * changes whenever the memory of `buf` may have (a page loaded into it):
   * ASCII text is then sliced from one decoding of its 4 KiB window; null
   * decodes every field alone.
   */
  decodeAt(
    buf: Uint8Array,
    at: number,
    size: number,
    rowid: number,
    epoch: number | null,
  ): Record<string, unknown> {
    if (buf.buffer !== this.#buffer) {
      this.#buffer = buf.buffer;
      this.#whole = new Uint8Array(buf.buffer);
      this.#view = new DataView(buf.buffer);
    }
    const plan = this.#plan;
    const n = this.#n;
    const h = this.#header;
    const whole = this.#whole;
    const view = this.#view;
    let text: TextWindow | null = null;
    if (epoch !== null) {
      text = this.#text;
      text.at(buf, epoch);
    }
    const count = h.parse(whole, buf.byteOffset + at, size);
    if (count < 0) throw new PageWalkError("record needs SQL");
    const { types, offs } = h;
    const fields = this.#fields;
    const cf = this.#colField;
    for (let i = 0; i < n; i++) {
      const f = cf === null ? i : cf[i]!;
      if (f < count) {
        fields[i] = valueAt(whole, view, types[f]!, offs[f]!, text);
      } else if (plan.hasDefault[i]) {
        throw new PageWalkError("short record with default");
      } else fields[i] = null;
    }
    if (plan.aliasIdx !== -1) {
      if (fields[plan.aliasIdx] !== null) {
        throw new PageWalkError("stored INTEGER PRIMARY KEY value");
      }
      fields[plan.aliasIdx] = rowid;
    }
    const value = plan.make(fields);
    return this.#masks ? maskRow(value, this.#masks) : value;
  }
}

/** A row's value object, as a snapshot holds it (masks applied). */
export function rowValue(
  payload: Uint8Array,
  rowid: number,
  plan: TablePlan,
  masks: readonly MaskRule[] | undefined,
  colField: Int32Array | null = null,
): Record<string, unknown> {
  return new RowDecoder(plan, masks, colField).decode(payload, rowid);
}
