/**
 * `verity init`'s work: start a server in the sandbox, list its tools, and
 * write a starting `target.toml` with a `TODO(verity)` value for everything
 * only a person can decide. An npm server is pinned to the exact version the
 * registry gives today and prepared like `verity prepare` does (the one
 * networked part); the listing runs offline through the same launcher as
 * `verity run`.
 *
 * Requires `--allow-all` (starts the server, runs npm and deno, writes files).
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { ServerError } from "../errors.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { openSession } from "../wire/session.ts";
import { listTools } from "../wire/list_tools.ts";
import { HINT_NAMES, type ParsedListing } from "../contracts/contracts.ts";
import { openLauncher } from "../launcher/launcher.ts";
import { runnerRefusal } from "../launcher/command.ts";
import { findOnPath } from "../sandbox/sandbox.ts";
import {
  type InitPlan,
  type PathKind,
  pathQuestions,
  planInit,
  withVersion,
} from "./init_plan.ts";
import { type ListedTool, renderTargetTemplate } from "./init_template.ts";
import { cacheLayout, savePreparedTarget } from "../prepare/local.ts";
import { fetchPinned, pinFromRegistry } from "../prepare/fetch.ts";
import { VERSION } from "../version.ts";
import { isWithin } from "../common/paths.ts";

/** The server to start, as a client would run it. */
export interface InitServer {
  command: string[];
  env: Record<string, string>;
  /** Directory relative paths resolve against (absolute). */
  cwd: string;
  /** Where the server came from, for the file's header. */
  origin: string;
}

/** Options for {@linkcode initTarget}. */
export interface InitOptions {
  /** The target's name. */
  name: string;
  /** The directory `target.toml` is written into (absolute). */
  targetDir: string;
  /** Milliseconds to wait for each answer. */
  timeoutMs: number;
  /**
   * List the tools without a sandbox.
   * @default {false}
   */
  noSandbox?: boolean;
  /**
   * Progress lines.
   * @default {() => {}}
   */
  say?: (line: string) => void;
  /**
   * The date written in the file's header.
   * @default {new Date()}
   */
  now?: Date;
}

/** What {@linkcode initTarget} wrote. */
export interface InitResult {
  /** The written `target.toml` (absolute). */
  file: string;
  text: string;
  tools: ListedTool[];
  plan: InitPlan;
}

/** The listed tools as the template shows them: name, description, hint states, input schema. */
export function listedTools(listing: ParsedListing): ListedTool[] {
  return listing.contracts.map((c) => ({
    name: c.name,
    description: typeof c.raw.description === "string"
      ? c.raw.description
      : null,
    hints: Object.fromEntries(HINT_NAMES.map((h) => [h, c.hints[h].state])),
    inputSchema: c.raw.inputSchema,
  }));
}

/**
 * The `allow.read` a command needs from a hidden directory (/tmp, /run, the
 * auditor's home) that the sandbox does not find by itself: the nearest
 * `node_modules` above the script, whose packages it imports. (The
 * interpreter's install and its virtualenv are bound at every launch.)
 * Requires `--allow-read`.
 */
async function nodeModulesAllowance(
  scriptDirs: readonly string[],
  home: string | null,
): Promise<{ path: string; why: string }[]> {
  const hidden = ["/tmp", "/run", ...(home && home !== "/" ? [home] : [])];
  for (const start of scriptDirs) {
    for (let d = start;; d = dirname(d)) {
      const candidate = join(d, "node_modules");
      if ((await Deno.stat(candidate).catch(() => null))?.isDirectory) {
        const shown = hidden.some((h) => isWithin(candidate, h)) &&
          !scriptDirs.some((r) => isWithin(candidate, r));
        return shown
          ? [{ path: candidate, why: "the packages the script imports" }]
          : [];
      }
      if (d === "/" || d === ".") break;
    }
  }
  return [];
}

/** What a path on this machine is: a file, a directory, or nothing. */
export async function pathKind(p: string): Promise<PathKind> {
  try {
    const st = await Deno.stat(p);
    return st.isDirectory ? "dir" : st.isFile ? "file" : null;
  } catch {
    return null;
  }
}

/**
 * Start the server sandboxed, list its tools and write
 * `<targetDir>/target.toml`. Throws `ServerError` (exit 2) when the server
 * cannot be started or listed, `InputError` for a refused sandbox or a
 * failed pin.
 *
 * @example
 * ```ts ignore
 * const r = await initTarget(
 *   { command: ["npx", "-y", "@modelcontextprotocol/server-memory"], env: {}, cwd: Deno.cwd(), origin: "npx …" },
 *   { name: "memory", targetDir: "/work/targets/memory", timeoutMs: 30_000 },
 * );
 * ```
 */
