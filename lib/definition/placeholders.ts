/**
 * Placeholders in a definition's command, environment, read paths and tool
 * arguments: `{deno}`, `{python}`, `{node}`, `{state}`, `{target}`,
 * `{source}`, `{node_modules}` and, with a postgres adapter, the session
 * database's `{postgres_url}`, `{postgres_host}`, `{postgres_port}`,
 * `{postgres_db}`, `{postgres_user}` and `{postgres_password}`. Pure.
 *
 * @module
 */
import { PlaceholderError } from "../errors.ts";
import type { PostgresVars } from "./types.ts";

/** The placeholder names a definition may use. */
export const PLACEHOLDERS = [
  "port",
  "deno",
  "python",
  "node",
  "state",
  "target",
  "source",
  "node_modules",
  "postgres_url",
  "postgres_host",
  "postgres_port",
  "postgres_db",
  "postgres_user",
  "postgres_password",
] as const;

/** Stand-in database for substituting a command before any database exists (the backend choice). */
export const PROBE_POSTGRES: PostgresVars = {
  url: "postgresql://probe@localhost/probe?host=%2Fprobe",
  host: "/probe",
  port: "5432",
  db: "probe",
  user: "probe",
  password: "",
};
/** What a placeholder looks like: `{identifier}`; other braces (JSON) are literal. */
export const PLACEHOLDER_RE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The values placeholders stand for when a session starts. */
export interface PlaceholderValues {
  deno: string;
  python: string;
  state: string;
  target: string;
  source: string | null;
  /** `{node}`: the Node.js binary. @default {unset: using `{node}` throws} */
  node?: string;
  /** `{node_modules}`: the prepared npm install of a Node target. @default {null} */
  node_modules?: string | null;
  /** `{port}`: the loopback port of an HTTP server process. @default {unset: using `{port}` throws} */
  port?: string;
  /**
   * The session's database (a postgres adapter).
   * @default {null: using a `{postgres_…}` placeholder throws}
   */
  postgres?: PostgresVars | null;
}

/**
 * Substitute `{deno}`, `{python}`, `{node}`, `{state}`, `{target}`,
 * `{source}` and `{node_modules}` in one string. Only `{identifier}` is a
 * placeholder; other braces (JSON) are literal. An unknown placeholder, or
 * `{source}` without a source, throws a `PlaceholderError`.
 *
 * @example
 * ```ts
 * substitute("{state}/db", { deno: "deno", python: "python3", state: "/s", target: "/t", source: null }); // "/s/db"
 * ```
 */
export function substitute(
  value: string,
  vars: PlaceholderValues,
): string {
  return value.replace(PLACEHOLDER_RE, (_m, name: string) => {
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
      throw new PlaceholderError(
        `unknown placeholder {${name}} in ${JSON.stringify(value)} (known: ${
          PLACEHOLDERS.map((p) => `{${p}}`).join(", ")
        })`,
      );
    }
    if (name.startsWith("postgres_")) {
      if (!vars.postgres) {
        throw new PlaceholderError(
          `{${name}} used in ${
            JSON.stringify(value)
          } but the definition has no postgres adapter`,
        );
      }
      return vars.postgres[name.slice(9) as keyof PostgresVars];
    }
    const v = vars[name as Exclude<keyof PlaceholderValues, "postgres">];
    if (v === null || v === undefined) {
      throw new PlaceholderError(
        name === "node"
          ? `{node} used in ${
            JSON.stringify(value)
          } but no Node.js binary was resolved (install node)`
          : name === "port"
          ? `{port} used in ${
            JSON.stringify(value)
          } but the server is not started with transport = "http"`
          : `{${name}} used in ${
            JSON.stringify(value)
          } but the definition has no [source] (or it is not prepared)`,
      );
    }
    return v;
  });
}

/**
 * {@linkcode substitute} in every string of a JSON-shaped value (tool
 * arguments): object keys stay as written.
 *
 * @example
 * ```ts
 * substituteDeep({ path: "{state}/a", n: 1 }, { deno: "d", python: "p", state: "/s", target: "/t", source: null });
 * // { path: "/s/a", n: 1 }
 * ```
 */
export function substituteDeep(
  value: unknown,
  vars: PlaceholderValues,
): unknown {
  if (typeof value === "string") return substitute(value, vars);
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, vars));
  if (value !== null && typeof value === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) o[k] = substituteDeep(v, vars);
    return o;
  }
  return value;
}

/** Whether any string inside a JSON-shaped value holds a placeholder. */
export function hasPlaceholder(value: unknown): boolean {
  if (typeof value === "string") {
    return new RegExp(PLACEHOLDER_RE.source).test(value);
  }
  if (Array.isArray(value)) return value.some(hasPlaceholder);
  if (value !== null && typeof value === "object") {
    return Object.values(value).some(hasPlaceholder);
  }
  return false;
}
