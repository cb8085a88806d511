/**
 * The runner: the only code that executes a plan. It resets state and starts
 * servers through its launcher, calls tools, observes state through its
 * observer after each server exits and appends everything to the run's
 * history. Deciding is left to the pure verdict engine.
 *
 * Requires `--allow-run --allow-read --allow-write --allow-env`.
 *
 * @module
 */
import { exclusionsOf } from "../state/exclude.ts";
import { join } from "node:path";
import type { Definition } from "../definition/types.ts";
import type { DefinitionLauncher } from "../launcher/launcher.ts";
import { serverUrl } from "../launcher/request.ts";
import { hasPlaceholder, substituteDeep } from "../definition/placeholders.ts";
import { pool } from "../common/pool.ts";
import type { StateObserver } from "../state_io/observer.ts";
import { listingChanges, sameListing } from "../contracts/listing_changes.ts";
import {
  auditLogOver,
  collectEvidence,
  MAX_AUDIT_LOG_BYTES,
  readAuditLogHead,
} from "../sandbox/sandbox.ts";
import {
  type LogSpan,
  type PrivilegeUse,
  privilegeUse,
  sliceLog,
} from "../sandbox/privilege.ts";
import type { Launch } from "../sandbox/types.ts";
import { openSession } from "../wire/session.ts";
import type { HttpExchange } from "../wire/http_client.ts";
import { freeLoopbackPort } from "../wire/local_http.ts";
import type { McpClient } from "../wire/client.ts";
import type { RpcOutcome, SpawnSpec } from "../wire/stdio_client.ts";
import type { Frame } from "../wire/frames.ts";
import { HINT_NAMES, parseToolPages } from "../contracts/contracts.ts";
import type {
  AttemptObservation,
  CallObservation,
  DeclaredHint,
  DefinitionObservations,
  RunHistory,
  SessionObservation,
  SessionRecord,
} from "../history/types.ts";
import { MAX_HTTP_EXCHANGES } from "../history/types.ts";
import { classifyAnswer } from "../history/call_outcome.ts";
import { requiresTask } from "../contracts/task_support.ts";
import {
  planConcurrent,
  planControl,
  type PlannedSession,
  type PlannedTool,
  planSequential,
  wantsConcurrent,
} from "./plan.ts";
import { attemptDeadlineMs, type OverlapSpec } from "./overlap_timer.ts";
import { groupObservations } from "./group.ts";
import { OverlapTimerPool } from "./overlap_pool.ts";

/** Options for {@linkcode runBattery}. */
export interface RunnerOptions {
  /** Runs per session kind (validated >= 3 by the caller). */
  runs: number;
  /** Sessions in parallel. */
  jobs: number;
  /** Concurrent attempts per mode. */
  concurrentAttempts: number;
  /** Record concurrent attempts for tools without an idempotence claim. */
  observeConcurrent: boolean;
  /** Starts the definition's servers: reset, placeholders, sandbox (see `openLauncher`). */
  launcher: SessionLauncher;
  /**
   * Everything the run knows of state: it verifies the reset, names the
   * state each session left and holds the states (`lib/state_io/observer.ts`).
   */
  observer: StateObserver;
  /** Scratch root for state and evidence directories. */
  workDir: string;
  /** Progress lines (to stderr), or null for silence. */
  progress: ((line: string) => void) | null;
  /**
   * Called when a session starts and when it ends, with the sessions done
   * so far and the total planned (the concurrent attempts join the total
   * once the sequential sessions have decided them).
   */
  onSession?: (tick: SessionTick) => void;
  /**
   * Called with the listed tool names once the control sessions have
   * listed them, before any tool is called; throw to stop the run.
   */
  checkListing?: (listed: string[]) => void;
  /**
   * Milliseconds spent per phase of the sessions, summed over every
   * session (`dirs`, `reset`, `launch` (building the sandboxed launch),
   * `server`, `evidence`, `snapshot`, `cleanup`; `timer`: the overlap
   * timer's time beyond its servers' span; `verify_reset`: once per run),
   * when given: where the fixed cost per session goes
   * (scripts/bench_overhead.ts).
   */
  phases?: Record<string, number>;
}

/** What the runner needs of a launcher: a {@linkcode DefinitionLauncher}, or a fake in tests. */
export type SessionLauncher = Pick<
  DefinitionLauncher,
  | "backend"
  | "reset"
  | "release"
  | "placeholders"
  | "launch"
  | "start"
  | "startState"
  | "close"