export async function initTarget(
  server: InitServer,
  options: InitOptions,
): Promise<InitResult> {
  const { name, targetDir, timeoutMs } = options;
  const say = options.say ?? (() => {});

  const file = join(targetDir, "target.toml");
  const home = Deno.env.get("HOME") ?? null;
  const question = { ...server, home };
  const pathKinds: Record<string, PathKind> = {};
  for (const q of pathQuestions(question)) pathKinds[q] = await pathKind(q);
  const plan = planInit({ ...question, pathKinds });
  // What planInit left as given and cannot run here (uvx, docker run, ...).
  const refusal = runnerRefusal(
    plan.command,
    findOnPath(plan.command[0] ?? "", Deno.env.get("PATH") ?? "") !== null,
  );
  if (refusal !== null && options.noSandbox !== true) {
    throw new ServerError(`verity init: ${refusal}`);
  }
  const allowRead = plan.command[0] === "{deno}"
    ? []
    : await nodeModulesAllowance(plan.read, home);
  for (const a of allowRead) say(`allow.read ${a.path}: ${a.why}`);
  const readPaths = [...plan.read, ...allowRead.map((a) => a.path)];
  await Deno.mkdir(targetDir, { recursive: true });

  let command = plan.command;
  let listCommand = plan.listCommand;
  let source: { package: string; version: string; integrity: string } | null =
    null;
  if (plan.npm !== null) {
    say(
      `pinning ${plan.npm.package}@${plan.npm.range} from the npm registry (network)`,
    );
    const pinned = await pinFromRegistry(plan.npm.package, plan.npm.range);
    source = { package: plan.npm.package, ...pinned };
    command = withVersion(command, pinned.version);
    listCommand = withVersion(listCommand, pinned.version);
    const layout = cacheLayout();
    const fetched = await fetchPinned(
      { ...source, git: null, commit: null },
      {
        layout,
        name,
        targetDir,
        definitionFile: file,
        updateLock: true,
        say,
      },
    );
    await savePreparedTarget(layout, targetDir, fetched.entry);
    say(
      `prepared ${source.package}@${source.version} (${fetched.entry.packages.length} packages locked in ${
        relative(Deno.cwd(), fetched.lockPath)
      })`,
    );
  }

  // The listing run is a provisional target: the same launcher as `verity
  // run` checks the prepared cache, chooses the sandbox and builds the launch.
  const launcher = await openLauncher({
    kind: "target",
    name,
    file,
    dir: targetDir,
    command: listCommand,
    env: plan.listEnv,
    read: readPaths,
    cwd: null,
    allow: { sys: [], run: [] },
    sandbox: null,
    source,
    adapters: [],
  }, {
    noSandbox: options.noSandbox === true,
    commandName: "verity init",
  });
  const backend = launcher.backend;
  const work = await Deno.makeTempDir({ prefix: "verity-init-" });
  let listed: ReturnType<typeof listTools>;
  try {
    const dirs = {
      state: join(work, "state"),
      evidence: join(work, "evidence"),
    };
    await launcher.reset(dirs.state);
    for (const d of plan.listDirs) {
      await Deno.mkdir(join(dirs.state, d), { recursive: true });
    }
    const launch = launcher.launch(
      { state: await Deno.realPath(dirs.state), evidence: dirs.evidence },
      "init",
    );
    say(`listing tools (sandbox: ${backend})`);
    const s = await openSession(launch.spawn, { timeoutMs });
    await s.client.close(2000);
    if (s.failure) {
      const tail = s.client.stderr().text.trim().split("\n").slice(-3).join(
        " | ",
      );
      throw new ServerError(
        `verity init: could not list the server's tools: ${s.failure.message}${
          tail ? ` (stderr: ${tail.slice(0, 400)})` : ""
        }${
          backend !== "none"
            ? "; if it needs what the sandbox denies, try --no-sandbox to see the tools"
            : ""
        }`,
      );
    }
    listed = listTools(s);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
  const tools = listedTools(listed);
  const text = renderTargetTemplate({
    name,
    command,
    env: plan.env,
    read: plan.read,
    allowRead,
    source,
    tools,
    notes: plan.notes,
    generatedBy: `verity ${VERSION} init on ${
      (options.now ?? new Date()).toISOString().slice(0, 10)
    }`,
    origin: server.origin,
  });
  await writeTextFileAtomic(file, text);
  return { file, text, tools, plan };
}
