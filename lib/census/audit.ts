/**
 * Auditing one server of a census, sandboxed and offline: start it from
 * what `verity census prepare` recorded (through the definition launcher,
 * so the prepared-cache check, integrity and sandbox are the ones every
 * audit uses), read its hints from the raw `tools/list` bytes, capture a
 * recipe-3 manifest from the same listing, and run the reality check on
 * scratch state. Any failure to run is a result, never an abort.
 *
 * Requires `--allow-all` (starts sandboxed servers, temporary directories).
 *
 * @module
 */
import { join } from "node:path";
import { InputError } from "../errors.ts";
import { type DefinitionLauncher, openLauncher } from "../launcher/launcher.ts";
import type { LaunchableDefinition } from "../launcher/request.ts";
import { openSession } from "../wire/session.ts";
import { listedPageTexts } from "../wire/list_tools.ts";
import { HINT_NAMES, parseToolPages } from "../contracts/contracts.ts";
import { manifestOfSession } from "../evidence/capture.ts";
import { prettyJson } from "../evidence/canonical.ts";
import { runReality } from "../reality/runner.ts";
import { scratchStateLauncher } from "../reality/target.ts";
import type { CensusEntry, CensusList } from "./list.ts";
import type { ArtifactType } from "./output.ts";
import { auditBehavior } from "./behavior.ts";
import {
  type PreparedServer,
  readPreparedServer,
  serverDir,
} from "./prepare.ts";
import {
  type CensusFailure,
  censusReality,
  type CensusServer,
  type CensusSettings,
  type CensusTool,
  classifyFailure,
  countHints,
  malformedOf,
} from "./result.ts";

/** One audited server: its entry and the artifacts to write (text by relative path). */
export interface AuditedServer {
  server: CensusServer;
  artifacts: { file: string; type: ArtifactType; text: string }[];
}

/** The definition a census server runs from (nothing is read from disk). */
export function censusDefinition(
  list: CensusList,
  entry: CensusEntry,
  cacheRoot: string,
  prepared: PreparedServer | null,
): LaunchableDefinition {
  let command: string[];
  let dir: string;
  let source: Record<string, unknown> | null = null;
  if (entry.command !== null) {
    command = [...entry.command, ...entry.args];
    dir = entry.dir!;
  } else {
    const p = prepared!;
    dir = serverDir(cacheRoot, entry);
    source = {
      package: entry.package!,
      version: entry.version!,
      integrity: p.integrity,
    };
    command = entry.backend === "node"
      ? ["{node}", `{node_modules}/${entry.package}/${p.script}`, ...entry.args]
      : [
        "{deno}",
        "run",
        "--no-config",
        "--frozen",
        "--lock={target}/deno.lock",
        `npm:${entry.package}@${entry.version}${
          p.bin === null ? "" : `/${p.bin}`
        }`,
        ...entry.args,
      ];
  }
  return {
    kind: "target",
    name: entry.slug,
    file: list.file,
    dir,
    command,
    env: { ...entry.env },
    read: [...entry.allow.read],
    cwd: null,
    allow: { sys: [...entry.allow.sys], run: [...entry.allow.run] },
    sandbox: null,
    source,
    adapters: [],
    transport: "stdio",
    url: null,
  };
}

function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e))
    .replace(/^verity( census)?: /, "").split("\n")[0]!.slice(0, 2000);
}

/** A server entry before anything is known: outcome `failed`, no tools. */
export function blankServer(entry: CensusEntry): CensusServer {
  return {
    id: entry.id,
    package: entry.package,
    version: entry.version,
    bin: entry.bin,
    backend: entry.backend,
    integrity: null,
    outcome: "failed",
    failure: null,
    server: null,
    manifest: null,
    tools: [],
    hints: countHints([]),
    malformed: [],
    reality: null,
    timing: { seconds: 0 },
  };
}

/** Options of {@linkcode auditServer}. */
export interface AuditServerOptions {
  cacheRoot: string;
  settings: CensusSettings;
}

/**
 * Audit one server. Never throws for anything the server does: a failure
 * to prepare, launch, list or reality-check is in the returned entry.
 */
