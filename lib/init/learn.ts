/**
 * An audit with no definition (`verity run --audit -- <command...>`): learn
 * a target from the server itself. The server runs with an empty scratch
 * HOME, working directory (`{state}/work`) and XDG directories in its state
 * directory (its `/tmp` and everything else in the session's overlay); its
 * tools are listed and each gets arguments generated from its input schema
 * (`lib/reality/generate.ts`). **Seeding by use**: every tool is called
 * once, each on a fresh copy of the seed so far; what a tool not declared
 * read-only adds is kept as the seed, and a call that removed or overwrote
 * a record, errored, or changed nothing is left out and noted. Later
 * calls' arguments are derived from the values seen in the seed and in
 * earlier answers (`learn_plan.ts`). The result is a target directory
 * (`target.toml` and its seed files: every SQLite, JSON and JSONL file
 * found an adapter of its own, the rest one fs tree) that the battery runs
 * from, and `verity init` can keep.
 *
 * Requires `--allow-all` (spawns servers, writes the target directory).
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { stringify } from "smol-toml";
import { DefinitionError, ServerError } from "../errors.ts";
import {
  type AdapterDef,
  type Definition,
  LEARNED_AIMS,
  type LearnedAim,
} from "../definition/types.ts";
import { loadDefinition, MAX_TEXT_SEED_BYTES } from "../definition/load.ts";
import { DefinitionLauncher, openLauncher } from "../launcher/launcher.ts";
import { resolveCommand } from "../launcher/command.ts";
import { resolveDeno } from "../sandbox/sandbox.ts";
import { openSession } from "../wire/session.ts";
import { listTools } from "../wire/list_tools.ts";
import type { Contract } from "../contracts/contracts.ts";
import { generateArguments } from "../reality/generate.ts";
import { takeSnapshot } from "../state_io/snapshot.ts";
import { DEFAULT_CHANGESET_BUDGET } from "../state_io/changeset.ts";
import { computeDelta } from "../state/delta.ts";
import { readJsonState } from "../../adapters/json.ts";
import { readSqlite } from "../../adapters/sqlite/read.ts";
import { PageWalkError } from "../../adapters/sqlite/page_walk_error.ts";
import { isSqliteImage } from "../../adapters/sqlite/format.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { showControls, terminalJson } from "../common/show_controls.ts";
import type { PreparedRun } from "../prepare/local.ts";
import { LOCK_FILE, type SourcePin } from "../prepare/source.ts";
import {
  type ArgumentOrigin,
  deriveArguments,
  freshArguments,
  learnedAim,
  learnedName,
  literalArguments,
  originLines,
  ValuePool,
} from "./learn_plan.ts";

/** What one seeding call did, in the order the census counts them. */
export const STEP_OUTCOMES = [
  "kept",
  "read_only",
  "errored",
  "lossy",
  "no_change",
] as const;

export interface SeedStep {
  tool: string;
  arguments: Record<string, unknown>;
  origins: ArgumentOrigin[];
  /** `kept` (its additions are in the seed); otherwise why it is not. */
  outcome: typeof STEP_OUTCOMES[number];
  detail: string;
}

/** One argument set the battery runs, and where each value came from. */
export interface LearnedCall {
  tool: string;
  variant: string | null;
  arguments: Record<string, unknown>;
  origins: ArgumentOrigin[];
  /** What it names in the seed (`learned` in the target). */
  learned: LearnedAim;
}

/** What an audit with no definition learned. */
export interface Learned {
  definition: Definition;
  /** The learned target directory (`target.toml` and `seed/`). */
  dir: string;
  steps: SeedStep[];
  calls: LearnedCall[];
  /** State files the seed holds, relative to the state directory, with their kinds. */
  files: { path: string; kind: "sqlite" | "json" | "fs" }[];
  /** What a package runner's pin verified (the target's `[source]` runs from it), else null. */
  prepared: PreparedRun | null;
}

/**
 * What learning did, as the report carries it (`learned` in report.json):
 * the seeding calls, the battery's argument sets and the state files.
 */