>;

/** Where a run is: for a progress display. */
export interface SessionTick {
  done: number;
  total: number;
  phase: "control" | "sequential" | "concurrent";
  /** The tool (and variant) of the session that started last; null for control. */
  tool: string | null;
}

interface Ctx {
  def: Definition;
  opts: RunnerOptions;
  sessions: SessionRecord[];
  seq: number;
  timers: OverlapTimerPool;
  /** Scratch directory removals under way (awaited when the battery ends). */
  cleanups: Promise<void>[];
  /** The first reset's directories, while the observer reads them as the seed. */
  seedDirs: ScratchDirs | null;
}

function describeFrame(f: Frame | undefined): string | null {
  return f ? f.text ?? `base64:${f.base64}` : null;
}

/** A session's scratch directories: `root` holds `state` and `evidence`. */
interface ScratchDirs {
  root: string;
  state: string;
  evidence: string;
  /** The run's work directory: every session's directories are in it. */
  siblings: string;
}

/** Add the time since `t` to a phase (when phases are measured); returns now. */
function phase(ctx: Ctx, name: string, t: number): number {
  const now = performance.now();
  const p = ctx.opts.phases;
  if (p) p[name] = (p[name] ?? 0) + (now - t);
  return now;
}

async function makeDirs(ctx: Ctx, id: string): Promise<ScratchDirs> {
  const n = ++ctx.seq;
  const root = join(ctx.opts.workDir, `${String(n).padStart(5, "0")}-${id}`);
  const evidence = join(root, "evidence");
  await Deno.mkdir(evidence, { recursive: true });
  return {
    root,
    state: join(root, "state"),
    evidence,
    siblings: ctx.opts.workDir,
  };
}

async function removeDirs(ctx: Ctx, dirs: ScratchDirs): Promise<void> {
  await ctx.opts.launcher.release(dirs.state);
  await Deno.remove(dirs.root, { recursive: true }).catch(() => {});
}

/** Record a finished session (whatever its outcome) and drop its scratch dirs. */
function finishSession(
  ctx: Ctx,
  record: SessionRecord,
  dirs: ScratchDirs,
  t0: number,
): void {
  const t = performance.now();
  record.wallMs = t - t0;
  ctx.sessions.push(record);
  // Off the session's path: the next session starts while this one's
  // scratch directories go (the battery waits for every removal at its end).
  ctx.cleanups.push(
    removeDirs(ctx, dirs).finally(() => phase(ctx, "cleanup", t)),
  );
}

/** The tool's arguments for one session: placeholders (`{state}`) resolved. */
function argumentsFor(
  ctx: Ctx,
  tool: PlannedTool,
  stateDir: string,
): Record<string, unknown> {
  const vars = ctx.opts.launcher.placeholders(stateDir);
  return substituteDeep(tool.arguments, vars) as Record<
    string,
    unknown
  >;
}

/**
 * Observe the state a session left: its digest, how (`record.stateMethod`),
 * and what it changed outside its state directory (`obs.changeset`).
 */
async function observeState(
  ctx: Ctx,
  stateDir: string,
  record: SessionRecord,
  obs: { stateDigest: string | null; changeset?: string | null },
): Promise<void> {
  const o = await ctx.opts.observer.observe(stateDir);
  record.stateMethod = { method: o.method, why: o.why };
  obs.stateDigest = o.digest;
  if (o.changeset !== undefined) obs.changeset = o.changeset;
}

function toCall(o: RpcOutcome): CallObservation {
  const { status, message } = classifyAnswer(o);
  if (o.status === "unknown") {
    const ended = o.failure.reason;
    return { status, frameIndex: null, ms: o.ms, message, ended };
  }
  const { frameIndex, ms } = o;
  if (o.status !== "ok") return { status, frameIndex, ms, message };
  const response = (JSON.stringify(o.result) ?? "null").slice(0, 4096);
  return { status, frameIndex, ms, message, response };
}

/**
 * Look at the audit log's size every 50 ms; past {@linkcode MAX_AUDIT_LOG_BYTES}
 * call `over` once (it ends the session). Returns the function that stops
 * the watch (after it, `over` is never called).
 */
