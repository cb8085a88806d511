/**
 * The strict reader under `parse.ts`: typed accessors over parsed TOML that
 * throw a `DefinitionError` naming the file and key path. Pure.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import { PLACEHOLDER_RE, PLACEHOLDERS } from "./placeholders.ts";
import { TODO } from "./types.ts";

/** What {@linkcode Reader.optional} reads a value as. */
interface Reads {
  string: string;
  nonEmptyString: string;
  strings: string[];
  number: number;
  table: Record<string, unknown>;
}

/** A typed reader over the parsed TOML that names the key path in every error. */
export class Reader {
  readonly file: string;
  constructor(file: string) {
    this.file = file;
  }
  fail(path: string, msg: string): never {
    throw new DefinitionError(this.file, path, msg);
  }
  table(v: unknown, path: string): Record<string, unknown> {
    if (
      v === null || typeof v !== "object" || Array.isArray(v) ||
      v instanceof Date
    ) {
      this.fail(path, `expected a table, got ${describe(v)}`);
    }
    return v as Record<string, unknown>;
  }
  keys(
    t: Record<string, unknown>,
    path: string,
    allowed: readonly string[],
  ): void {
    for (const k of Object.keys(t)) {
      if (!allowed.includes(k)) {
        this.fail(
          join(path, k),
          `unknown key (allowed here: ${allowed.join(", ")})`,
        );
      }
    }
  }
  string(v: unknown, path: string): string {
    if (typeof v !== "string") {
      this.fail(path, `expected a string, got ${describe(v)}`);
    }
    this.todo(v, path);
    return v;
  }
  /** One of `allowed`, named in the error as `expected "a", "b" or "c"`. */
  oneOf<const T extends string>(
    v: unknown,
    path: string,
    allowed: readonly T[],
  ): T {
    const s = this.string(v, path);
    if (!(allowed as readonly string[]).includes(s)) {
      const q = allowed.map((a) => JSON.stringify(a));
      this.fail(
        path,
        `expected ${q.slice(0, -1).join(", ")} or ${q.at(-1)}, got ${
          JSON.stringify(s)
        }`,
      );
    }
    return s as T;
  }
  /** `t[key]` read as `kind` (at `path.key`) when present, else `dflt`. */
  optional<K extends keyof Reads, D>(
    t: Record<string, unknown>,
    path: string,
    key: string,
    kind: K,
    dflt: D,
  ): Reads[K] | D {
    return Object.hasOwn(t, key)
      ? this[kind](t[key], join(path, key)) as Reads[K]
      : dflt;
  }
  nonEmptyString(v: unknown, path: string): string {
    const s = this.string(v, path);
    if (s.trim() === "") this.fail(path, "must not be empty");
    return s;
  }
  strings(v: unknown, path: string): string[] {
    if (!Array.isArray(v)) {
      this.fail(path, `expected an array of strings, got ${describe(v)}`);
    }
    return v.map((x, i) => this.string(x, `${path}[${i}]`));
  }
  /** Every number in a value tree (tool arguments) is finite: nan and inf have no JSON form. */
  finiteDeep(v: unknown, path: string): void {
    if (typeof v === "number" && !Number.isFinite(v)) {
      this.fail(
        path,
        `${v} cannot be sent as JSON (it would become null); use a finite number`,
      );
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => this.finiteDeep(x, `${path}[${i}]`));
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        this.finiteDeep(x, join(path, k));
      }
    }
  }
  number(v: unknown, path: string): number {
    if (typeof v !== "number" || !Number.isFinite(v)) {
      this.fail(path, `expected a number, got ${describe(v)}`);
    }
    return v;
  }
  todo(v: string, path: string): void {
    if (v.startsWith(TODO)) {
      this.fail(
        path,
        `still a placeholder: ${JSON.stringify(v)}; decide this value`,
      );
    }
  }
  /** Check a whole value tree (tool arguments) for TODO(verity) strings. */
  todoDeep(v: unknown, path: string): void {
    if (typeof v === "string") this.todo(v, path);
    else if (Array.isArray(v)) {
      v.forEach((x, i) => this.todoDeep(x, `${path}[${i}]`));
    } else if (v !== null && typeof v === "object" && !(v instanceof Date)) {
      for (const [k, x] of Object.entries(v)) {
        this.todo(k, join(path, k));
        this.todoDeep(x, join(path, k));
      }
    }
  }
  placeholders(v: string, path: string, hasSource: boolean): void {
    for (const m of v.matchAll(PLACEHOLDER_RE)) {
      const name = m[1]!;
      if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
        this.fail(
          path,
          `unknown placeholder {${name}} (known: ${
            PLACEHOLDERS.map((p) => `{${p}}`).join(", ")
          })`,
        );
      }
      if ((name === "source" || name === "node_modules") && !hasSource) {
        this.fail(path, `{${name}} needs a [source] table`);
      }
    }
  }
  placeholdersDeep(v: unknown, path: string, hasSource: boolean): void {
    if (typeof v === "string") this.placeholders(v, path, hasSource);
    else if (Array.isArray(v)) {
      v.forEach((x, i) => this.placeholdersDeep(x, `${path}[${i}]`, hasSource));
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        this.placeholdersDeep(x, join(path, k), hasSource);
      }
    }
  }
}

export function join(path: string, key: string): string {
  const k = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
  return path === "" ? k : `${path}.${k}`;
}

export function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Date) return "a date";
  if (typeof v === "object") return "a table";
  const text = JSON.stringify(v) ?? String(v);
  return `${typeof v} ${
    text.length > 80
      ? `${text.slice(0, 77)}... (${text.length} characters)`
      : text
  }`;
}

/** Convert smol-toml's values (null-prototype tables, dates) into plain JSON-shaped data. */
export function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = plain(x);
    return o;
  }
  if (typeof v === "bigint") return Number(v);
  return v;
}

/** Check that a label or relative path stays inside its base. */
export function relativePath(
  r: Reader,
  v: string,
  path: string,
  what: string,
): string {
  if (v.startsWith("/")) {
    r.fail(path, `${what} must be relative, got ${JSON.stringify(v)}`);
  }
  if (v.split("/").includes("..")) {
    r.fail(path, `${what} must not contain "..", got ${JSON.stringify(v)}`);
  }
  if (v.includes("\0")) r.fail(path, `${what} must not contain NUL`);
  return v;
}