export type LearnedRecord = Pick<Learned, "steps" | "calls" | "files">;

/** Options of {@linkcode learnTarget}. */
export interface LearnOptions {
  /** Where the target directory is written (created; must not exist). */
  dir: string;
  /** Scratch for the seeding sessions (removed by the caller). */
  workDir: string;
  /** Declared environment (`--env`), placeholders allowed. @default {{}} */
  env?: Record<string, string>;
  /** The target's name. @default {learnedName(command)} */
  name?: string;
  /** @default {false} */
  noSandbox?: boolean;
  /** @default {false} */
  offline?: boolean;
  /** Progress lines. @default {none} */
  say?: (line: string) => void;
  /**
   * A command already resolved (a census entry's, run from its prepared
   * cache): taken as is, with what it may read and run. @default {resolved from `given`}
   */
  resolved?: {
    command: string[];
    prepared: PreparedRun | null;
    read: string[];
    allow: { sys: string[]; run: string[] };
    timeoutS: number;
    /** The lockfile the command's `--lock={target}/deno.lock` names, else null. */
    lock: string | null;
  };
  /** The command name in messages. @default {"verity run"} */
  commandName?: string;
  /** No session starts after this `performance.now()` (a census's budget). @default {none} */
  deadline?: number;
}

/** The scratch home the server sees: XDG directories inside it, and a working directory. */
const HOME_ENV: Record<string, string> = {
  XDG_DATA_HOME: "{state}/.local/share",
  XDG_CONFIG_HOME: "{state}/.config",
  XDG_STATE_HOME: "{state}/.local/state",
  XDG_CACHE_HOME: "{state}/.cache",
};

interface Found {
  path: string;
  kind: "sqlite" | "json" | "fs";
  adapter: AdapterDef | null;
}