function watchAuditLog(
  path: string | null,
  over: (size: number) => void,
): () => void {
  let done = path === null;
  const id = setInterval(() => {
    if (done) return;
    void logLength(path).then((size) => {
      if (done || size <= MAX_AUDIT_LOG_BYTES) return;
      done = true;
      over(size);
    });
  }, 50);
  return () => {
    done = true;
    clearInterval(id);
  };
}

/** The audit log's length in bytes now (0 when there is none yet). */
async function logLength(path: string | null): Promise<number> {
  if (path === null) return 0;
  try {
    return (await Deno.stat(path)).size;
  } catch {
    return 0;
  }
}

/** Each call's privilege use, from the slice of the log it was in flight for. */
function callPrivileges(
  launch: Launch,
  spans: LogSpan[],
  bytes: Uint8Array | null,
): PrivilegeUse[] {
  const stateDir = launch.policy?.writable[0] ?? null;
  if (bytes === null) {
    return spans.map(() => {
      const u = privilegeUse(null, launch, stateDir);
      if (launch.auditLog !== null) {
        u.unseen.unshift(`the audit log ${launch.auditLog} is missing`);
      }
      return u;
    });
  }
  return sliceLog(bytes, spans).map((t) => privilegeUse(t, launch, stateDir));
}

/** `name`, or `name[variant]`. */
function toolLabel(t: PlannedTool): string {
  return t.variant === null ? t.name : `${t.name}[${t.variant}]`;
}

function newRecord(
  ctx: Ctx,
  id: string,
  kind: string,
  tool: PlannedTool | null,
  run: number,
): SessionRecord {
  return {
    id,
    kind,
    tool: tool && toolLabel(tool),
    run,
    backend: ctx.opts.launcher.backend,
    command: [],
    callResponses: [],
    stderrTail: "",
    exit: "",
    problems: [],
    wallMs: 0,
    serverMs: 0,
    sandbox: null,
  };
}

/** Opening-session evidence kept once per run (from the first control session). */
interface OpeningEvidence {
  initialize: string | null;
  toolsList: string[];
  serverInfo: unknown;
}

/**
 * The calls of a sequential session in order: the tool once or twice, or
 * (probed) the probe, the probe, the tool, the probe.
 */
function plannedCalls(
  kind: SessionObservation["kind"],
  tool: PlannedTool | null,
): ("tool" | { name: string; arguments: Record<string, unknown> })[] {
  if (tool === null || kind === "control") return [];
  if (kind === "once") return ["tool"];
  if (kind === "twice") return ["tool", "tool"];
  const probe = tool.probe!;
  return [probe, probe, "tool", probe];
}

