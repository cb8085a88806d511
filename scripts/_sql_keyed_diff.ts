/**
 * Keyed tables diffed by SQLite itself (`node:sqlite`), the alternative to
 * verity's keyed page code that `bench_state_delta.ts --sql` times side by
 * side with it and with `sqldiff`. Both files are opened immutable and
 * read-only, the before side `ATTACH`ed (which Deno allows only under
 * `--allow-all`); per table, the rows of each side not found whole on the
 * other (`EXCEPT`, every column `COLLATE BINARY`, so a NOCASE key changing
 * case is a row removed and one added), merged in SQL from both tables'
 * scans (a `WITHOUT ROWID` table in its key's order; a rowid table in
 * rowid order, its few differing rows then sorted by key), are read into
 * JS and matched by key, and matched rows' fields compared as a snapshot
 * delta compares them. Every record kept whole (what `rows: true` keeps).
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { compareKeys, sortRecords, valuesEqual } from "../lib/state/keys.ts";
import type { RecordFieldChange } from "../lib/state/delta.ts";
import type { StateRecord } from "../lib/state/types.ts";
import { queryRows, quoteIdent, sqlString } from "../adapters/sqlite/sql.ts";

/** A value from SQL as a snapshot holds it (see `valueAt` of format.ts). */
function encodeValue(v: unknown): unknown {
  if (v === null || typeof v === "string") return v;
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : { $real: String(v) };
  }
  if (typeof v === "bigint") {
    return Number.isSafeInteger(Number(v)) ? Number(v) : { $int: v.toString() };
  }
  if (v instanceof Uint8Array) return { $bytes: v.toBase64() };
  return v;
}

/** What one table's SQL diff found. */
export interface SqlTableDiff {
  table: string;
  added: string[];
  removed: string[];
  changed: { key: string; fields: RecordFieldChange[] }[];
  put: StateRecord[];
  was: StateRecord[];
}

function uri(path: string): string {
  const u = new URL("file://");
  u.pathname = path;
  return u.href + "?immutable=1";
}

/** The keyed tables' differences from `before` to `after` (database files). */
export function sqlKeyedDiff(before: string, after: string): SqlTableDiff[] {
  const db = new DatabaseSync(new URL(uri(after)), { readOnly: true });
  try {
    db.exec(`ATTACH ${sqlString(uri(before))} AS b`);
    const tables = queryRows(
      db,
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    ).map((r) => String(r[0]));
    return tables.map((t) => diffTable(db, t));
  } finally {
    db.close();
  }
}

function diffTable(db: DatabaseSync, table: string): SqlTableDiff {
  const info = queryRows(
    db,
    `SELECT name, pk FROM pragma_table_info(${sqlString(table)}) ORDER BY cid`,
  );
  const columns = info.map((r) => String(r[0]));
  const keyIdx = info.map((r, i) => [Number(r[1]), i]).filter(([pk]) => pk! > 0)
    .sort((x, y) => x[0]! - y[0]!).map(([, i]) => i!);
  let rowid = true;
  try {
    db.prepare(`SELECT rowid FROM main.${quoteIdent(table)} LIMIT 0`);
  } catch {
    rowid = false;
  }
  const cols = columns.map((c) => `${quoteIdent(c)} COLLATE BINARY`);
  const sel = (s: string) =>
    `SELECT ${rowid ? "rowid, " : ""}${cols.join(", ")} FROM ${s}.${
      quoteIdent(table)
    }`;
  const order = rowid ? "1" : keyIdx.map((i) => String(i + 1)).join(", ");
  const side = (x: string, y: string): StateRecord[] => {
    const out: StateRecord[] = [];
    for (
      const row of queryRows(db, `${sel(x)} EXCEPT ${sel(y)} ORDER BY ${order}`)
    ) {
      const vals = rowid ? row.slice(1) : row;
      for (let i = 0; i < vals.length; i++) {
        const v = vals[i];
        if (!(v === null || typeof v === "string" || typeof v === "number")) {
          vals[i] = encodeValue(v);
        }
      }
      const key = "[" + keyIdx.map((i) => JSON.stringify(vals[i])).join(",") +
        "]";
      const value: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) value[columns[i]!] = vals[i];
      out.push({ key, value });
    }
    // Found in rowid order: put in key order (the differing rows only).
    return rowid ? sortRecords(out) : out;
  };
  const was = side("b", "main");
  const put = side("main", "b");
  const d: SqlTableDiff = {
    table,
    added: [],
    removed: [],
    changed: [],
    put: [],
    was: [],
  };
  let i = 0;
  let j = 0;
  while (i < was.length || j < put.length) {
    const x = was[i];
    const y = put[j];
    const c = x === undefined
      ? 1
      : y === undefined
      ? -1
      : x.key === y.key
      ? 0
      : compareKeys(x.key, y.key);
    if (c === 0) {
      const fields: RecordFieldChange[] = [];
      for (const col of columns) {
        const bv = x!.value[col], av = y!.value[col];
        if (bv === av || valuesEqual(bv, av)) continue;
        fields.push({ field: col, before: bv, after: av, lossy: bv !== null });
      }
      if (fields.length > 0) {
        d.changed.push({ key: x!.key, fields });
        d.was.push(x!);
        d.put.push(y!);
      }
      i++;
      j++;
    } else if (c < 0) {
      d.removed.push(x!.key);
      d.was.push(x!);
      i++;
    } else {
      d.added.push(y!.key);
      d.put.push(y!);
      j++;
    }
  }
  return d;
}
