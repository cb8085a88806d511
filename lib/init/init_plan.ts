/**
 * How `verity init` turns the command a client would run into a target:
 * which sandbox it can run under, what must be pinned, and which values
 * only a person can decide. Pure: facts about paths come from the caller.
 *
 * - `npx [-y] <pkg>[@range] args…` (and `npm exec`, `pnpm dlx`, `bunx`:
 *   `parsePackageRun`), and `deno run …
 *   npm:<pkg>@<range> args…` become an npm target: `{deno} run --no-config
 *   --frozen --lock={target}/deno.lock npm:<pkg>@<version> args…`, pinned in
 *   `[source]` and run under the Deno sandbox.
 * - `deno run [flags] <script> args…` keeps the script (made absolute) and
 *   runs under the Deno sandbox; permission flags are dropped (the sandbox
 *   sets them).
 * - Anything else runs as given under bubblewrap.
 *
 * Arguments and environment values that name a place outside the state
 * directory (absolute or home paths, existing relative paths) become
 * `TODO(verity)` values: a person must move that state into `{state}`. For
 * the listing run they point at `{state}/<basename>` instead. Secret-looking
 * environment values are never copied into the file.
 *
 * @module
 */
import { normalizeAbsolute } from "../common/paths.ts";
import { DENO_VALUE_FLAGS } from "../sandbox/build_launch.ts";
import { TODO } from "../definition/types.ts";
import { parsePackageRun, splitPackageSpec } from "../prepare/source.ts";

/** What a path on the auditor's machine is, looked up by the caller. */
export type PathKind = "file" | "dir" | null;

/** Input of {@linkcode planInit}. */
export interface InitInput {
  /** The server command as a client would run it. */
  command: string[];
  /** The environment the client would give it. */
  env: Record<string, string>;
  /** Directory relative paths resolve against (absolute). */
  cwd: string;
  /** The auditor's home directory, for `~/` paths; null when unknown. */
  home: string | null;
  /** Kind of each path candidate (absolute, after resolving), from the caller. */
  pathKinds: Record<string, PathKind>;
}

/** An npm package still to be pinned to an exact version. */
export interface NpmRequest {
  package: string;
  /** A version, range or tag (`latest` when none was given). */
  range: string;
}

/** The plan. Commands and env keep `{deno}`, `{state}` and `{target}` placeholders. */
export interface InitPlan {
  kind: "npm" | "deno" | "other";
  npm: NpmRequest | null;
  /** Command to write; `npm:<pkg>@{version}` until the pin is known (see {@linkcode withVersion}). */
  command: string[];
  /** Command for the listing run (no TODO values). */
  listCommand: string[];
  env: Record<string, string>;
  listEnv: Record<string, string>;
  /** Directories under the state directory to create for the listing run. */
  listDirs: string[];
  /** Extra readable paths (absolute), e.g. a local script's directory. */
  read: string[];
  /** What was changed and why, one line each (written as comments). */
  notes: string[];
  /** Env keys and args that became TODO values (for the summary). */
  todos: string[];
}

const VERSION_SLOT = "{version}";

/** Paths a value might name: absolute, `~/`, or an existing relative path. */
export function pathCandidate(
  value: string,
  cwd: string,
  home: string | null,
): string | null {
  if (value === "" || value.includes("\n")) return null;
  if (value.startsWith("/")) return normalizeAbsolute(value);
  if ((value === "~" || value.startsWith("~/")) && home !== null) {
    return normalizeAbsolute(`${home}/${value.slice(2)}`);
  }
  if (
    value.startsWith("./") || value.startsWith("../") || value.includes("/")
  ) {
    if (/^[a-z]+:/i.test(value)) return null; // URLs, npm: specifiers
    return normalizeAbsolute(`${cwd}/${value}`);
  }
  if (/\.[A-Za-z0-9]{1,5}$/.test(value) && !value.startsWith("-")) {
    return normalizeAbsolute(`${cwd}/${value}`);
  }
  return null;
}

function basename(p: string): string {
  const parts = p.split("/").filter((s) => s !== "");
  return parts[parts.length - 1] ?? "state";
}

function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

const SECRET_KEY =
  /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

