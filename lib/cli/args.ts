/**
 * Command-line helpers shared by every command: strict parsing with
 * `node:util` parseArgs, the `-- <command...>` split, `--env K=V`.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../errors.ts";
import { closestNames } from "../common/closest_names.ts";

/** Options accepted by a command (parseArgs shape). */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** Parsed command line: option values, positionals, and the server command after `--`. */
export interface ParsedCommandLine {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
  /** Everything after the first `--`, or null when there was none. */
  serverCommand: string[] | null;
}

/**
 * `--help` (or `-h`) was given: the entry prints the command's help text
 * and exits 0 (one place instead of a check in every command).
 */
export class HelpRequested extends Error {
  constructor(readonly command: string) {
    super(`help for verity ${command}`);
    this.name = "HelpRequested";
  }
}

/**
 * The closest names for a misspelt one, as ` did you mean X?` (empty when
 * none is near).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(didYouMean("--job", ["--jobs", "--json"]), "; did you mean --jobs?");
 * ```
 */
export function didYouMean(
  name: string,
  candidates: readonly string[],
): string {
  const near = closestNames(name, candidates, 1, 2);
  return near.length ? `; did you mean ${near[0]}?` : "";
}

/**
 * Parse `argv` strictly: unknown flags (with the closest ones) and missing
 * values are a {@linkcode UsageError} naming the command and the flag. A
 * flag of the command's own after `--` (which would go to the server, not
 * to verity) is refused too; `-- --` passes what follows as it is.
 */
export function parseCommandLine(
  command: string,
  argv: readonly string[],
  options: OptionSpec,
  allowPositionals = true,
): ParsedCommandLine {
  const dd = argv.indexOf("--");
  const own = dd === -1 ? [...argv] : argv.slice(0, dd);
  let serverCommand = dd === -1 ? null : argv.slice(dd + 1);
  const flags = ["help", ...Object.keys(options)].map((o) => `--${o}`);
  if (serverCommand?.[0] === "--") serverCommand = serverCommand.slice(1);
  else {
    const mine = serverCommand?.find((a) => flags.includes(a.split("=")[0]!));
    if (mine !== undefined) {
      throw new UsageError(
        `verity ${command}: ${
          mine.split("=")[0]
        } after -- would go to the server, not to verity: put it before -- (or write -- -- to pass it to the server as it is)`,
      );
    }
  }
  try {
    const { values, positionals } = parseArgs({
      args: own,
      options: { help: { type: "boolean", short: "h" }, ...options },
      strict: true,
      allowPositionals,
    });
    if (values.help === true) throw new HelpRequested(command);
    return {
      values: values as ParsedCommandLine["values"],
      positionals,
      serverCommand,
    };
  } catch (e) {
    if (e instanceof HelpRequested) throw e;
    const err = e as Error;
    const unknown = /^Unknown option '([^']*)'/.exec(err.message)?.[1];
    const msg = unknown !== undefined
      ? `unknown flag ${unknown}${didYouMean(unknown, flags)}`
      : err.message.split("\n")[0] ?? "bad arguments";
    throw new UsageError(
      `verity ${command}: ${msg} (see verity ${command} --help)`,
    );
  }
}

/**
 * The one message of a failed gate (`--fail-on-violation`,
 * `--fail-on-untested`, `--fail-under`), printed before exit 1:
 * `verity run: gate --fail-on-violation failed: 1 claim violated (…)`.
 */
export function gateMessage(
  command: string,
  gate: string,
  why: string,
): string {
  return `verity ${command}: gate ${gate} failed: ${why}`;
}

/** Read `--env K=V` values into a record, refusing malformed pairs. */
export function parseEnvPairs(
  command: string,
  pairs: unknown,
): Record<string, string> {
  const out: Record<string, string> = {};
  const list = Array.isArray(pairs)
    ? pairs
    : pairs === undefined
    ? []
    : [pairs];
  for (const p of list) {
    const s = String(p);
    const eq = s.indexOf("=");
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(s.slice(0, eq))) {
      throw new UsageError(
        `verity ${command}: --env expects NAME=VALUE, got ${JSON.stringify(s)}`,
      );
    }
    out[s.slice(0, eq)] = s.slice(eq + 1);
  }
  return out;
}

/** Parse a positive number of seconds into milliseconds. */
export function parseSeconds(
  command: string,
  flag: string,
  v: unknown,
  dflt: number,
): number {
  if (v === undefined) return dflt * 1000;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 3600) {
    throw new UsageError(
      `verity ${command}: --${flag} expects a positive number of seconds up to 3600, got ${
        JSON.stringify(v)
      }`,
    );
  }
  return Math.round(n * 1000);
}

/** Parse a positive integer option with an optional minimum. */
export function parseCount(
  command: string,
  flag: string,
  v: unknown,
  dflt: number,
  min = 1,
): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(
      `verity ${command}: --${flag} expects an integer >= ${min}, got ${
        JSON.stringify(v)
      }`,
    );
  }
  return n;
}

/** An option's value when it is a string, else null. */
export function stringOption(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** `--seed N`: an integer from 0 to 2^32 - 1 (default `dflt`). */
export function parseSeed(command: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (typeof v !== "string" || !/^\d+$/.test(v) || n > 0xffffffff) {
    throw new UsageError(
      `verity ${command}: --seed expects an integer from 0 to 4294967295, got ${
        JSON.stringify(v)
      }`,
    );
  }
  return n;
}

/** Require a server command after `--`. */
export function requireServerCommand(
  command: string,
  p: ParsedCommandLine,
): string[] {
  if (p.serverCommand === null || p.serverCommand.length === 0) {
    throw new UsageError(
      `verity ${command}: missing server command: put it after --, e.g. verity ${command} -- deno run server.ts`,
    );
  }
  return p.serverCommand;
}
