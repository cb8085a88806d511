/**
 * A seed is data: what a SQL seed may not do, found before it runs. Pure.
 *
 * A PostgreSQL seed is sent to the server through the protocol (never to
 * `psql`), so a psql meta-command (`\!`, `\o |cmd`, `\copy`, any backslash
 * outside a literal) is refused here with its line rather than left to a
 * syntax error, and so is `COPY` (a data block from stdin has no place in
 * the protocol; to or from a program or a server file it is refused by the
 * role the seed runs as anyway). A SQLite seed may not `ATTACH`, `VACUUM
 * INTO` or call `load_extension` (each reaches a file outside the seeded
 * database); the engine's authorizer refuses them too, so a form this scan
 * misses still fails.
 *
 * Keywords are found outside comments, string literals, quoted identifiers
 * and (PostgreSQL) dollar-quoted bodies, whatever their case.
 *
 * @module
 */

/** Which SQL a seed is written in. */
export type SeedDialect = "postgres" | "sqlite";

/** Why a seed is refused: the 1-based line and what is not allowed. */
export interface SeedRefusal {
  line: number;
  /** e.g. "ATTACH is not allowed in a seed". */
  reason: string;
}

/** A word or a mark outside every literal and comment, with its line. */
interface Token {
  text: string;
  line: number;
  /** Its offset in the script. */
  at: number;
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/**
 * The tokens of `sql` that matter here: words (upper-cased), `;` and, in
 * PostgreSQL, a backslash (the start of a psql meta-command).
 */
function* tokens(sql: string, dialect: SeedDialect): Generator<Token> {
  let i = 0;
  let line = 1;
  /** Skip to just past `end`, counting lines; to the end when missing. */
  const skipPast = (end: string, from: number): number => {
    const j = sql.indexOf(end, from);
    const stop = j < 0 ? sql.length : j + end.length;
    for (let k = i; k < stop; k++) if (sql[k] === "\n") line++;
    return stop;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "\n") {
      line++;
      i++;
    } else if (c === "-" && next === "-") {
      const eol = sql.indexOf("\n", i);
      i = eol < 0 ? sql.length : eol;
    } else if (c === "/" && next === "*") i = skipBlockComment();
    else if (c === "'" || c === '"' || (dialect === "sqlite" && c === "`")) {
      i = skipQuoted(c, false);
    } else if (dialect === "sqlite" && c === "[") i = skipPast("]", i);
    else if (
      dialect === "postgres" && c === "$" &&
      DOLLAR_TAG.test(sql.slice(i, i + 64))
    ) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 64))![0];
      i = skipPast(tag, i + tag.length);
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < sql.length && WORD_PART.test(sql[j]!)) j++;
      const word = sql.slice(i, j);
      // E'…' and U&'…': the string belongs to the word before it.
      if (dialect === "postgres" && sql[j] === "'" && /^[eE]$/.test(word)) {
        i = j;
        i = skipQuoted("'", true);
        continue;
      }
      yield { text: word.toUpperCase(), line, at: i };
      i = j;
    } else if (c === ";" || (dialect === "postgres" && c === "\\")) {
      yield { text: c, line, at: i };
      i++;
    } else i++;
  }

  /** A quoted literal or identifier ending at an undoubled `q`. */
  function skipQuoted(q: string, backslashEscapes: boolean): number {
    let j = i + 1;
    while (j < sql.length) {
      const d = sql[j]!;
      if (d === "\n") line++;
      if (backslashEscapes && d === "\\") {
        if (sql[j + 1] === "\n") line++;
        j += 2;
      } else if (d === q && sql[j + 1] === q) j += 2;
      else if (d === q) return j + 1;
      else j++;
    }
    return j;
  }

  /** A block comment (nested in PostgreSQL, not in SQLite). */
  function skipBlockComment(): number {
    if (dialect === "sqlite") return skipPast("*/", i + 2);
    let depth = 0;
    let j = i;
    while (j < sql.length) {
      if (sql[j] === "/" && sql[j + 1] === "*") {
        depth++;
        j += 2;
      } else if (sql[j] === "*" && sql[j + 1] === "/") {
        depth--;
        j += 2;
        if (depth === 0) break;
      } else {
        if (sql[j] === "\n") line++;
        j++;
      }
    }
    return j;
  }
}

/** The statements of a token stream: its words and marks up to each `;`. */
function* statements(sql: string, dialect: SeedDialect): Generator<Token[]> {
  let current: Token[] = [];
  for (const t of tokens(sql, dialect)) {
    if (t.text === ";") {
      if (current.length) yield current;
      current = [];
    } else current.push(t);
  }
  if (current.length) yield current;
}

function postgresRefusal(statement: Token[], sql: string): SeedRefusal | null {
  const slash = statement.find((t) => t.text === "\\");
  if (slash !== undefined) {
    const meta = /^\\[^\s\\]*/.exec(sql.slice(slash.at, slash.at + 40))![0];
    return {
      line: slash.line,
      reason:
        `psql meta-command ${meta} is not allowed in a seed (a seed is SQL, sent to PostgreSQL as is)`,
    };
  }
  const first = statement[0]!;
  if (first.text === "COPY") {
    return {
      line: first.line,
      reason:
        "COPY is not allowed in a seed (no data blocks, programs or server files: use INSERT)",
    };
  }
  return null;
}

function sqliteRefusal(statement: Token[]): SeedRefusal | null {
  let words = statement;
  if (words[0]?.text === "EXPLAIN") {
    words = words.slice(words[1]?.text === "QUERY" ? 3 : 1);
  }
  const first = words[0];
  if (first?.text === "ATTACH") {
    return { line: first.line, reason: "ATTACH is not allowed in a seed" };
  }
  if (first?.text === "VACUUM" && words.some((w) => w.text === "INTO")) {
    return { line: first.line, reason: "VACUUM INTO is not allowed in a seed" };
  }
  const load = statement.find((w) => w.text === "LOAD_EXTENSION");
  if (load !== undefined) {
    return {
      line: load.line,
      reason: "load_extension is not allowed in a seed",
    };
  }
  return null;
}

/**
 * The first thing in a SQL seed that a seed may not do, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   seedRefusal("CREATE TABLE t (x);\n/* hi *\/ attach 'x.db' AS x;", "sqlite"),
 *   { line: 2, reason: "ATTACH is not allowed in a seed" },
 * );
 * assert.equal(seedRefusal("INSERT INTO t VALUES ('\\! id');", "postgres"), null);
 * ```
 */
export function seedRefusal(
  sql: string,
  dialect: SeedDialect,
): SeedRefusal | null {
  for (const s of statements(sql, dialect)) {
    const r = dialect === "postgres"
      ? postgresRefusal(s, sql)
      : sqliteRefusal(s);
    if (r !== null) return r;
  }
  return null;
}

/**
 * A seed's path as an error message shows it: relative to `cwd` when it is
 * below it, else as given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(shownSeedPath("/w/fixtures/x/seed.sql", "/w"), "fixtures/x/seed.sql");
 * assert.equal(shownSeedPath("/elsewhere/seed.sql", "/w"), "/elsewhere/seed.sql");
 * ```
 */
export function shownSeedPath(path: string, cwd: string): string {
  const base = cwd.endsWith("/") ? cwd : `${cwd}/`;
  return path.startsWith(base) ? path.slice(base.length) : path;
}