export async function auditServer(
  list: CensusList,
  entry: CensusEntry,
  options: AuditServerOptions,
): Promise<AuditedServer> {
  const t0 = performance.now();
  const server = blankServer(entry);
  const artifacts: AuditedServer["artifacts"] = [];
  const done = (failure: CensusFailure | null): AuditedServer => {
    server.failure = failure;
    server.timing.seconds = Math.round((performance.now() - t0) / 100) / 10;
    return { server, artifacts };
  };
  let prepared: PreparedServer | null = null;
  if (entry.package !== null) {
    const p = await readPreparedServer(options.cacheRoot, entry);
    if (p === null || "error" in p) {
      return done({
        stage: "prepare",
        kind: "not_prepared",
        message: p === null
          ? `not prepared: run verity census prepare ${list.file}`
          : p.error,
      });
    }
    prepared = p;
    server.integrity = p.integrity;
    server.bin = p.bin;
  }
  const def = censusDefinition(list, entry, options.cacheRoot, prepared);
  let launcher: DefinitionLauncher;
  try {
    launcher = await openLauncher(def, {
      audit: true,
      cache: { root: options.cacheRoot },
      commandName: "verity census",
    });
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    const m = message(e);
    return done({
      stage: "launch",
      kind: /prepare/.test(m) ? "not_prepared" : "launch_refused",
      message: m,
    });
  }
  const timeoutMs = entry.timeoutS * 1000;
  const scratch = await claimScratch(list.name, entry.slug);
  const work = scratch.dir;
  try {
    const listed = await listServer(launcher, def, work, timeoutMs, server);
    if (typeof listed !== "string") return done(listed);
    artifacts.push({
      file: `servers/${entry.slug}/manifest.json`,
      type: "manifest",
      text: listed,
    });
    let failure: CensusFailure | null = null;
    try {
      const report = await runReality(
        scratchStateLauncher(launcher, join(work, "reality"), timeoutMs),
        {
          seed: options.settings.seed,
          includeDestructive: options.settings.includeDestructive,
          timeoutMs,
          startTimeoutMs: timeoutMs,
          isolateWrites: true,
          server: {
            command: def.command,
            target: null,
            sandbox: launcher.backend,
            scratchState: true,
          },
        },
      );
      const file = `servers/${entry.slug}/reality.json`;
      artifacts.push({
        file,
        type: "reality",
        text: JSON.stringify(report, null, 2) + "\n",
      });
      server.reality = censusReality(file, report.summary);
      server.outcome = "audited";
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      failure = {
        stage: "reality",
        kind: "reality_failed",
        message: message(e),
      };
    }
    if (options.settings.behavior) {
      // The battery: its verdicts onto the listed tools; a failure to learn
      // or run is its result's `failure`, never the census's end.
      try {
        const r = await auditBehavior(
          entry.slug,
          def,
          launcher,
          join(work, "behavior"),
          entry.timeoutS,
        );
        for (const t of server.tools) t.verdicts = r.verdicts.get(t.name) ?? [];
        artifacts.push(...r.artifacts);
        server.behavior = r.behavior;
      } catch (e) {
        // A fault of verity's own is this battery's result too (named so),
        // not the loss of the server's listing.
        const m = message(e);
        server.behavior = {
          failure: {
            kind: !(e instanceof InputError)
              ? "internal_error"
              : /timed out|timeout|no answer in/i.test(m)
              ? "timed_out"
              : "failed",
            message: m,
          },
          report: null,
          target: null,
          stateFiles: 0,
          seeding: null,
          claims: null,
        };
      }
    }
    return done(failure);
  } finally {
    await launcher.close();
    await scratch.release();
  }
}

/**
 * The server's scratch directory: a fixed path per list and server
 * (`<tmp>/verity-census/<list>/<slug>`), so an answer that echoes a path
 * of its state reads the same in every shard and on every machine. An
 * exclusive lock on `<slug>.lock` keeps two censuses of one server on this
 * machine from sharing it (the second waits); the lock dies with its
 * process, and a directory a killed census left is emptied first.
 */
async function claimScratch(
  listName: string,
  slug: string,
): Promise<{ dir: string; release: () => Promise<void> }> {
  const base = join(
    Deno.env.get("TMPDIR") ?? "/tmp",
    "verity-census",
    listName,
  );
  await Deno.mkdir(base, { recursive: true });
  const lock = await Deno.open(join(base, `${slug}.lock`), {
    read: true,
    write: true,
    create: true,
  });
  await lock.lock(true);
  const dir = join(base, slug);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  return {
    dir,
    release: async () => {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      lock.close(); // and with it the lock
    },
  };
}

/**
 * Start the server once, list it, and fill the listing part of `server`
 * (hints, malformed, manifest). Returns the manifest's text, or the
 * failure.
 */
async function listServer(
  launcher: DefinitionLauncher,
  def: LaunchableDefinition,
  work: string,
  timeoutMs: number,
  server: CensusServer,
): Promise<CensusFailure | string> {
  const dirs = {
    state: join(work, "list/state"),
    evidence: join(work, "list/evidence"),
  };
  let started;
  try {
    await Deno.mkdir(dirs.evidence, { recursive: true });
    await launcher.reset(dirs.state);
    started = await launcher.start(dirs, "list", timeoutMs);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return { stage: "launch", kind: "launch_refused", message: message(e) };
  }
  const session = await openSession(started.target, { timeoutMs });
  const capturedAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const client = session.client as { stderr?: () => { text: string } };
  await session.client.close(1000);
  const stderr = typeof client.stderr === "function"
    ? client.stderr().text
    : "";
  if (session.failure) {
    return {
      stage: "list",
      kind: classifyFailure(
        session.failure.reason,
        session.failure.message,
        stderr,
      ),
      message: session.failure.message.slice(0, 2000),
    };
  }
  const manifest = manifestOfSession(session, {
    command: def.command,
    capturedAt,
    recipe: "3",
  });
  const listing = parseToolPages(listedPageTexts(session));
  const tools: CensusTool[] = listing.contracts.map((c) => ({
    name: c.name,
    hints: Object.fromEntries(
      HINT_NAMES.map((h) => [h, c.hints[h].toJSON()]),
    ) as CensusTool["hints"],
  }));
  server.tools = tools;
  server.hints = countHints(tools);
  server.malformed = malformedOf(tools);
  server.server = {
    name: manifest.server.name,
    version: manifest.server.version,
    protocolVersion: manifest.server.protocol_version,
  };
  server.manifest = {
    file: `servers/${def.name}/manifest.json`,
    tools: manifest.tools.length,
    problems: manifest.problems.length,
  };
  server.outcome = "partial";
  return prettyJson(manifest) + "\n";
}
