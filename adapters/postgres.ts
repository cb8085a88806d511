/**
 * The postgres adapter: one database of a real PostgreSQL server turned into
 * typed, sorted records, one region per user table and per sequence.
 *
 * Every schema but the system ones (`pg_catalog`, `information_schema`,
 * `pg_toast`, temporary schemas) is observed. Regions are named
 * `schema.table`. Rows are keyed by the primary key, else by a key the
 * definition declares (`key = { "public.log" = ["id"] }`); a table with
 * neither is observed keyed by its whole row and reported as a problem
 * (a seeded table without one is refused when the template is seeded).
 * A sequence is one record `["sequence"]` with `last_value` and
 * `is_called`. Each user schema's catalog (its views and materialized
 * views, functions and procedures, aggregates, triggers and rules on its
 * tables, indexes, row-level security flags and policies, and comments on
 * its objects, without those an extension owns) is one more region,
 * `schema.@catalog` ({@linkcode CATALOG_REGION}), one record per object
 * keyed `[kind, name]` with its `definition` as PostgreSQL prints it, so a
 * server that creates, replaces or drops a view, function, trigger, index
 * or policy changes observed state. What lies outside every schema (the
 * database's settings and comment, large objects, casts) is the region
 * `@database` ({@linkcode DATABASE_REGION}). Values are typed from their text form (see `pg_values.ts`);
 * the server sorts by the key (`COLLATE "C"` for text, the order
 * `compareKeys` uses), and the order is checked here: anything out of order
 * is re-sorted.
 *
 * The adapter only issues `SELECT`s through the {@linkcode PgQuery} it is
 * given; the caller runs them in a read-only transaction as a role that can
 * only read and bypasses row-level security, with `search_path` set to
 * `pg_catalog` (see `lib/state_io/postgres_cluster.ts`).
 *
 * @module
 */
import {
  compareValues,
  dedupeSorted,
  makeKey,
  sortRecords,
} from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import { pgConverter, quoteIdent } from "./pg_values.ts";

/** Runs one query and returns its rows as text values (null for NULL). */
export type PgQuery = (sql: string) => Promise<(string | null)[][]>;

/** One table's or sequence's records. */
export interface PostgresTable {
  /** `schema.table`. */
  name: string;
  kind: "table" | "sequence" | "catalog";
  /** Column names in declaration order. */
  columns: string[];
  /** Key columns: primary key, declared key, or every column. */
  identity: string[];
  /** Where the identity comes from. */
  keyedBy:
    | "primary_key"
    | "declared_key"
    | "whole_row"
    | "sequence"
    | "catalog";
  records: StateRecord[];
}

/** What the adapter saw in one database. */
export interface PostgresObservation {
  tables: PostgresTable[];
  problems: string[];
}

/** Options of {@linkcode readPostgres}. */
export interface ReadPostgresOptions {
  /** Declared keys: region (`schema.table`) -> column names. @default {} */
  keys?: Readonly<Record<string, readonly string[]>>;
  /** Label used in problem messages. @default "database" */
  label?: string;
}

/** The catalog region's name within a schema: `public.@catalog`. */
export const CATALOG_REGION = "@catalog";

/** The database-level region's name: `@database` (see {@linkcode readDatabase}). */
export const DATABASE_REGION = "@database";

/** The alias of the table being read (see `readTable`). */
const ALIAS = "verity_t";

const SYSTEM_SCHEMAS =
  "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp_%'";

interface Column {
  name: string;
  typname: string;
  collatable: boolean;
  notNull: boolean;
}

/**
 * The relations to observe: ordinary tables (`r`) and sequences (`S`) in
 * user schemas, sorted by qualified name.
 */
export async function listRelations(
  query: PgQuery,
): Promise<{ oid: string; schema: string; name: string; kind: string }[]> {
  const rows = await query(
    `SELECT c.oid::text, n.nspname, c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'S') AND ${SYSTEM_SCHEMAS} ORDER BY n.nspname COLLATE "C", c.relname COLLATE "C"`,
  );
  return rows.map((r) => ({
    oid: r[0]!,
    schema: r[1]!,
    name: r[2]!,
    kind: r[3]!,
  }));
}