/** Every file in a state directory, typed: SQLite by header, JSON/JSONL by parse, else bytes. */
async function discover(stateDir: string): Promise<Found[]> {
  const out: Found[] = [];
  let entries = 0;
  const walk = async (dir: string, depth: number) => {
    if (depth > 16 || out.length > 2000) return;
    for await (const e of Deno.readDir(dir)) {
      // A hostile server can leave any number of entries: bounded, and said.
      if (++entries > MAX_ENTRIES) {
        throw new ServerError(
          `verity run: the server left more than ${MAX_ENTRIES} entries in its state directory: not learned`,
        );
      }
      const abs = join(dir, e.name);
      const rel = relative(stateDir, abs);
      if (e.isDirectory) await walk(abs, depth + 1);
      else if (e.isFile && !/-(wal|shm|journal)$/.test(e.name)) {
        out.push({ path: rel, ...await typed(abs, rel) });
      }
    }
  };
  await walk(stateDir, 0);
  return out.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

const ID_FIELDS = ["id", "uuid", "key", "name", "path"];
/** The most entries one state directory may hold for it to be learned: the changeset's budget. */
const MAX_ENTRIES = DEFAULT_CHANGESET_BUDGET.entries;

async function typed(
  abs: string,
  rel: string,
): Promise<Pick<Found, "kind" | "adapter">> {
  const base = { ...FS_TREE, label: rel, key: {} };
  const size = (await Deno.stat(abs)).size;
  if (size > 64 * 1024 * 1024) return { kind: "fs", adapter: null };
  const bytes = await Deno.readFile(abs);
  if (isSqliteImage(bytes)) {
    // Business: its tables, not SQLite's own (sqlite_sequence counts ids).
    // Never through a link the server made (`db-wal -> /etc/shadow`).
    const wal = await Deno.lstat(`${abs}-wal`).then(
      (s) => s.isFile ? Deno.readFile(`${abs}-wal`) : null,
      () => null,
    );
    let tables: string[];
    try {
      tables = readSqlite(bytes, { wal, records: false, label: rel })
        .tables.map((t) => t.name).filter((t) => !t.startsWith("sqlite_"));
    } catch (e) {
      // Not read by pages: a file like any other.
      if (e instanceof PageWalkError) return { kind: "fs", adapter: null };
      throw e;
    }
    return {
      kind: "sqlite",
      adapter: { ...base, kind: "sqlite", business: tables },
    };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { kind: "fs", adapter: null };
  }
  const jsonl = /\.(jsonl|ndjson)$/i.test(rel) ||
    (!/\.json$/i.test(rel) && text.trim().split("\n").length > 1);
  const lines = jsonl
    ? text.split("\n").filter((l) => l.trim() !== "")
    : [text];
  let docs: unknown[];
  try {
    docs = lines.map((l) => JSON.parse(l));
  } catch {
    return { kind: "fs", adapter: null };
  }
  if (lines.length === 0 || docs.some((d) => typeof d !== "object")) {
    return { kind: "fs", adapter: null };
  }
  const records = jsonl ? docs : Array.isArray(docs[0]) ? docs[0] : [];
  const typedBy = records.length > 0 &&
    records.every((r) => isPlainObject(r) && typeof r.type === "string");
  const adapter: AdapterDef = {
    ...base,
    kind: "json",
    format: jsonl ? "jsonl" : "json",
    ...(typedBy ? { region_by: "type" } : {}),
  };
  // Identity: the first of id/uuid/key/name/path every record of a region
  // has, unique there; otherwise records are their whole value.
  for (const region of readJsonState(text, adapter).regions) {
    const values = region.records.map((r) => r.value);
    const field = ID_FIELDS.find((f) => {
      const seen = values.map((v) => v[f]);
      return seen.every((x) =>
        typeof x === "string" || typeof x === "number"
      ) &&
        new Set(seen).size === seen.length;
    });
    if (field !== undefined && values.length > 0) {
      adapter.key[region.name] = [field];
    }
  }
  return { kind: "json", adapter };
}

/** The fs tree over a state directory, every file business (seed not set). */
const FS_TREE: AdapterDef = {
  kind: "fs",
  label: ".",
  seed: null,
  business: ["**"],
  append_only: [],
  mask: [],
  key: {},
};

/** The adapters over a state directory's files (seeds not set): one per typed file, one fs tree for the rest. */
function adaptersOf(found: readonly Found[]): AdapterDef[] {
  return [...found.flatMap((f) => f.adapter ? [f.adapter] : []), FS_TREE];
}

/** The same adapters over both directories' files (a path typed in either). */
function unionAdapters(a: readonly Found[], b: readonly Found[]): AdapterDef[] {
  const byPath = new Map<string, Found>();
  for (const f of [...a, ...b]) {
    const had = byPath.get(f.path);
    if (!had || (had.adapter === null && f.adapter !== null)) {
      byPath.set(f.path, f);
    }
  }
  return adaptersOf([...byPath.values()]);
}

/** Copy a directory tree (files, directories; links as links). */
async function copyTree(
  from: string,
  to: string,
  skip: ReadonlySet<string> = new Set(),
  rel = "",
): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    const r = rel === "" ? e.name : `${rel}/${e.name}`;
    if (skip.has(r)) continue;
    const src = join(from, e.name);
    const dst = join(to, e.name);
    if (e.isDirectory) await copyTree(src, dst, skip, r);
    else if (e.isSymlink) await Deno.symlink(await Deno.readLink(src), dst);
    else if (e.isFile) await Deno.copyFile(src, dst);
  }
}

/** TOML can hold no null: arguments holding one are not representable. */
function hasNull(v: unknown): boolean {
  if (v === null) return true;
  if (Array.isArray(v)) return v.some(hasNull);
  if (isPlainObject(v)) return Object.values(v).some(hasNull);
  return false;
}

interface TargetSpec {
  name: string;
  command: string[];
  source: Pick<SourcePin, "package" | "version" | "integrity"> | null;
  env: Record<string, string>;
  read: string[];
  allow: { sys: string[]; run: string[] };
  /** Seconds to start and per call, else the defaults. */
  timeoutS: number | null;
  files: Found[];
  calls: LearnedCall[];
}