/** Whether a `deno run` flag is one the sandbox sets or refuses (dropped by init). */
function sandboxOwnedDenoFlag(flag: string): boolean {
  const name = flag.split("=")[0] ?? flag;
  if (/^-[A-Za-z]*[ARWNESIP]/.test(flag) && !flag.startsWith("--")) return true;
  return /^--(allow|deny|ignore)-/.test(name) || name === "--permission-set" ||
    name === "--reload" || name === "-r" ||
    /^--(lock|no-lock|frozen)$/.test(name) ||
    name === "--cached-only" || name === "--no-prompt" || name === "-q" ||
    name === "--quiet";
}

interface ArgsResult {
  write: string[];
  list: string[];
}

/**
 * Plan a target from a client's server command.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 *
 * const plan = planInit({
 *   command: ["npx", "-y", "@modelcontextprotocol/server-memory"],
 *   env: { MEMORY_FILE_PATH: "/Users/me/memory.jsonl" }, cwd: "/", home: "/Users/me", pathKinds: {},
 * });
 * assert.deepEqual(plan.npm, { package: "@modelcontextprotocol/server-memory", range: "latest" });
 * assert.ok(plan.env.MEMORY_FILE_PATH?.startsWith("TODO(verity)"));
 * assert.equal(plan.listEnv.MEMORY_FILE_PATH, "{state}/memory.jsonl");
 * ```
 */