/** Every user table's columns (domains resolved to their base type), by table oid. */
async function columnsByTable(query: PgQuery): Promise<Map<string, Column[]>> {
  const rows = await query(
    `SELECT a.attrelid::text, a.attname, bt.typname, (bt.typcollation <> 0)::text, a.attnotnull::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END WHERE c.relkind = 'r' AND ${SYSTEM_SCHEMAS} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum`,
  );
  const out = new Map<string, Column[]>();
  for (const r of rows) {
    const list = out.get(r[0]!) ?? [];
    list.push({
      name: r[1]!,
      typname: r[2]!,
      collatable: r[3] === "true",
      notNull: r[4] === "true",
    });
    out.set(r[0]!, list);
  }
  return out;
}

/** Every user table's primary key columns in key order, by table oid. */
async function primaryKeys(query: PgQuery): Promise<Map<string, string[]>> {
  const rows = await query(
    `SELECT i.indrelid::text, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum WHERE i.indisprimary AND ${SYSTEM_SCHEMAS} ORDER BY i.indrelid, k.ord`,
  );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r[0]!) ?? [];
    list.push(r[1]!);
    out.set(r[0]!, list);
  }
  return out;
}

/** Objects an extension owns (`pg_depend` deptype `e`) are its, not the server's. */
const NOT_EXTENSION = (cls: string, oid: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${cls}'::regclass AND d.objid = ${oid} AND d.deptype = 'e')`;

/**
 * The database's owner as the observer names it: a session's role has a
 * name of its own per session, so a policy naming it reads the same in
 * every session.
 */
const OWNER_NAME = "<database owner>";

/** SQL: the current database's owner (an oid). */
const DB_OWNER =
  "(SELECT d.datdba FROM pg_database d WHERE d.datname = current_database())";

/**
 * Every user schema's catalog region (see the module doc): views,
 * materialized views, functions, procedures, aggregates, triggers, rules,
 * indexes, row-level security policies and flags, and comments on the
 * schema's objects, one record per object keyed `[kind, name]`, sorted by
 * schema.
 */
export async function readCatalog(query: PgQuery): Promise<PostgresTable[]> {
  const schemas = await query(
    `SELECT n.nspname FROM pg_namespace n WHERE ${SYSTEM_SCHEMAS} ORDER BY n.nspname COLLATE "C"`,
  );
  const rows = [
    ...await query(
      `SELECT n.nspname, CASE c.relkind WHEN 'v' THEN 'view' ELSE 'materialized_view' END, c.relname, pg_get_viewdef(c.oid, true) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('v', 'm') AND ${SYSTEM_SCHEMAS} AND ${
        NOT_EXTENSION("pg_class", "c.oid")
      }`,
    ),
    ...await query(
      `SELECT n.nspname, CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'f' THEN 'function' WHEN 'a' THEN 'aggregate' ELSE 'window_function' END, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) ELSE 'RETURNS ' || pg_get_function_result(p.oid) END FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${SYSTEM_SCHEMAS} AND ${
        NOT_EXTENSION("pg_proc", "p.oid")
      }`,
    ),
    ...await query(
      `SELECT n.nspname, 'trigger', c.relname || '.' || t.tgname, pg_get_triggerdef(t.oid, true) || CASE t.tgenabled WHEN 'D' THEN ' (DISABLED)' ELSE '' END FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal AND ${SYSTEM_SCHEMAS}`,
    ),
    // Rules other than a view's own (`_RETURN`): `DO INSTEAD NOTHING` on
    // INSERT makes writes vanish.
    ...await query(
      `SELECT n.nspname, 'rule', c.relname || '.' || r.rulename, pg_get_ruledef(r.oid, true) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE r.rulename <> '_RETURN' AND ${SYSTEM_SCHEMAS}`,
    ),
    // Indexes (plain and partitioned), primary keys' included.
    ...await query(
      `SELECT n.nspname, 'index', c.relname, pg_get_indexdef(c.oid) || CASE WHEN i.indisvalid THEN '' ELSE ' (INVALID)' END FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('i', 'I') AND ${SYSTEM_SCHEMAS} AND ${
        NOT_EXTENSION("pg_class", "c.oid")
      }`,
    ),
    // Row-level security: a table's flags, and every policy with its roles.
    ...await query(
      `SELECT n.nspname, 'row_security', c.relname, concat_ws(', ', CASE WHEN c.relrowsecurity THEN 'enabled' END, CASE WHEN c.relforcerowsecurity THEN 'forced' END) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE (c.relrowsecurity OR c.relforcerowsecurity) AND ${SYSTEM_SCHEMAS}`,
    ),
    ...await query(
      `SELECT n.nspname, 'policy', c.relname || '.' || p.polname, 'AS ' || CASE WHEN p.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END || ' FOR ' || CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END || ' TO ' || array_to_string(ARRAY(SELECT q.name FROM (SELECT CASE WHEN r.oid = 0 THEN 'PUBLIC' WHEN r.oid = ${DB_OWNER} THEN '${OWNER_NAME}' ELSE pg_get_userbyid(r.oid)::text END AS name FROM unnest(p.polroles) AS r(oid)) q ORDER BY q.name COLLATE "C"), ', ') || COALESCE(' USING (' || pg_get_expr(p.polqual, p.polrelid) || ')', '') || COALESCE(' WITH CHECK (' || pg_get_expr(p.polwithcheck, p.polrelid) || ')', '') FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${SYSTEM_SCHEMAS}`,
    ),
    // Comments on the schema's objects (tables, columns, functions, ...).
    ...await query(
      `SELECT o.schema, 'comment', o.type || ' ' || o.identity, d.description FROM pg_description d CROSS JOIN LATERAL pg_identify_object(d.classoid, d.objoid, d.objsubid) o JOIN pg_namespace n ON n.nspname = o.schema WHERE d.objoid >= ${FIRST_NORMAL_OID} AND ${SYSTEM_SCHEMAS}`,
    ),
  ];
  const bySchema = new Map<string, StateRecord[]>(
    schemas.map((r) => [r[0]!, []]),
  );
  for (const [schema, kind, name, definition] of rows) {
    bySchema.get(schema!)?.push({
      key: makeKey([kind!, name!]),
      value: { definition: definition ?? null },
    });
  }
  return [...bySchema].map(([schema, records]) => ({
    name: `${schema}.${CATALOG_REGION}`,
    kind: "catalog" as const,
    columns: ["definition"],
    identity: [],
    keyedBy: "catalog" as const,
    records: sortRecords(records),
  }));
}

/** Objects with lower oids were made by `initdb` (`FirstNormalObjectId`). */
const FIRST_NORMAL_OID = 16384;

/**
 * The database-level region ({@linkcode DATABASE_REGION}): state outside
 * every schema, one record per object keyed `[kind, ...name]`:
 * - `["setting", scope, name]`: `ALTER DATABASE <this> SET` (scope
 *   `database`), `ALTER ROLE <owner> IN DATABASE <this> SET`
 *   (`owner_in_database`) and `ALTER ROLE <owner> SET` (`owner`);
 * - `["comment", "database"]` (`COMMENT ON DATABASE`) and
 *   `["comment", "<type> <identity>"]` for comments on objects outside every
 *   schema (user schemas and `public` themselves, extensions, large
 *   objects, ...; the system schemas' own comments are left out);
 * - `["large_object", oid]`: its size and the SHA-256 of its pages;
 * - `["cast", "<source> AS <target>"]`: user-defined casts (a cast to `text`
 *   of a seeded type would change how its values read).
 *
 * @example
 * ```ts ignore
 * const db = await readDatabase(query);
 * // after `ALTER DATABASE <own> SET work_mem = '8MB'`:
 * // { key: '["setting","database","work_mem"]', value: { definition: "8MB" } }
 * ```
 */
export async function readDatabase(query: PgQuery): Promise<PostgresTable> {
  const rows = [
    ...await query(
      `SELECT 'setting', CASE WHEN s.setdatabase = 0 THEN 'owner' WHEN s.setrole = 0 THEN 'database' ELSE 'owner_in_database' END, split_part(c.setting, '=', 1), substr(c.setting, length(split_part(c.setting, '=', 1)) + 2) FROM pg_db_role_setting s CROSS JOIN LATERAL unnest(s.setconfig) AS c(setting) WHERE (s.setdatabase = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()) AND s.setrole IN (0, ${DB_OWNER})) OR (s.setdatabase = 0 AND s.setrole = ${DB_OWNER})`,
    ),
    ...await query(
      `SELECT 'comment', 'database', NULL, d.description FROM pg_shdescription d WHERE d.classoid = 'pg_catalog.pg_database'::regclass AND d.objoid = (SELECT x.oid FROM pg_database x WHERE x.datname = current_database())`,
    ),
    ...await query(
      `SELECT 'comment', o.type || ' ' || o.identity, NULL, d.description FROM pg_description d CROSS JOIN LATERAL pg_identify_object(d.classoid, d.objoid, d.objsubid) o WHERE o.schema IS NULL AND (d.objoid >= ${FIRST_NORMAL_OID} OR (d.classoid = 'pg_catalog.pg_namespace'::regclass AND o.identity NOT IN ('pg_catalog', 'pg_toast', 'information_schema')))`,
    ),
    ...await query(
      `SELECT 'large_object', m.oid::text, NULL, 'size ' || COALESCE((SELECT p.pageno::int8 * 2048 + length(p.data) FROM pg_largeobject p WHERE p.loid = m.oid ORDER BY p.pageno DESC LIMIT 1), 0) || ' sha256 ' || encode(sha256(COALESCE((SELECT string_agg(int4send(p.pageno) || p.data, ''::bytea ORDER BY p.pageno) FROM pg_largeobject p WHERE p.loid = m.oid), ''::bytea)), 'hex') FROM pg_largeobject_metadata m`,
    ),
    ...await query(
      `SELECT 'cast', format_type(c.castsource, NULL) || ' AS ' || format_type(c.casttarget, NULL), NULL, CASE c.castmethod WHEN 'f' THEN 'WITH FUNCTION ' || c.castfunc::regprocedure::text WHEN 'b' THEN 'WITHOUT FUNCTION' ELSE 'WITH INOUT' END || CASE c.castcontext WHEN 'i' THEN ' AS IMPLICIT' WHEN 'a' THEN ' AS ASSIGNMENT' ELSE '' END FROM pg_cast c WHERE c.oid >= ${FIRST_NORMAL_OID} AND ${
        NOT_EXTENSION("pg_cast", "c.oid")
      }`,
    ),
  ];
  const records = rows.map(([kind, a, b, definition]) => ({
    key: makeKey(b === null ? [kind!, a!] : [kind!, a!, b!]),
    value: { definition: definition ?? null },
  }));
  return {
    name: DATABASE_REGION,
    kind: "catalog",
    columns: ["definition"],
    identity: [],
    keyedBy: "catalog",
    records: sortRecords(records),
  };
}

/**
 * Read every user table and sequence of the database behind `query`.
 * Never throws for one unreadable table: it becomes a problem line.
 *
 * @example
 * ```ts ignore
 * const obs = await readPostgres((sql) => client.query({ text: sql, rowMode: "array" }).then((r) => r.rows));
 * ```
 */
export async function readPostgres(
  query: PgQuery,
  options: ReadPostgresOptions = {},
): Promise<PostgresObservation> {
  const label = options.label ?? "database";
  const keys = options.keys ?? {};
  const tables: PostgresTable[] = [];
  const problems: string[] = [];
  const relations = await listRelations(query);
  const columns = await columnsByTable(query);
  const keysOf = await primaryKeys(query);
  for (const rel of relations) {
    const name = `${rel.schema}.${rel.name}`;
    const qualified = `${quoteIdent(rel.schema)}.${quoteIdent(rel.name)}`;
    try {
      if (rel.kind === "S") {
        const rows = await query(
          `SELECT last_value::text, is_called::text FROM ${qualified}`,
        );
        const r = rows[0] ?? [null, null];
        tables.push({
          name,
          kind: "sequence",
          columns: ["last_value", "is_called"],
          identity: [],
          keyedBy: "sequence",
          records: [{
            key: makeKey(["sequence"]),
            value: {
              last_value: r[0] === null ? null : pgConverter("int8")(r[0]!),
              is_called: r[1] === "true",
            },
          }],
        });
        continue;
      }
      tables.push(
        await readTable(
          query,
          { name, qualified },
          columns.get(rel.oid) ?? [],
          keysOf.get(rel.oid) ?? [],
          keys,
        ),
      );
      const t = tables[tables.length - 1]!;
      if (t.keyedBy === "whole_row") {
        problems.push(
          `${label}: table ${name} has no primary key and no declared key; rows are keyed by their whole value`,
        );
      }
    } catch (e) {
      problems.push(`${label}: ${name}: ${(e as Error).message}`);
    }
  }
  try {
    tables.push(...await readCatalog(query));
  } catch (e) {
    problems.push(
      `${label}: the schema catalog (views, functions, triggers, indexes, policies, comments) could not be read: ${
        (e as Error).message
      }`,
    );
  }
  try {
    tables.push(await readDatabase(query));
  } catch (e) {
    problems.push(
      `${label}: the database-level state (settings, comments, large objects, casts) could not be read: ${
        (e as Error).message
      }`,
    );
  }
  return { tables, problems };
}

async function readTable(
  query: PgQuery,
  table: { name: string; qualified: string },
  columns: Column[],
  pk: string[],
  keys: Readonly<Record<string, readonly string[]>>,
): Promise<PostgresTable> {
  const { name, qualified } = table;
  const declared = keys[name];
  let identity: string[];
  let keyedBy: PostgresTable["keyedBy"];
  if (pk.length > 0) {
    identity = pk;
    keyedBy = "primary_key";
  } else if (declared && declared.length > 0) {
    for (const k of declared) {
      if (!columns.some((c) => c.name === k)) {
        throw new RangeError(
          `declared key column ${JSON.stringify(k)} is not a column (columns: ${
            columns.map((c) => c.name).join(", ")
          })`,
        );
      }
    }
    identity = [...declared];
    keyedBy = "declared_key";
  } else {
    identity = columns.map((c) => c.name);
    keyedBy = "whole_row";
  }
  const converters = columns.map((c) => pgConverter(c.typname));
  const at = identity.map((k) => columns.findIndex((c) => c.name === k));
  const select = columns.length === 0
    ? "SELECT"
    : `SELECT ${columns.map((c) => `${quoteIdent(c.name)}::text`).join(", ")}`;
  // Key columns are named through the table's alias: a bare name would be
  // the output column (`id::text`), sorting integers as text. NULLS FIRST
  // (the key order's) only where a NULL can be: a primary key's index then
  // gives the order without a sort.
  const order = identity.length === 0 ? "" : ` ORDER BY ${
    at.map((i) => {
      const c = columns[i]!;
      return `${ALIAS}.${quoteIdent(c.name)}${
        c.collatable ? ' COLLATE "C"' : ""
      }${c.notNull ? "" : " NULLS FIRST"}`;
    }).join(", ")
  }`;
  const sql = `${select} FROM ${qualified} AS ${ALIAS}${order}`;
  const records: StateRecord[] = [];
  let sorted = true;
  let prev: unknown[] | null = null;
  for (const row of await query(sql)) {
    const value: Record<string, unknown> = {};
    columns.forEach((c, i) => {
      const t = row[i];
      value[c.name] = t === null || t === undefined ? null : converters[i]!(t);
    });
    const parts = at.map((i) => value[columns[i]!.name]);
    if (sorted && prev !== null && compareValues(prev, parts) > 0) {
      sorted = false;
    }
    prev = parts;
    records.push({ key: makeKey(parts), value });
  }
  return {
    name,
    kind: "table",
    columns: columns.map((c) => c.name),
    identity,
    keyedBy,
    records: sorted ? dedupeSorted(records) : sortRecords(records),
  };
}
