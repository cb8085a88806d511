/**
 * The reality runner: the only reality code that spawns processes. It lists
 * the tools, plans (pure), calls each planned tool once, and hands the
 * observations to the pure report builder.
 *
 * Requires `--allow-run` (the server) and whatever the launcher needs.
 *
 * @module
 */
import { listedPageTexts, listTools } from "../wire/list_tools.ts";
import type { Launch } from "../sandbox/types.ts";
import {
  auditLogOver,
  MAX_AUDIT_LOG_BYTES,
  readAuditLogHead,
} from "../sandbox/sandbox.ts";
import {
  type PrivilegeUse,
  privilegeUse,
  sliceLog,
} from "../sandbox/privilege.ts";
import { ServerError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { type OpenedSession, openSession } from "../wire/session.ts";
import type { SpawnSpec } from "../wire/stdio_client.ts";
import type { McpClient } from "../wire/client.ts";
import {
  type ArgumentsFrom,
  callLabel,
  type DefinitionArguments,
  planReality,
  type RealityPlannedCall,
  type RealityPlannedTool,
} from "./plan.ts";
import {
  buildReport,
  type ObservedCall,
  type RealityReport,
  type RealityServer,
} from "./report.ts";
import type { RealityCallObservation } from "./rules.ts";

/** A server process ready to spawn, and how to clean up after it. */
export interface LaunchedServer {
  /** A process to spawn over stdio, or a started client (HTTP). */
  spec: SpawnSpec | McpClient;
  /**
   * The sandboxed launch behind `spec` (its permission audit log and
   * policy), when there is one: each call's privilege use is read from it.
   * @default {undefined: privilege use not recorded}
   */
  launch?: Launch;
  /** Called after the session is closed (e.g. removes a scratch state directory). */
  dispose(): Promise<void>;
  /**
   * The arguments to send for a definition's argument set in this session
   * (its placeholders, such as `{state}`, resolved).
   * @default {the arguments unchanged}
   */
  resolveArguments?(args: Record<string, unknown>): Record<string, unknown>;
}

/** What a session is for: the shared one (listing and read-only calls) or one call of a write tool. */
export type LaunchPurpose = { kind: "shared" } | {
  kind: "isolated";
  tool: string;
  /** The call's label: `tool`, or `tool[variant]` for a definition's variant. */
  call: string;
};

/** Starts server processes for the runner. */
export interface ServerLauncher {
  launch(purpose: LaunchPurpose): Promise<LaunchedServer>;
}

/** Options for {@linkcode runReality}. */
export interface RunRealityOptions {
  /** Seed for argument generation. */
  seed: number;
  /** Call tools that are not declared read-only. */
  includeDestructive: boolean;
  /** Milliseconds to wait for each answer. */
  timeoutMs: number;
  /**
   * Milliseconds to wait for `initialize` and `tools/list`.
   * @default {timeoutMs}
   */
  startTimeoutMs?: number;
  /**
   * Give every non-read-only call its own fresh server (and, through the
   * launcher, its own fresh state).
   * @default {false}
   */
  isolateWrites?: boolean;
  /** Report fields describing the server. */
  server: Omit<RealityServer, "serverInfo">;
  /**
   * The definition's argument sets (`[[tools]]`): each tool given any is
   * called with every one of them, and gets no generated arguments.
   * @default {[]}
   */
  argumentSets?: readonly DefinitionArguments[];
  /**
   * Told the listed tool names before any call; throws to refuse the run
   * (a definition naming a tool the server does not list).
   * @default {undefined}
   */
  checkListing?: (names: readonly string[]) => void;
  /**
   * Milliseconds the shared session (listing and every read-only call,
   * restarts included) may take in all; past it the call in flight ends
   * and the remaining shared tools are not called, and the report's
   * `ended` says so. Each isolated write-tool session has its own deadline.
   * @default {DEFAULT_SESSION_DEADLINE_MS}
   */
  sessionDeadlineMs?: number;
  /**
   * Told the listing and every call with the privilege use the sandbox saw
   * while it was in flight (`verity reality --observed-out`).
   * @default {undefined}
   */
  observer?: RealityObserver;
}

/** One call as `verity reality --observed-out` records it. */
export interface RealityCallRecord {
  tool: string;
  /** Where the arguments came from. */
  argumentsFrom: ArgumentsFrom;
  /** As sent. */
  arguments: Record<string, unknown>;
  observation: RealityCallObservation;
  session: string;
  /** Null when the launch keeps no permission log and none was described (a remote server). */
  privilege: PrivilegeUse | null;
}

/** Receives the observed side of a reality check. */
export interface RealityObserver {
  listing(pageTexts: string[], serverInfo: unknown): void;
  call(record: RealityCallRecord): void;
}

/** The shared session's default deadline (`--session-deadline`), ms. */
export const DEFAULT_SESSION_DEADLINE_MS = 600_000;

interface Live {
  session: OpenedSession;
  launched: LaunchedServer;
  label: string;
}

async function open(
  launcher: ServerLauncher,
  purpose: LaunchPurpose,
  label: string,
  timeoutMs: number,
  deadlineMs: number | null = null,
): Promise<Live> {
  const launched = await launcher.launch(purpose);
  const session = await openSession(launched.spec, { timeoutMs, deadlineMs });
  return { session, launched, label };
}

async function close(live: Live | null): Promise<void> {
  if (live === null) return;
  try {
    await live.session.client.close(1000);
  } finally {
    await live.launched.dispose();
  }
}

/** The audit log's length in bytes now (0 when there is none yet). */
async function logLength(path: string | null): Promise<number> {
  return path === null ? 0 : await Deno.stat(path).then((s) => s.size, () => 0);
}

/** The privilege use in bytes [from, to) of a launch's audit log. */
async function privilegeBetween(
  launch: Launch | undefined,
  from: number,
  to: number,
): Promise<PrivilegeUse | null> {
  if (launch === undefined) return null;
  const stateDir = launch.policy?.writable[0] ?? null;
  if (launch.auditLog === null) return privilegeUse(null, launch, stateDir);
  // Read up to the log's budget, never whole.
  const head = await readAuditLogHead(launch.auditLog);
  if (head === null) {
    const u = privilegeUse(null, launch, stateDir);
    u.unseen.unshift(`the audit log ${launch.auditLog} is missing`);
    return u;
  }
  const u = privilegeUse(
    sliceLog(head.bytes, [{ from, to }])[0]!,
    launch,
    stateDir,
  );
  if (head.size > MAX_AUDIT_LOG_BYTES) {
    u.unseen.unshift(auditLogOver(head.size));
  }
  return u;
}

/** The arguments a planned call sends in a session. */
function argumentsIn(
  live: Live,
  call: RealityPlannedCall,
): Record<string, unknown> {
  const resolve = live.launched.resolveArguments;
  return call.from.kind === "definition" && resolve !== undefined
    ? resolve.call(live.launched, call.arguments)
    : call.arguments;
}

async function callTool(
  live: Live,
  tool: RealityPlannedTool,
  call: RealityPlannedCall,
  timeoutMs: number,
  observer?: RealityObserver,
): Promise<ObservedCall> {
  const auditLog = live.launched.launch?.auditLog ?? null;
  const from = await logLength(auditLog);
  const args = argumentsIn(live, call);
  const out = await live.session.client.request(
    "tools/call",
    { name: tool.name, arguments: args },
    timeoutMs,
  );
  const ms = Math.round(out.ms);
  const observation: RealityCallObservation = out.status === "ok"
    ? { kind: "result", result: out.result, ms }
    : out.status === "error"
    ? { kind: "rpc_error", error: out.error, ms }
    : {
      kind: "no_answer",
      message: `${out.failure.reason}: ${out.failure.message}`,
      ms,
    };
  if (observer !== undefined) {
    const to = await logLength(auditLog);
    observer.call({
      tool: tool.name,
      argumentsFrom: call.from,
      arguments: args,
      observation,
      session: live.label,
      privilege: await privilegeBetween(live.launched.launch, from, to),
    });
  }
  return { observation, session: live.label, arguments: args };
}

/**
 * Run a reality check: list, plan, call, judge, score.
 * Throws {@linkcode ServerError} (exit 2) when the server cannot be listed.
 *
 * @example
 * ```ts ignore
 * const report = await runReality(launcher, { seed: 1, includeDestructive: false, timeoutMs: 30_000, server });
 * ```
 */
export async function runReality(
  launcher: ServerLauncher,
  options: RunRealityOptions,
): Promise<RealityReport> {
  const maxRestarts = 3;
  const startMs = options.startTimeoutMs ?? options.timeoutMs;
  const deadlineMs = options.sessionDeadlineMs ?? DEFAULT_SESSION_DEADLINE_MS;
  const deadlineAt = performance.now() + deadlineMs;
  const left = () => deadlineAt - performance.now();
  const deadlineText = `the shared session's deadline of ${
    (deadlineMs / 1000).toFixed(1)
  } s passed`;
  let ended: string | null = null;
  // A stdio server is also killed at the deadline by its client (HTTP:
  // every request's timeout is cut to what is left).
  let shared: Live | null = await open(
    launcher,
    { kind: "shared" },
    "shared-1",
    startMs,
    deadlineMs,
  );
  let sharedCount = 1;
  const calls = new Map<string, ObservedCall[]>();
  const record = (tool: string, c: ObservedCall) =>
    calls.set(tool, [...(calls.get(tool) ?? []), c]);
  let plan: RealityPlannedTool[];
  let listingProblems: string[];
  let serverInfo: unknown;
  try {
    if (shared.session.failure) {
      const f = shared.session.failure;
      throw new ServerError(`cannot list the server's tools: ${f.message}`);
    }
    serverInfo = shared.session.serverInfo;
    options.observer?.listing(listedPageTexts(shared.session), serverInfo);
    const listing = listTools(shared.session);
    listingProblems = listing.problems;
    if (listing.contracts.length === 0 && listing.problems.length > 0) {
      throw new ServerError(
        `cannot list the server's tools: ${listing.problems.join("; ")}`,
      );
    }
    options.checkListing?.(listing.contracts.map((c) => c.name));
    plan = planReality(listing.contracts, {
      seed: options.seed,
      includeDestructive: options.includeDestructive,
      argumentSets: options.argumentSets ?? [],
    });
    let sharedGaveUp: string | null = null;
    for (
      const { tool, call } of plan.flatMap((t) =>
        t.calls.map((call) => ({ tool: t, call }))
      )
    ) {
      if (options.isolateWrites === true && !tool.readOnly) {
        let live: Live | null = null;
        const label = callLabel(tool.name, call.from);
        try {
          live = await open(
            launcher,
            { kind: "isolated", tool: tool.name, call: label },
            `isolated:${label}`,
            startMs,
            // One call: opening, listing, the call, and a margin.
            2 * startMs + options.timeoutMs + 10_000,
          );
          const observed: ObservedCall = live.session.failure
            ? {
              observation: {
                kind: "no_answer",
                message:
                  `fresh server did not start: ${live.session.failure.message}`,
                ms: 0,
              },
              session: live.label,
              arguments: argumentsIn(live, call),
            }
            : await callTool(
              live,
              tool,
              call,
              options.timeoutMs,
              options.observer,
            );
          record(tool.name, observed);
        } finally {
          await close(live);
        }
        continue;
      }
      if (left() <= 0 && ended === null) {
        ended = `deadline: ${deadlineText}`;
        sharedGaveUp = `not called: ${deadlineText}`;
      }
      if (
        sharedGaveUp === null &&
        (shared === null || shared.session.client.failure !== null)
      ) {
        await close(shared);
        shared = null;
        if (sharedCount > maxRestarts) {
          sharedGaveUp =
            `not called: the server stopped answering ${maxRestarts} times`;
        } else {
          sharedCount++;
          shared = await open(
            launcher,
            { kind: "shared" },
            `shared-${sharedCount}`,
            Math.min(startMs, Math.max(1, left())),
            Math.max(1, left()),
          );
          if (shared.session.failure) {
            sharedGaveUp =
              `not called: the server could not be started again (${shared.session.failure.message})`;
          }
        }
      }
      if (sharedGaveUp !== null || shared === null) {
        record(tool.name, {
          observation: { kind: "no_answer", message: sharedGaveUp!, ms: 0 },
          session: "none",
        });
        continue;
      }
      const observed = await callTool(
        shared,
        tool,
        call,
        Math.max(1, Math.min(options.timeoutMs, left())),
        options.observer,
      );
      if (observed.observation.kind === "no_answer" && left() <= 1) {
        // Cut by the deadline, not by the per-answer timeout: named so.
        observed.observation = {
          ...observed.observation,
          message: `deadline: ${deadlineText}`,
        };
        ended = `deadline: ${deadlineText} while ${
          callLabel(tool.name, call.from)
        } was called`;
        sharedGaveUp = `not called: ${deadlineText}`;
      }
      record(tool.name, observed);
    }
  } finally {
    await close(shared);
  }
  if (ended !== null) {
    const notCalled = [...calls.values()].flat().filter((c) =>
      c.observation.kind === "no_answer" &&
      c.observation.message === `not called: ${deadlineText}`
    ).length;
    ended += `; ${notCalled} tool(s) not called`;
  }
  return buildReport({
    verity: VERSION,
    server: { ...options.server, serverInfo },
    options: {
      seed: options.seed,
      includeDestructive: options.includeDestructive,
      timeoutS: options.timeoutMs / 1000,
    },
    plan,
    calls,
    listingProblems,
    ended,
  });
}
