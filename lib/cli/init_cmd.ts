/**
 * `verity init`: start a server sandboxed, list its tools, and write a
 * starting `target.toml` with a `TODO(verity)` value for everything only a
 * person can decide. The server comes from a command line or from an MCP
 * client's configuration file (`mcpServers` in Claude Desktop and Cursor,
 * `servers` in VS Code).
 *
 * An npm server (`npx …`, `deno run npm:…`) is pinned to the exact version
 * the registry gives today and prepared like `verity prepare` does (the
 * one networked part); the listing itself runs offline in the sandbox.
 *
 * Requires `--allow-all` (starts the server, runs npm and deno, writes files).
 *
 * @module
 */
import { basename, dirname, join, relative, resolve } from "node:path";
import {
  parseCommandLine,
  type ParsedCommandLine,
  parseEnvPairs,
  parseSeconds,
} from "./args.ts";
import { ServerError, UsageError } from "../errors.ts";
import { writeFileAtomic } from "./_io.ts";
import { openSession } from "../wire/session.ts";
import { listTools } from "../wire/list_tools.ts";
import {
  readConfiguredServer,
  wrapConfiguredServer,
} from "../init/mcp_config.ts";
import { selfCommand } from "../runner/self.ts";
import { TODO } from "../definition/types.ts";
import { renderTargetTemplate } from "../init/init_template.ts";
import { initTarget, listedTools, pathKind } from "../init/init.ts";
import { VERSION } from "../version.ts";
import { learnTarget } from "../init/learn.ts";
import { renderLearned } from "../init/learn_plan.ts";
import { markOwner } from "../common/owner.ts";
import { cacheLayout, savePreparedTarget } from "../prepare/local.ts";
import { LOCK_FILE } from "../prepare/source.ts";
import { terminalText } from "../common/show_controls.ts";
import {
  listOption,
  parseRemote,
  refuseWithUrl,
  REMOTE_OPTIONS,
  remoteClient,
  type RemoteServer,
} from "./remote.ts";

interface ServerSpec {
  command: string[];
  env: Record<string, string>;
  cwd: string;
  origin: string;
  defaultName: string | null;
  /** A config's remote entry: listed as `init --url` would. */
  remote?: RemoteServer;
}

async function serverSpec(p: ParsedCommandLine): Promise<ServerSpec> {
  const extraEnv = parseEnvPairs("init", p.values.env);
  const from = p.values["from-config"];
  const server = p.values.server;
  if (from !== undefined) {
    if (p.serverCommand !== null) {
      throw new UsageError(
        "verity init: give either --from-config or a command after --, not both",
      );
    }
    if (typeof server !== "string" || server === "") {
      throw new UsageError(
        "verity init: --from-config needs --server <name> (which server of the file)",
      );
    }
    const { file, text } = await readClientConfig(String(from));
    const s = readConfiguredServer(text, file, server);
    if (s.url !== null) {
      const header = Object.entries(s.headers).map(([k, v]) => {
        if (/\$\{/.test(v)) {
          throw new UsageError(
            `verity init: ${file}: ${s.table}.${
              JSON.stringify(s.name)
            }.headers.${k}: a client variable verity cannot expand; pass the value with --header-env ${k}=ENV_VAR`,
          );
        }
        return `${k}=${v}`;
      });
      const remote = parseRemote("init", {
        positionals: [],
        serverCommand: null,
        values: {
          url: s.url,
          header: [...header, ...listOption(p.values.header)],
          "header-env": p.values["header-env"],
        },
      })!;
      return {
        command: [],
        env: {},
        cwd: Deno.cwd(),
        origin: `${basename(file)} ${s.table}.${JSON.stringify(s.name)}`,
        defaultName: s.name,
        remote,
      };
    }
    return {
      command: [s.command, ...s.args],
      env: { ...s.env, ...extraEnv },
      cwd: s.cwd !== null ? resolve(dirname(file), s.cwd) : Deno.cwd(),
      origin: `${basename(file)} ${s.table}.${JSON.stringify(s.name)}: ${
        [s.command, ...s.args].join(" ")
      }`,
      defaultName: s.name,
    };
  }
  if (server !== undefined) {
    throw new UsageError("verity init: --server needs --from-config <file>");
  }
  if (p.serverCommand === null || p.serverCommand.length === 0) {
    throw new UsageError(
      "verity init: missing server: put its command after --, or use --from-config <file> --server <name>",
    );
  }
  return {
    command: p.serverCommand,
    env: extraEnv,
    cwd: Deno.cwd(),
    origin: p.serverCommand.join(" "),
    defaultName: null,
  };
}

/** The new target's directory, file and name; refuses an existing file (without `--force`) and a bad name. */
async function newTarget(
  p: ParsedCommandLine,
  defaultName: string | null,
): Promise<{ targetDir: string; file: string; name: string }> {
  if (p.positionals.length !== 1) {
    throw new UsageError(
      "verity init: expected one directory for the new target.toml",
    );
  }
  const targetDir = resolve(p.positionals[0]!);
  const file = join(targetDir, "target.toml");
  if (!p.values.force && await pathKind(file) !== null) {
    throw new UsageError(
      `verity init: ${file} exists; pass --force to overwrite it`,
    );
  }
  const name = String(p.values.name ?? defaultName ?? basename(targetDir));
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
    throw new UsageError(
      `verity init: target name ${
        JSON.stringify(name)
      } must be letters, digits, ".", "_" or "-" (use --name)`,
    );
  }
  return { targetDir, file, name };
}