/**
 * Write the learned target: `target.toml` (every string escaped by the
 * TOML writer) and its seeds, copied from `stateDir`: each typed file as
 * its adapter's seed, everything else as the fs tree of the state
 * directory (with the working directory).
 */
async function writeTarget(
  dir: string,
  spec: TargetSpec,
  stateDir: string | null,
): Promise<void> {
  await Deno.remove(join(dir, "seed"), { recursive: true }).catch(() => {});
  const tree = join(dir, "seed", "tree");
  const typedFiles = spec.files.filter((f) => f.adapter !== null);
  if (stateDir !== null) {
    const skip = new Set(
      typedFiles.flatMap((
        f,
      ) => [f.path, ...["-wal", "-shm", "-journal"].map((x) => f.path + x)]),
    );
    await copyTree(stateDir, tree, skip);
    for (const f of typedFiles) {
      const to = join(dir, "seed", "typed", f.path);
      await Deno.mkdir(dirname(to), { recursive: true });
      await Deno.copyFile(join(stateDir, f.path), to);
    }
  }
  // The working directory, and every directory the command line names
  // inside the state (`{state}/files`: a directory to serve). A name with
  // an extension (`{state}/census.db`) is a file the server makes: only
  // its parent is made.
  const named = spec.command.flatMap((a) => {
    const m = /^\{state\}\/([^{}]+)$/.exec(a);
    if (!m || m[1]!.split("/").includes("..")) return [];
    return /\.[A-Za-z0-9]+$/.test(m[1]!) ? [dirname(m[1]!)] : [m[1]!];
  });
  for (const d of ["work", ...named]) {
    await Deno.mkdir(join(tree, d), { recursive: true });
  }
  const adapters = adaptersOf(spec.files).map((a) => {
    const seed = a.label === "." ? "seed/tree" : `seed/typed/${a.label}`;
    const out: Record<string, unknown> = {
      kind: a.kind,
      label: a.label,
      seed,
      business: a.business,
    };
    if (a.format !== undefined) out.format = a.format;
    if (a.region_by !== undefined) out.region_by = a.region_by;
    if (Object.keys(a.key).length > 0) out.key = a.key;
    return out;
  });
  const doc = {
    target: {
      name: spec.name,
      command: spec.command,
      env: { ...HOME_ENV, ...spec.env },
      cwd: "{state}/work",
      ...(spec.read.length > 0 ? { read: spec.read } : {}),
      ...(spec.allow.sys.length + spec.allow.run.length > 0
        ? { allow: spec.allow }
        : {}),
      ...(spec.timeoutS === null
        ? {}
        : { timeouts: { start: spec.timeoutS, call: spec.timeoutS } }),
    },
    ...(spec.source === null ? {} : { source: spec.source }),
    state: {
      locations: adapters.map((a) => `${a.kind}:${a.label}`),
    },
    adapters,
  };
  // Each argument set after a comment of where its values came from (the
  // server's strings in it escaped: a newline there would be live TOML).
  const tools = spec.calls.map((c) =>
    [
      `# ${c.variant === null ? c.tool : `${c.tool}[${c.variant}]`}:`,
      ...originLines(c.origins.slice(0, 12)).map((l) => `#${l.slice(1)}`),
    ].map((l) => showControls(l.slice(0, 300))).join("\n") + "\n" +
    stringify({
      tools: [{
        name: c.tool,
        ...(c.variant === null ? {} : { variant: c.variant }),
        arguments: c.arguments,
        learned: c.learned,
      }],
    })
  );
  const head = [
    "# Learned by verity run --audit (no definition): state locations, file",
    "# kinds and the seed from seeding by use; arguments generated from each",
    "# tool's inputSchema, or derived from values seen in the seed and in",
    "# earlier answers (see learned.json beside this file).",
    "",
  ].join("\n");
  await Deno.writeTextFile(
    join(dir, "target.toml"),
    [head + stringify(doc), ...tools].map((t) => t.trimEnd()).join("\n\n") +
      "\n",
  );
}