async function runSequentialSession(
  ctx: Ctx,
  p: Extract<PlannedSession, { kind: "control" | "once" | "twice" | "probed" }>,
  tool: PlannedTool | null,
  opening: { value: OpeningEvidence | null },
): Promise<SessionObservation> {
  const t0 = performance.now();
  const dirs = await makeDirs(ctx, p.id);
  let tp = phase(ctx, "dirs", t0);
  const obs: SessionObservation = {
    kind: p.kind,
    run: p.run,
    stateDigest: null,
    setupFailure: null,
    calls: [],
    network: null,
    attempts: null,
    backend: ctx.opts.launcher.backend,
  };
  const record = newRecord(ctx, p.id, p.kind, tool, p.run);
  try {
    try {
      await ctx.opts.launcher.reset(dirs.state);
    } catch (e) {
      obs.setupFailure = `reset failed: ${(e as Error).message}`;
      return obs;
    }
    tp = phase(ctx, "reset", tp);
    let launch: Launch;
    let target: SpawnSpec | McpClient;
    let url: string | null;
    const s0 = performance.now();
    try {
      ({ launch, target, url } = await ctx.opts.launcher.start(
        dirs,
        "server",
        ctx.def.timeouts.start_s * 1000,
      ));
    } catch (e) {
      obs.setupFailure = `launch refused: ${(e as Error).message}`;
      return obs;
    }
    // Building the launch (sandbox policy, paths): harness time inside the
    // server's lifetime, measured apart from it.
    const l0 = phase(ctx, "launch", s0);
    record.command = launch.spawn.command;
    obs.backend = launch.backend;
    record.backend = launch.backend;
    const calls = plannedCalls(p.kind, tool);
    const callsPlanned = calls.length;
    const spans: LogSpan[] = [];
    const s = await openSession(target, {
      timeoutMs: ctx.def.timeouts.start_s * 1000,
      // The whole session: opening, listing, every call, and a margin.
      deadlineMs: (2 * ctx.def.timeouts.start_s +
            callsPlanned * ctx.def.timeouts.call_s) * 1000 + 10_000,
    });
    if (s.failure) {
      obs.setupFailure = `session opening failed: ${s.failure.message}`;
    } else {
      const pages = s.pages.map((pg) =>
        describeFrame(s.client.frames[pg.frameIndex]) ?? ""
      );
      if (opening.value === null) {
        opening.value = {
          initialize: describeFrame(s.client.frames[s.initializeFrame ?? -1]),
          toolsList: pages,
          serverInfo: s.serverInfo,
        };
      } else if (!sameListing(opening.value.toolsList, pages)) {
        // Every session's listing is compared; one that declares anything
        // differently keeps its own pages (a rug pull within one audit).
        record.toolsList = pages;
      }
      const args = tool ? argumentsFor(ctx, tool, dirs.state) : {};
      if (tool && callsPlanned > 0 && hasPlaceholder(tool.arguments)) {
        record.arguments = args;
      }
      const vars = ctx.opts.launcher.placeholders(dirs.state);
      const stopWatch = watchAuditLog(launch.auditLog, (size) => {
        s.client.abort({
          reason: "budget_exceeded",
          message: auditLogOver(size),
        });
        s.client.kill();
      });
      try {
        for (const call of calls) {
          const from = await logLength(launch.auditLog);
          const o = await s.client.request(
            "tools/call",
            call === "tool" ? { name: tool!.name, arguments: args } : {
              name: call.name,
              arguments: substituteDeep(call.arguments, vars),
            },
            ctx.def.timeouts.call_s * 1000,
          );
          spans.push({ from, to: await logLength(launch.auditLog) });
          const c = toCall(o);
          obs.calls.push(c);
          record.callResponses.push(
            c.frameIndex === null
              ? null
              : describeFrame(s.client.frames[c.frameIndex]),
          );
          if (c.status === "unknown") break;
        }
      } finally {
        stopWatch();
      }
    }
    const exit = await s.client.close(2000);
    record.serverMs = performance.now() - s0;
    tp = phase(ctx, "server", l0);
    record.exit = `${exit.stoppedBy}${
      exit.code !== null ? ` code ${exit.code}` : ""
    }${exit.signal ? ` ${exit.signal}` : ""}`;
    record.stderrTail = s.client.stderr().text.slice(-2000);
    record.problems = s.client.problems.slice(0, 20);
    if (url !== null && "exchanges" in s.client) {
      const all = (s.client as { exchanges: HttpExchange[] }).exchanges;
      record.http = {
        url,
        exchanges: all.slice(0, MAX_HTTP_EXCHANGES),
        dropped: Math.max(0, all.length - MAX_HTTP_EXCHANGES),
      };
    }
    // Past the log's budget (during the opening, or between two looks of
    // the watch) the evidence is cut short: the session ends with the reason.
    const logSize = await logLength(launch.auditLog);
    if (
      logSize > MAX_AUDIT_LOG_BYTES && obs.setupFailure === null &&
      !obs.calls.some((c) => c.ended === "budget_exceeded")
    ) {
      obs.setupFailure = `session ended: ${auditLogOver(logSize)}`;
    }
    // The log is read once, up to its budget, for both.
    const log = launch.auditLog === null
      ? null
      : await readAuditLogHead(launch.auditLog);
    record.sandbox = await collectEvidence(launch, log?.bytes ?? null);
    if (spans.length > 0) {
      record.privilege = callPrivileges(launch, spans, log?.bytes ?? null);
    }
    const { network, attempts } = record.sandbox;
    obs.network = network?.map((value) => ({ permission: "net", value })) ??
      null;
    obs.attempts =
      attempts?.map(({ permission, value }) => ({ permission, value })) ?? null;
    tp = phase(ctx, "evidence", tp);
    if (obs.setupFailure === null || p.kind !== "control") {
      await observeState(ctx, dirs.state, record, obs);
    }
    phase(ctx, "snapshot", tp);
    return obs;
  } catch (e) {
    obs.setupFailure = obs.setupFailure ??
      `session failed: ${(e as Error).message}`;
    return obs;
  } finally {
    finishSession(ctx, record, dirs, t0);
  }
}