/**
 * `verity init <dir> --url URL` (or a config's `url` entry): list a remote
 * server, write a local HTTP target template.
 */
async function initRemote(
  p: ParsedCommandLine,
  remote: RemoteServer,
  defaultName: string | null,
): Promise<number> {
  refuseWithUrl("init", p, ["env", "no-sandbox"]);
  const { targetDir, file, name } = await newTarget(p, defaultName);
  const timeoutMs = parseSeconds("init", "timeout", p.values.timeout, 30);
  console.error(`verity: listing tools of ${remote.shownUrl} (HTTP)`);
  const s = await openSession(remoteClient(remote), { timeoutMs });
  await s.client.close(2000);
  if (s.failure) {
    throw new ServerError(
      `verity init: could not list the tools of ${remote.shownUrl}: ${s.failure.message}`,
    );
  }
  const tools = listedTools(listTools(s));
  const path = new URL(remote.url).pathname;
  const text = renderTargetTemplate({
    name,
    command: [
      `${TODO}: the command that starts this server locally over HTTP on port {port}`,
    ],
    env: {},
    read: [],
    source: null,
    tools,
    notes: [
      `tools listed from the remote server ${remote.shownUrl}; a remote server cannot be reset, so the audit runs a local copy`,
    ],
    generatedBy: `verity ${VERSION} init on ${
      new Date().toISOString().slice(0, 10)
    }`,
    origin: `--url ${remote.shownUrl}`,
    httpUrl: `http://127.0.0.1:{port}${path === "" ? "/" : path}`,
  });
  await Deno.mkdir(targetDir, { recursive: true });
  await writeFileAtomic(file, text);
  console.log(
    `wrote ${
      relative(Deno.cwd(), file) || file
    }: ${tools.length} tool(s) listed over HTTP; fill in every ${TODO} value (the local command first)`,
  );
  return 0;
}

/** The guard's options `--wrap` writes into the entry, paths made absolute. */
const WRAP_OPTIONS = [
  "manifest",
  "attestation",
  "key",
  "report",
  "policy",
  "ledger",
  "state",
  "definition",
] as const;

/**
 * `verity init --from-config F --server NAME --wrap ...`: rewrite that
 * entry to start through `verity guard`, the file as it was kept beside it.
 */
async function wrap(p: ParsedCommandLine): Promise<number> {
  const from = p.values["from-config"];
  const name = p.values.server;
  if (typeof from !== "string" || typeof name !== "string") {
    throw new UsageError(
      "verity init: --wrap needs --from-config <file> --server <name>",
    );
  }
  if (p.positionals.length > 0 || p.serverCommand !== null) {
    throw new UsageError(
      "verity init: --wrap rewrites the configuration file; it takes no directory or command",
    );
  }
  if (p.values.ledger === undefined) {
    throw new UsageError(
      "verity init: --wrap needs --ledger FILE for the guard",
    );
  }
  const { file, text } = await readClientConfig(from);
  const options: string[] = [];
  for (const k of WRAP_OPTIONS) {
    const v = p.values[k];
    if (typeof v === "string") options.push(`--${k}`, resolve(v));
  }
  for (const k of Object.keys(readConfiguredServer(text, file, name).env)) {
    options.push("--pass-env", k);
  }
  if (p.values["no-sandbox"]) options.push("--no-sandbox");
  const wrapped = wrapConfiguredServer(
    text,
    file,
    name,
    selfCommand("guard"),
    options,
  );
  const backup = `${file}.before-guard`;
  if (await pathKind(backup) === null) await writeFileAtomic(backup, text);
  await writeFileAtomic(file, wrapped);
  console.log(
    `wrapped ${
      JSON.stringify(name)
    } in ${file}: it now starts through verity guard (its command kept after --; the file as it was: ${backup})`,
  );
  return 0;
}