export function planInit(input: InitInput): InitPlan {
  const notes: string[] = [];
  const todos: string[] = [];
  const listDirs: string[] = [];
  const read: string[] = [];
  const [program = "", ...rest] = input.command;
  const base = basename(program);

  /** Server arguments: paths outside the state directory become TODOs. */
  const serverArgs = (args: string[]): ArgsResult => {
    const write: string[] = [];
    const list: string[] = [];
    for (const a of args) {
      const eq = a.startsWith("-") ? a.indexOf("=") : -1;
      const value = eq === -1 ? a : a.slice(eq + 1);
      const prefix = eq === -1 ? "" : a.slice(0, eq + 1);
      const p = a.startsWith("-") && eq === -1
        ? null
        : pathCandidate(value, input.cwd, input.home);
      const kind = p === null ? null : input.pathKinds[p] ?? null;
      const looksLikePath = p !== null &&
        (value.startsWith("/") || value.startsWith("~") || kind !== null);
      if (!looksLikePath) {
        write.push(a);
        list.push(a);
        continue;
      }
      const name = basename(p!);
      write.push(
        `${prefix}${TODO}: was ${
          JSON.stringify(value)
        }, outside the state directory: use a path under {state}, e.g. {state}/${name}, and seed it`,
      );
      list.push(`${prefix}{state}/${name}`);
      if (kind === "dir") listDirs.push(name);
      todos.push(`argument ${JSON.stringify(a)}`);
    }
    return { write, list };
  };

  let kind: InitPlan["kind"] = "other";
  let npm: NpmRequest | null = null;
  let command: string[] = [];
  let listCommand: string[] = [];

  const npmCommand = (
    req: NpmRequest,
    bin: string | null,
    args: string[],
    dropped: string[],
  ) => {
    kind = "npm";
    npm = { package: req.package, range: req.range };
    const sa = serverArgs(args);
    const head = [
      "{deno}",
      "run",
      "--no-config",
      "--frozen",
      "--lock={target}/deno.lock",
      `npm:${req.package}@${VERSION_SLOT}${bin === null ? "" : `/${bin}`}`,
    ];
    command = [...head, ...sa.write];
    listCommand = [...head, ...sa.list];
    notes.push(
      `runs ${req.package} from npm under the Deno sandbox, pinned in [source] (was: ${
        input.command.join(" ")
      })`,
    );
    if (dropped.length) {
      notes.push(
        `dropped ${
          dropped.join(" ")
        }: the sandbox sets permissions and runs offline from the prepared cache`,
      );
    }
  };

  const run = parsePackageRun(input.command);
  if (run !== null) {
    npmCommand(run, run.bin, run.args, run.dropped);
  } else if (/^deno(\.exe)?$/.test(base) && rest[0] === "run") {
    const flags: string[] = [];
    const dropped: string[] = [];
    let i = 1;
    for (; i < rest.length; i++) {
      const a = rest[i]!;
      if (a === "--") {
        i++;
        break;
      }
      if (!a.startsWith("-")) break;
      const takesValue = DENO_VALUE_FLAGS.has(a) && i + 1 < rest.length;
      if (sandboxOwnedDenoFlag(a)) dropped.push(a);
      else flags.push(a);
      if (takesValue) flags.push(rest[++i]!);
    }
    const script = rest[i];
    const req = script?.startsWith("npm:") ? splitPackageSpec(script) : null;
    if (req !== null) {
      npmCommand(req, null, rest.slice(i + 1), [...dropped, ...flags]);
    } else if (script !== undefined) {
      kind = "deno";
      const p = pathCandidate(script, input.cwd, input.home);
      const abs = p !== null && !/^[a-z]+:/i.test(script) ? p : script;
      if (abs !== script) notes.push(`script ${script} made absolute: ${abs}`);
      if (p !== null && input.pathKinds[p] === "file") read.push(dirname(p));
      const sa = serverArgs(rest.slice(i + 1));
      command = ["{deno}", "run", ...flags, abs, ...sa.write];
      listCommand = ["{deno}", "run", ...flags, abs, ...sa.list];
      if (dropped.length) {
        notes.push(
          `dropped ${
            dropped.join(" ")
          }: the Deno sandbox sets permissions (--deny-net, writes only to the state directory)`,
        );
      }
    }
  }
  if (kind === "other") {
    // Keep the program; the first existing file argument is its script.
    const p0 = pathCandidate(program, input.cwd, input.home);
    const prog = program.includes("/") && p0 !== null ? p0 : program;
    const scriptAt = rest.findIndex((a) => {
      const p = a.startsWith("-")
        ? null
        : pathCandidate(a, input.cwd, input.home);
      return p !== null && input.pathKinds[p] === "file";
    });
    const before = scriptAt === -1 ? [] : rest.slice(0, scriptAt);
    const after = scriptAt === -1 ? rest : rest.slice(scriptAt + 1);
    const script: string[] = [];
    if (scriptAt !== -1) {
      const p = pathCandidate(rest[scriptAt]!, input.cwd, input.home)!;
      script.push(p);
      read.push(dirname(p));
      if (p !== rest[scriptAt]) {
        notes.push(`script ${rest[scriptAt]} made absolute: ${p}`);
      }
    }
    const sa = serverArgs(after);
    command = [prog, ...before, ...script, ...sa.write];
    listCommand = [prog, ...before, ...script, ...sa.list];
    notes.push(
      "runs as given under bubblewrap (no network, writes only to the state directory): a command that downloads at start (uvx, npx of a non-npm source) must be installed first",
    );
  }

  const env: Record<string, string> = {};
  const listEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.env)) {
    if (SECRET_KEY.test(k)) {
      env[k] =
        `${TODO}: a secret; give a test credential here (verity does not copy the configured value)`;
      listEnv[k] = v;
      todos.push(`env ${k}`);
      continue;
    }
    if (/\$\{[^}]*\}/.test(v)) {
      env[k] = `${TODO}: was ${
        JSON.stringify(v)
      }, a client variable verity cannot expand`;
      todos.push(`env ${k}`);
      continue;
    }
    const p = v.startsWith("/") || v.startsWith("~/")
      ? pathCandidate(v, input.cwd, input.home)
      : null;
    if (p !== null) {
      const name = basename(p);
      env[k] = `${TODO}: was ${
        JSON.stringify(v)
      }, outside the state directory: use {state}/${name} and seed it`;
      listEnv[k] = `{state}/${name}`;
      if (input.pathKinds[p] === "dir") listDirs.push(name);
      todos.push(`env ${k}`);
      continue;
    }
    env[k] = v;
    listEnv[k] = v;
  }
  return {
    kind,
    npm,
    command,
    listCommand,
    env,
    listEnv,
    listDirs: [...new Set(listDirs)],
    read: [...new Set(read)],
    notes,
    todos,
  };
}

/** Every path {@linkcode planInit} may ask about, for the caller to stat first. */
export function pathQuestions(input: Omit<InitInput, "pathKinds">): string[] {
  const out = new Set<string>();
  for (const a of input.command) {
    const eq = a.startsWith("-") ? a.indexOf("=") : -1;
    const v = eq === -1 ? a : a.slice(eq + 1);
    const p = pathCandidate(v, input.cwd, input.home);
    if (p !== null) out.add(p);
  }
  for (const v of Object.values(input.env)) {
    const p = pathCandidate(v, input.cwd, input.home);
    if (p !== null) out.add(p);
  }
  return [...out];
}

/** Put the pinned version into the plan's `npm:<pkg>@{version}` slot. */
export function withVersion(
  command: readonly string[],
  version: string,
): string[] {
  return command.map((c) => c.replace(VERSION_SLOT, version));
}