/** A string as it appears inside JSON text (quotes off). */
function jsonInner(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** A session on `stateDir`: one call (or none), the listing and the answer. */
async function session(
  launcher: DefinitionLauncher,
  stateDir: string,
  evidence: string,
  call: { name: string; arguments: Record<string, unknown> } | null,
  def: Definition,
  deadline?: number,
): Promise<{ contracts: Contract[]; result: unknown; error: string | null }> {
  if (deadline !== undefined && performance.now() > deadline) {
    throw new ServerError(`learning timed out: its budget is spent`);
  }
  await Deno.mkdir(evidence, { recursive: true });
  const started = await launcher.start(
    { state: stateDir, evidence },
    "learn",
    def.timeouts.start_s * 1000,
  );
  const s = await openSession(started.target, {
    timeoutMs: def.timeouts.start_s * 1000,
  });
  try {
    if (s.failure) {
      throw new ServerError(
        `verity run: ${def.command.join(" ")}: ${s.failure.message}`,
      );
    }
    const { contracts } = listTools(s);
    if (call === null) return { contracts, result: null, error: null };
    // `{state}` (a path seen in an earlier session) is this session's.
    const resolved = JSON.parse(
      JSON.stringify(call).replaceAll("{state}", jsonInner(stateDir)),
    );
    const out = await s.client.request(
      "tools/call",
      resolved,
      def.timeouts.call_s * 1000,
    );
    if (out.status !== "ok") {
      return {
        contracts,
        result: null,
        error: out.status === "error"
          ? `JSON-RPC error ${JSON.stringify(out.error).slice(0, 200)}`
          : `no answer (${out.failure.reason})`,
      };
    }
    // Paths the server names inside this session's state are `{state}/…`.
    let text = JSON.stringify(out.result) ?? "null";
    for (const d of [await Deno.realPath(stateDir), stateDir]) {
      text = text.replaceAll(jsonInner(d), "{state}");
    }
    const r: unknown = JSON.parse(text);
    const isError = isPlainObject(r) && r.isError === true;
    return {
      contracts,
      result: r,
      error: isError ? `isError: true${errorText(r)}` : null,
    };
  } finally {
    await s.client.close(1000);
  }
}

/**
 * The first text an error result carries, quoted and cut to 200 characters
 * (`: "Requires write access to …"`): why a seeding call failed, on one line.
 */
function errorText(r: Record<string, unknown>): string {
  const content = Array.isArray(r.content) ? r.content : [];
  const first = content.find((c) =>
    isPlainObject(c) && typeof c.text === "string"
  );
  const text = first === undefined ? "" : String(first.text).trim();
  return text === ""
    ? ""
    : `: ${terminalJson(JSON.stringify(text.slice(0, 200)))}`;
}

/**
 * Learn a target from a server given as a bare command line (see the
 * module doc). Throws `ServerError` (exit 2) when it cannot be started or
 * listed.
 *
 * @example
 * ```ts ignore
 * const learned = await learnTarget(["deno", "run", "server.ts"], { dir: "/tmp/t", workDir: "/tmp/w" });
 * await runBattery(learned.definition, learned.definition.tools, { ... });
 * ```
 */
export async function learnTarget(
  given: string[],
  options: LearnOptions,
): Promise<Learned> {
  const say = options.say ?? (() => {});
  const commandName = options.commandName ?? "verity run";
  const pre = options.resolved;
  const resolved = pre
    ? {
      command: pre.command,
      prepared: pre.prepared ?? undefined,
      readPaths: pre.read,
    }
    : await resolveCommand(given, {
      commandName,
      offline: options.offline === true,
    });
  const deno = resolveDeno();
  const exists = async (p: string) =>
    await Deno.stat(p).then(() => true, () => false);
  const prepared = resolved.prepared ?? null;
  // A package runner's: a prepared target's command and `[source]`, its
  // lockfile beside target.toml (no path of this machine's cache).
  const lock = prepared === null
    ? -1
    : resolved.command.findIndex((a) => a.startsWith("--lock="));
  // Relative paths that exist are made absolute: the server's working
  // directory is its scratch one.
  const command = await Promise.all(
    resolved.command.map(async (a, i) =>
      i === 0 && (a === deno || a === "deno" || a.endsWith("/deno"))
        ? "{deno}"
        : i === lock
        ? `--lock={target}/${LOCK_FILE}`
        : i > 0 && !a.startsWith("-") && !a.startsWith("/") &&
            !a.includes("{") &&
            await exists(a)
        ? join(Deno.cwd(), a)
        : a
    ),
  );
  // What the server reads: the paths its command names; a local command's
  // code also from the working directory.
  const read = [
    ...new Set([
      ...resolved.readPaths,
      ...(prepared === null && pre === undefined ? [Deno.cwd()] : []),
    ]),
  ];
  const spec: TargetSpec = {
    name: options.name ?? learnedName(given),
    command,
    source: prepared === null ? null : {
      package: prepared.entry.package,
      version: prepared.entry.version,
      integrity: prepared.entry.integrity,
    },
    env: options.env ?? {},
    read,
    allow: pre?.allow ?? { sys: [], run: [] },
    timeoutS: pre?.timeoutS ?? null,
    files: [],
    calls: [],
  };
  await Deno.mkdir(options.dir, { recursive: true });
  // The lock the command names (`--lock=`): the pin's, or the resolved
  // command's own (a census entry's, beside its prepared record).
  const lockFrom = pre ? pre.lock : prepared?.entry.lock.file ?? null;
  if (lockFrom !== null && lock !== -1) {
    await Deno.copyFile(lockFrom, join(options.dir, LOCK_FILE));
  }
  await writeTarget(options.dir, spec, null);
  let def = await loadDefinition(options.dir);
  const first = await openLauncher(def, {
    noSandbox: options.noSandbox === true,
    audit: true,
    commandName,
    ...(prepared === null ? {} : { prepared }),
  });
  const launcherFor = (d: Definition) =>
    new DefinitionLauncher(d, first.setup, null);
  let n = 0;
  const fresh = async (launcher: DefinitionLauncher) => {
    const dir = join(options.workDir, `learn-${++n}`);
    await launcher.reset(join(dir, "state"));
    return dir;
  };
  // The listing, on the empty seed.
  let launcher = launcherFor(def);
  const listDir = await fresh(launcher);
  const { contracts } = await session(
    launcher,
    join(listDir, "state"),
    join(listDir, "evidence"),
    null,
    def,
    options.deadline,
  );
  say(`listed ${contracts.length} tool(s); seeding by use`);
  const pool = new ValuePool();
  const steps: SeedStep[] = [];
  const generated = new Map<string, Record<string, unknown>>();
  for (const c of contracts) {
    const g = generateArguments(c.raw.inputSchema, { label: c.name });
    generated.set(
      c.name,
      g.ok && !hasNull(g.arguments) ? literalArguments(g.arguments) : {},
    );
  }
  // Read-only tools first: their answers name what is there (an allowed
  // directory, a listing); then every other tool, in listing order.
  const order = [
    ...contracts.filter((c) => c.hints.readOnlyHint.state === "TRUE"),
    ...contracts.filter((c) => c.hints.readOnlyHint.state !== "TRUE"),
  ];
  let seedFiles: Found[] = [];
  /** One call on a fresh copy of the seed so far, and what it did to it. */
  const tryCall = async (name: string, args: Record<string, unknown>) => {
    const dir = await fresh(launcher);
    const before = join(dir, "before");
    await launcher.reset(before);
    const state = join(dir, "state");
    const call = { name, arguments: args };
    const r = await session(
      launcher,
      state,
      join(dir, "evidence"),
      call,
      def,
      options.deadline,
    );
    if (r.error !== null) {
      return {
        ...r,
        state,
        after: [] as Found[],
        outcome: "errored" as SeedStep["outcome"],
        detail: r.error,
        reached: false,
      };
    }
    const after = await discover(state);
    const shape = { ...def, adapters: unionAdapters(seedFiles, after) };
    const delta = computeDelta(
      await takeSnapshot(shape, before),
      await takeSnapshot(shape, state),
    );
    const lost = [
      ...delta.business.removed,
      ...delta.business.changed.filter((x) => x.lossy),
    ];
    const [outcome, detail]: [SeedStep["outcome"], string] = delta.empty
      ? ["no_change", "the call changed nothing in the state directory"]
      : delta.business.lossy || delta.unclassified.lossy
      ? [
        "lossy",
        `removed or overwrote ${lost.length} record(s) (first: ${
          lost[0] ? `${lost[0].region} ${lost[0].key}` : "a table"
        }): left out of the seed`,
      ]
      : [
        "kept",
        `added ${delta.business.added.length} record(s), changed ${delta.business.changed.length} additively`,
      ];
    // Reached a record: added or changed one, lost none.
    const reached = !delta.business.lossy &&
      delta.business.added.length + delta.business.changed.length > 0;
    return { ...r, state, after, outcome, detail, reached };
  };
  for (const c of order) {
    const d = deriveArguments(generated.get(c.name)!, pool, c.raw.inputSchema);
    const r = await tryCall(c.name, d.arguments);
    const readOnly = c.hints.readOnlyHint.state === "TRUE" &&
      r.outcome !== "errored";
    steps.push({
      tool: c.name,
      arguments: d.arguments,
      origins: d.origins,
      outcome: readOnly ? "read_only" : r.outcome,
      detail: readOnly
        ? "declared read-only: its answer is used, its effects are not kept"
        : r.detail,
    });
    if (r.error !== null) continue;
    pool.addAnswer(r.result, `the answer of ${c.name}`);
    if (readOnly || r.outcome !== "kept") continue;
    pool.add(d.arguments, `the arguments of ${c.name} (kept in the seed)`);
    seedFiles = r.after;
    spec.files = r.after;
    await writeTarget(options.dir, spec, r.state);
    def = await loadDefinition(options.dir);
    launcher = launcherFor(def);
  }
  // The seed's own records, first: they exist before every call.
  const seedPool = new ValuePool();
  if (seedFiles.length > 0) {
    const dir = await fresh(launcher);
    const snap = await takeSnapshot(def, join(dir, "state"));
    for (const region of snap.regions) {
      for (const rec of region.records.slice(0, 200)) {
        seedPool.add(
          rec.value,
          `the seed (${region.adapter}:${region.name} ${rec.key})`,
        );
      }
    }
  }
  for (const v of pool.values) seedPool.add({ [v.name]: v.value }, v.from);
  const calls: LearnedCall[] = [];
  for (const c of contracts) {
    const g = generated.get(c.name)!;
    const d = deriveArguments(g, seedPool, c.raw.inputSchema);
    // The derived set (a generated id names no record, so a call on it
    // could change nothing); a tool that added to the seed may also get a
    // set for a new record (its seeding arguments would find what it
    // made): a variant only when, called once on the seed, it reached a
    // real record (added or changed one additively, no error, no business
    // record lost; a counter such as sqlite_sequence may move).
    const added = steps.some((s) => s.tool === c.name && s.outcome === "kept");
    const made = added ? freshArguments(g, seedPool, c.raw.inputSchema) : null;
    const kept = made !== null &&
      (await tryCall(c.name, made.arguments)).reached;
    const empty = seedFiles.length === 0;
    calls.push({
      tool: c.name,
      variant: kept ? "existing" : null,
      arguments: d.arguments,
      origins: d.origins,
      learned: learnedAim(d.origins, empty),
    });
    if (kept) {
      calls.push({
        tool: c.name,
        variant: "new",
        ...made,
        learned: learnedAim(made.origins, empty),
      });
    }
  }
  spec.calls = calls;
  const lastState = steps.some((s) => s.outcome === "kept")
    ? join(options.workDir, "final")
    : null;
  if (lastState !== null) await launcher.reset(lastState);
  await writeTarget(options.dir, spec, lastState);
  const files = seedFiles.map((f) => ({ path: f.path, kind: f.kind }));
  await Deno.writeTextFile(
    join(options.dir, LEARNED_FILE),
    JSON.stringify({ steps, calls, files }, null, 2) + "\n",
  );
  const definition = await loadDefinition(options.dir);
  return { definition, dir: options.dir, steps, calls, files, prepared };
}

/** What learning did, beside a learned target's `target.toml`. */
export const LEARNED_FILE = "learned.json";

/**
 * The learning record of a learned target run again as a definition
 * (`verity run <dir> --audit` after `verity init --learn`): `learned.json`
 * beside its `target.toml`, so the report names every argument's origin
 * as the learning run's did. Null when there is none, or when it no longer
 * describes the target (an argument set edited, added or removed since:
 * `stale` says so, and the origins are not carried). A file that is not
 * such a record is a `DefinitionError` naming the key. Requires
 * `--allow-read`.
 */
export async function readLearned(
  def: Pick<Definition, "dir" | "tools">,
): Promise<{ record: LearnedRecord | null; stale: string | null }> {
  const file = join(def.dir, LEARNED_FILE);
  let text: string;
  try {
    if ((await Deno.stat(file)).size > MAX_TEXT_SEED_BYTES) {
      throw new DefinitionError(file, "", "larger than 256 MiB");
    }
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { record: null, stale: null };
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new DefinitionError(file, "", `not JSON: ${(e as Error).message}`);
  }
  const bad = (key: string, what: string): never => {
    throw new DefinitionError(file, key, `expected ${what}`);
  };
  const str = (x: unknown) => typeof x === "string";
  if (!isPlainObject(v)) bad("", "{ steps, calls, files }");
  const r = v as Record<string, unknown>;
  for (const k of ["steps", "calls", "files"]) {
    if (!Array.isArray(r[k])) bad(k, "an array");
  }
  const set = (key: string, x: unknown): Record<string, unknown> => {
    if (
      !isPlainObject(x) || !str(x.tool) || !isPlainObject(x.arguments) ||
      !Array.isArray(x.origins) ||
      !x.origins.every((o) => isPlainObject(o) && str(o.path) && str(o.from))
    ) bad(key, "{ tool, arguments: {}, origins: [{ path, value, from }] }");
    return x as Record<string, unknown>;
  };
  (r.steps as unknown[]).forEach((x, i) => {
    const s = set(`steps[${i}]`, x);
    if (!STEP_OUTCOMES.includes(s.outcome as never) || !str(s.detail)) {
      bad(
        `steps[${i}]`,
        `an outcome of ${STEP_OUTCOMES.join(", ")} and a detail`,
      );
    }
  });
  const calls = (r.calls as unknown[]).map((x, i) => {
    const c = set(`calls[${i}]`, x);
    if (
      !(c.variant === null || str(c.variant)) ||
      !LEARNED_AIMS.includes(c.learned as LearnedAim)
    ) {
      bad(
        `calls[${i}]`,
        `a variant (string or null) and learned: one of ${
          LEARNED_AIMS.join(", ")
        }`,
      );
    }
    return c as unknown as LearnedCall;
  });
  (r.files as unknown[]).forEach((f, i) => {
    if (
      !isPlainObject(f) || !str(f.path) ||
      !["sqlite", "json", "fs"].includes(f.kind as string)
    ) bad(`files[${i}]`, '{ path, kind: "sqlite", "json" or "fs" }');
  });
  // Every learned set of the target has its record, unchanged, and no more.
  const learnedSets = def.tools.filter((t) => t.learned !== undefined);
  const same = learnedSets.length === calls.length &&
    learnedSets.every((t) =>
      calls.some((c) =>
        c.tool === t.name && c.variant === t.variant &&
        c.learned === t.learned && isDeepStrictEqual(c.arguments, t.arguments)
      )
    );
  if (!same) {
    return {
      record: null,
      stale:
        `${file} does not match the target's learned argument sets (edited since?): argument origins not carried`,
    };
  }
  return { record: r as unknown as LearnedRecord, stale: null };
}