async function runAttemptSession(
  ctx: Ctx,
  p: Extract<PlannedSession, { kind: "attempt" }>,
  tool: PlannedTool,
): Promise<AttemptObservation> {
  const t0 = performance.now();
  const dirs = await makeDirs(ctx, p.id);
  let tp = phase(ctx, "dirs", t0);
  const obs: AttemptObservation = {
    mode: p.mode,
    attempt: p.attempt,
    stateDigest: null,
    setupFailure: null,
    calls: [],
    timeline: [],
  };
  const record = newRecord(ctx, p.id, `attempt:${p.mode}`, tool, p.attempt);

  try {
    try {
      await ctx.opts.launcher.reset(dirs.state);
    } catch (e) {
      obs.setupFailure = `reset failed: ${(e as Error).message}`;
      return obs;
    }
    tp = phase(ctx, "reset", tp);
    const labels = p.mode === "two_process" ? ["a", "b"] : ["a"];
    // A loopback port per server process of an HTTP definition.
    const ports = labels.map(() =>
      ctx.def.transport === "http" ? freeLoopbackPort() : undefined
    );
    const launches = labels.map((l, i) =>
      ctx.opts.launcher.launch(
        ports[i] === undefined ? dirs : { ...dirs, port: ports[i] },
        l,
      )
    );
    record.command = launches[0]!.spawn.command;
    record.backend = launches[0]!.backend;
    const args = argumentsFor(ctx, tool, dirs.state);
    if (hasPlaceholder(tool.arguments)) record.arguments = args;
    const spec: OverlapSpec = {
      mode: p.mode,
      launches: launches.map((l) => l.spawn),
      ...(ctx.def.transport === "http"
        ? {
          http: ports.map((port, i) => ({
            port: port!,
            url: serverUrl(ctx.def, port!)!,
            // Bubblewrap: the server has its own network namespace.
            ...(launches[i]!.spawn.command.includes("--unshare-net")
              ? { relayDir: dirs.evidence }
              : {}),
          })),
        }
        : {}),
      startTimeoutMs: ctx.def.timeouts.start_s * 1000,
      callTimeoutMs: ctx.def.timeouts.call_s * 1000,
      call: { name: tool.name, arguments: args },
    };
    // The timer stops the attempt at its deadline and says so; killing the
    // timer (with its servers) is the backstop when it cannot answer.
    spec.deadlineMs = attemptDeadlineMs(spec);
    tp = phase(ctx, "launch", tp);
    const res = await ctx.timers.run(spec, spec.deadlineMs + 15_000);
    const inTimer = performance.now() - tp;
    tp = phase(ctx, "server", tp);
    if (ctx.opts.phases && typeof res !== "string") {
      // The overlap timer's own time beyond the servers' span.
      const span = Math.min(res.serverSpanMs, inTimer);
      ctx.opts.phases.server! -= inTimer - span;
      ctx.opts.phases.timer = (ctx.opts.phases.timer ?? 0) + inTimer - span;
    }
    if (typeof res === "string") {
      obs.setupFailure = res;
      return obs;
    }
    record.serverMs = res.serverSpanMs;
    obs.setupFailure = res.setupFailure;
    obs.calls = res.calls.map((c) => ({
      status: c.status,
      frameIndex: null,
      ms: c.recvT === null ? 0 : c.recvT - c.sendT,
      message: c.message,
    }));
    record.callResponses = res.calls.map((c) => c.response);
    record.stderrTail = res.stderr.join("\n---\n").slice(-2000);
    obs.timeline = res.timeline;
    if (res.setupFailure === null) {
      await observeState(ctx, dirs.state, record, obs);
    }
    phase(ctx, "snapshot", tp);
    return obs;
  } catch (e) {
    obs.setupFailure = obs.setupFailure ??
      `attempt failed: ${(e as Error).message}`;
    return obs;
  } finally {
    finishSession(ctx, record, dirs, t0);
  }
}

/**
 * Reset twice into fresh directories; the observer verifies the reset and
 * may keep the first as the seed (its directories then stay to the end).
 */
async function verifyReset(ctx: Ctx): Promise<DefinitionObservations["reset"]> {
  const dirs = [await makeDirs(ctx, "reset-1"), await makeDirs(ctx, "reset-2")];
  let step = "reset 1";
  try {
    await ctx.opts.launcher.reset(dirs[0]!.state);
    step = "reset 2";
    await ctx.opts.launcher.reset(dirs[1]!.state);
    step = "observing the resets";
    const { keepsFirst, ...reset } = await ctx.opts.observer.seed(
      dirs[0]!.state,
      dirs[1]!.state,
    );
    if (keepsFirst) ctx.seedDirs = dirs[0]!;
    return reset;
  } catch (e) {
    const problem = `${step} failed: ${(e as Error).message}`;
    return { verified: false, digests: [], problem };
  } finally {
    for (const d of dirs) if (d !== ctx.seedDirs) await removeDirs(ctx, d);
  }
}