/** Run `verity init`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("init", argv, {
    name: { type: "string" },
    env: { type: "string", multiple: true },
    "from-config": { type: "string" },
    server: { type: "string" },
    force: { type: "boolean" },
    "no-sandbox": { type: "boolean" },
    timeout: { type: "string" },
    wrap: { type: "boolean" },
    learn: { type: "boolean" },
    ...Object.fromEntries(
      WRAP_OPTIONS.map((k) => [k, { type: "string" as const }]),
    ),
    ...REMOTE_OPTIONS,
  });
  if (p.values.wrap) return await wrap(p);
  for (const k of WRAP_OPTIONS) {
    if (p.values[k] !== undefined) {
      throw new UsageError(`verity init: --${k} goes with --wrap`);
    }
  }
  // With --from-config, --header and --header-env go to a `url` entry.
  const fromConfig = p.values["from-config"] !== undefined;
  if (fromConfig && p.values.url !== undefined) {
    throw new UsageError(
      "verity init: give either --url or --from-config, not both",
    );
  }
  const remote = fromConfig ? null : parseRemote("init", {
    ...p,
    positionals: [],
  });
  if (remote !== null) return await initRemote(p, remote, null);
  // The directory is checked first (the count here, the rest below).
  if (p.positionals.length !== 1) await newTarget(p, null);
  const timeoutMs = parseSeconds("init", "timeout", p.values.timeout, 30);
  const spec = await serverSpec(p);
  if (spec.remote) return await initRemote(p, spec.remote, spec.defaultName);
  const { targetDir, file, name } = await newTarget(p, spec.defaultName);
  if (p.values.learn) return await learn(p, spec, targetDir, file, name);
  const { text, tools, plan } = await initTarget(spec, {
    name,
    targetDir,
    timeoutMs,
    noSandbox: p.values["no-sandbox"] === true,
    say: (s: string) => console.error(`verity: ${s}`),
  });
  const todoLines = text.split("\n").filter((l) =>
    !l.trimStart().startsWith("#") && l.includes(TODO)
  );
  console.log(
    `wrote ${
      relative(Deno.cwd(), file) || file
    }: ${tools.length} tool(s), ${todoLines.length} line(s) with ${TODO} to decide`,
  );
  for (const t of plan.todos) {
    console.log(`  ${t}: needs a decision (see its ${TODO})`);
  }
  console.log(
    `next: fill in every ${TODO} value (arguments, [state], [[adapters]], seeds), then`,
  );
  console.log(`  verity run ${p.positionals[0]} --audit`);
  return 0;
}

/**
 * `verity init <dir> --learn -- <command...>`: write what an audit with no
 * definition learns (state locations, file kinds, the seed seeding by use
 * made, the argument sets that reached real records) as the target.
 */
async function learn(
  p: ParsedCommandLine,
  spec: ServerSpec,
  targetDir: string,
  file: string,
  name: string,
): Promise<number> {
  const scratch = await Deno.makeTempDir({ prefix: "verity-learn-" });
  await markOwner(scratch);
  try {
    const l = await learnTarget(spec.command, {
      dir: targetDir,
      workDir: scratch,
      env: spec.env,
      name,
      noSandbox: p.values["no-sandbox"] === true,
      say: (s: string) => console.error(`verity: ${s}`),
    });
    if (l.prepared !== null) {
      // Its lockfile is a copy of the one just verified: the target is
      // prepared as `verity prepare` would record it, so it runs offline.
      const { entry } = l.prepared;
      await savePreparedTarget(cacheLayout(), targetDir, {
        ...entry,
        definition: file,
        lock: { ...entry.lock, file: join(targetDir, LOCK_FILE) },
      });
    }
    console.log(terminalText(renderLearned({ ...l, target: file })));
    console.log(
      `wrote ${
        relative(Deno.cwd(), file) || file
      }: ${l.files.length} state file(s) seeded by use, ${l.calls.length} argument set(s); next: verity run ${
        p.positionals[0]
      } --audit`,
    );
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
  return 0;
}

/** A client config file's absolute path and text (unreadable: a usage error naming it). */
async function readClientConfig(
  from: string,
): Promise<{ file: string; text: string }> {
  const file = resolve(from);
  try {
    return { file, text: await Deno.readTextFile(file) };
  } catch (e) {
    throw new UsageError(
      `verity init: ${file}: cannot read: ${(e as Error).message}`,
    );
  }
}