/**
 * Run the whole battery for the selected tools.
 *
 * @example
 * ```ts ignore
 * const r = await runBattery(def, tools, { runs: 3, jobs: 2, ... });
 * ```
 */
export async function runBattery(
  def: Definition,
  tools: readonly PlannedTool[],
  opts: RunnerOptions,
): Promise<RunHistory> {
  // A postgres adapter: the run's private cluster, started once, seeded once.
  await opts.launcher.startState(opts.workDir, opts.progress);
  const ctx: Ctx = {
    def,
    opts,
    sessions: [],
    seq: 0,
    timers: new OverlapTimerPool(),
    cleanups: [],
    seedDirs: null,
  };
  try {
    return await execute(ctx, tools);
  } finally {
    await Promise.all(ctx.cleanups);
    await opts.observer.close();
    if (ctx.seedDirs !== null) await removeDirs(ctx, ctx.seedDirs);
    await ctx.timers.close();
    await opts.launcher.close();
  }
}

async function execute(
  ctx: Ctx,
  tools: readonly PlannedTool[],
): Promise<RunHistory> {
  const { def, opts } = ctx;
  const say = opts.progress ?? (() => {});
  const tr = performance.now();
  const reset = await verifyReset(ctx);
  phase(ctx, "verify_reset", tr);
  say(
    `reset: ${reset.verified ? "verified" : `NOT verified (${reset.problem})`}`,
  );
  const opening = { value: null as OpeningEvidence | null };
  const controlPlan = planControl(opts.runs);
  const allSeqPlan = planSequential(tools, opts.runs);
  let seqPlan = allSeqPlan;
  const byTool = new Map(tools.map((t) => [t.index, t]));
  const ticks = { done: 0, total: controlPlan.length + seqPlan.length };
  const tick = (p: PlannedSession, ended: boolean) => {
    if (ended) ticks.done++;
    const t = p.kind === "control" ? undefined : byTool.get(p.tool);
    opts.onSession?.({
      done: ticks.done,
      total: ticks.total,
      phase: p.kind === "control"
        ? "control"
        : p.kind === "attempt"
        ? "concurrent"
        : "sequential",
      tool: t ? toolLabel(t) : null,
    });
  };
  const tracked =
    <R>(f: (p: PlannedSession) => Promise<R>) =>
    async (p: PlannedSession): Promise<R> => {
      tick(p, false);
      try {
        return await f(p);
      } finally {
        tick(p, true);
      }
    };
  const run = tracked((p: PlannedSession) => {
    if (p.kind === "attempt") throw new TypeError("unreachable");
    const tool = p.kind === "control" ? null : byTool.get(p.tool) ?? null;
    return runSequentialSession(ctx, p, tool, opening);
  });
  // Control sessions first: their listing decides whether tool sessions
  // run at all (an unlisted tool is bad input; a server that never started
  // is reported, not called a hundred times).
  const control = await pool(controlPlan, opts.jobs, run);
  const listing = parseToolPages(opening.value?.toolsList ?? []);
  if (opening.value !== null) {
    opts.checkListing?.(listing.contracts.map((c) => c.name));
  }
  // A tool that answers only through the task protocol is not called (its
  // verdicts say TASK_REQUIRED); its sessions leave the plan.
  const taskTools = new Set(
    tools.filter((t) =>
      listing.contracts.some((c) => c.name === t.name && requiresTask(c.raw))
    ).map((t) => t.index),
  );
  if (taskTools.size > 0) {
    seqPlan = allSeqPlan.filter((p) =>
      p.kind === "control" || p.kind === "attempt" || !taskTools.has(p.tool)
    );
    ticks.total -= allSeqPlan.length - seqPlan.length;
  }
  const started = control.some((c) => c.setupFailure === null);
  if (!started) {
    ticks.total = ticks.done;
    say(
      `the server never started: ${
        control[0]?.setupFailure ?? "no control session"
      }`,
    );
  }
  const hintsFor = (name: string) => {
    const c = listing.contracts.find((x) => x.name === name);
    return Object.fromEntries(
      HINT_NAMES.map((h) => [
        h,
        c
          ? c.hints[h].toJSON()
          : { state: "ABSENT", detail: "tool not listed" },
      ]),
    ) as Record<(typeof HINT_NAMES)[number], DeclaredHint>;
  };
  // The tools whose hints ask for concurrent attempts (they get them unless
  // the server died in every tool session). Their overlap timers start now,
  // so a timer's own start overlaps the sequential sessions instead of
  // delaying the first attempt.
  const wantConcurrent = tools.filter((t) => !taskTools.has(t.index)).filter(
    (t) => {
      const h = hintsFor(t.name);
      return wantsConcurrent(
        {
          readOnlyHint: h.readOnlyHint.state,
          idempotentHint: h.idempotentHint.state,
        },
        opts.observeConcurrent,
      );
    },
  );
  if (started) {
    ctx.timers.warm(
      Math.min(opts.jobs, wantConcurrent.length * opts.concurrentAttempts),
    );
  }
  const results = [
    ...control,
    ...(started ? await pool(seqPlan, opts.jobs, run) : []),
  ];
  say(`sessions: ${results.length} sequential sessions done`);
  const seed = reset.digests[0] ?? null;
  const controlDigests = control.map((c) => c.stateDigest);
  const startupWrites = seed !== null &&
    controlDigests.some((d) => d !== null && d !== seed);
  // A server that died in every tool session gets no concurrent attempts:
  // they would only die again (the run is SETUP_FAILED).
  const seqDone = results.slice(control.length);
  const diedEverywhere = seqDone.length > 0 &&
    seqDone.every((s) =>
      s.setupFailure !== null ||
      s.calls.some((c) => c.status === "unknown" && c.ended === "exited")
    );
  const concurrentTools = !started || diedEverywhere ? [] : wantConcurrent;
  const attemptPlan = planConcurrent(concurrentTools, {
    concurrentAttempts: opts.concurrentAttempts,
    skipTwoProcess: startupWrites,
  });
  ticks.total += attemptPlan.length;
  const attempts = await pool(
    attemptPlan,
    opts.jobs,
    tracked((p) => {
      if (p.kind !== "attempt") throw new TypeError("unreachable");
      return runAttemptSession(ctx, p, byTool.get(p.tool)!);
    }),
  );
  if (attemptPlan.length) say(`concurrent: ${attempts.length} attempts done`);
  const seesNetwork = control.length > 0 &&
    control.every((c) => c.network !== null);
  const toolObs = groupObservations({
    tools,
    sequential: seqPlan.flatMap((plan, i) => {
      const observation = results[controlPlan.length + i];
      return observation ? [{ plan, observation }] : [];
    }),
    attempts: attemptPlan.map((plan, i) => ({
      plan,
      observation: attempts[i]!,
    })),
    concurrent: new Set(concurrentTools.map((t) => t.index)),
    hints: hintsFor,
    taskRequired: taskTools,
    startupWrites,
  });
  const listed = listing.contracts.map((c) => c.name);
  const changes = listingChanges(
    opening.value?.toolsList ?? [],
    ctx.sessions.filter((r) => !r.kind.startsWith("attempt:")),
  );
  for (const t of toolObs) {
    const moved = changes.get(t.tool);
    if (moved !== undefined) t.declarationChanges = moved;
  }
  return {
    definition: {
      coverage: opts.observer.coverage,
      reset,
      seedDigest: seed,
      control,
      startupWrites,
      seesNetwork,
      runs: opts.runs,
      ...exclusionsOf(def),
      ...(opts.observer.writes ? { writes: opts.observer.writes } : {}),
    },
    tools: toolObs,
    snapshots: Object.fromEntries(opts.observer.states),
    ...(opts.observer.changesets
      ? { changesets: Object.fromEntries(opts.observer.changesets) }
      : {}),
    sessions: ctx.sessions.sort((a, b) =>
      a.id < b.id ? -1 : a.id > b.id ? 1 : 0
    ),
    protocol: {
      initialize: opening.value?.initialize ?? null,
      toolsList: opening.value?.toolsList ?? [],
      serverInfo: opening.value?.serverInfo ?? null,
      listingProblems: listing.problems,
    },
    unexercised: listed.filter((n) => !tools.some((t) => t.name === n)),
    backend: opts.launcher.backend,
  };
}
