/**
 * The runner: the only code that executes a plan. It resets state, starts
 * servers through the sandbox, calls tools, observes state after each server
 * exits and appends everything to the observation log. Deciding is left to
 * the pure verdict engine.
 *
 * Requires `--allow-run --allow-read --allow-write --allow-env`.
 *
 * @module
 */
import type { WriteObserver } from "../state_io/write_observer.ts";
import { exclusionsOf } from "../state/exclude.ts";
import { join } from "node:path";
import type { Definition } from "../definition/types.ts";
import type { DefinitionLauncher } from "../launcher/launcher.ts";
import { serverUrl } from "../launcher/request.ts";
import { hasPlaceholder, substituteDeep } from "../definition/placeholders.ts";
import { SnapshotReader, takeSnapshot } from "../state_io/snapshot.ts";
import { stateDelta, type StateDeltaResult } from "../state_io/state_delta.ts";
import { seedBudget, type StateBudget } from "../state_io/budget.ts";
import { seedNotReproducible } from "../state_io/seed_ref.ts";
import { normalize } from "../state/normalize.ts";
import { snapshotDigest } from "../state/delta.ts";
import { shareRecords } from "../state/share.ts";
import { coverage as coverageOf } from "../state/coverage.ts";
import {
  CATEGORIES,
  regionId,
  type Snapshot,
  type StateRecord,
} from "../state/types.ts";
import {
  applyPatch,
  changedRows,
  headerOf,
  isPatchedState,
  isSeedHeader,
  isWholeSnapshot,
  patchFromDelta,
  type SeedHeader,
  type SnapshotPatch,
  type StateView,
  storedPatch,
} from "../state/patched.ts";
import { streamSeed } from "../state_io/seed_stream.ts";
import { listingChanges, sameListing } from "../contracts/listing_changes.ts";
import {
  auditLogOver,
  collectEvidence,
  MAX_AUDIT_LOG_BYTES,
  readAuditLogHead,
  type SandboxEvidence,
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
import type { SpawnSpec } from "../wire/stdio_client.ts";
import type { StdioClient } from "../wire/stdio_client.ts";
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
import { MAX_HTTP_EXCHANGES, type PermissionCheck } from "../history/types.ts";
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
  launcher: DefinitionLauncher;
  /**
   * Observes what each session changed outside its state directory (its
   * overlay), told of every launch by the launcher.
   * @default {none: writes outside the declared state are not observed}
   */
  writes?: WriteObserver;
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
  /**
   * Observed states by digest: whole snapshots, or (when the seed is held
   * without its records) the seed's header and states kept as patches
   * against it (`lib/state/patched.ts`).
   */
  snapshots: Map<string, StateView>;
  sessions: SessionRecord[];
  seq: number;
  timers: OverlapTimerPool;
  reader: SnapshotReader;
  /**
   * The state budget of every observation: the seed's size plus the default
   * allowance, once the first reset laid the seed (`seedBudget`).
   */
  budget: StateBudget;
  /** Scratch directory removals under way (awaited when the battery ends). */
  cleanups: Promise<void>[];
  /**
   * The seed every session starts from, kept as reset left it (the first
   * reset of verify-reset) with its snapshot's digest, when every reset
   * rebuilds it exactly: sessions are compared with it page by page
   * (`stateDelta`) and a session that left it as it was takes no
   * snapshot. Null: every session is snapshotted, for `seedWhy`.
   */
  seed: { dirs: ScratchDirs; digest: string } | null;
  seedWhy: string;
  /**
   * Digests of states kept as patches against a seed held without its
   * records, by the JSON of the page delta (and added rows) that gave them
   * (each distinct state is hashed once, by streaming the seed merged with
   * its patch), or why it could not be.
   */
  patched: Map<string, Promise<string | { why: string }>>;
  /**
   * The seed's whole snapshot, once a state that cannot be kept as a patch
   * needed it (taken once; every held state is then made whole).
   */
  materialized: Promise<Snapshot> | null;
}

function describeFrame(f: Frame | undefined): string | null {
  if (!f) return null;
  return f.text ?? `base64:${f.base64}`;
}

/** Hold `jobs` tasks at once; results keep the input order. */
export async function pool<T, R>(
  items: readonly T[],
  jobs: number,
  f: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({
    length: Math.max(1, Math.min(jobs, items.length)),
  }, async () => {
    while (true) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await f(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
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

function hasPlaceholderArgs(tool: PlannedTool): boolean {
  return hasPlaceholder(tool.arguments);
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

function launchFor(
  ctx: Ctx,
  dirs: ScratchDirs,
  label: string,
  port?: number,
): Launch {
  return ctx.opts.launcher.launch(
    port === undefined ? dirs : { ...dirs, port },
    label,
  );
}

/** A loopback port per server process of an HTTP definition, else undefined. */
function portFor(ctx: Ctx): number | undefined {
  return ctx.def.transport === "http" ? freeLoopbackPort() : undefined;
}

/**
 * The digest of the state a session left. Compared with the seed first
 * (`stateDelta`: pages, digests): a state proven equal to the seed is the
 * seed's digest and takes no snapshot; any other state (or when the seed
 * is not kept, or the comparison fails) is snapshotted whole, the reason
 * recorded in `record.stateMethod`.
 */
async function observeState(
  ctx: Ctx,
  stateDir: string,
  record?: SessionRecord,
): Promise<string> {
  if (record !== undefined) {
    let why = ctx.seedWhy;
    if (ctx.seed !== null) {
      try {
        // The page engine keeps the full rows of every change (the
        // session's patch against the seed).
        const r = await stateDelta(ctx.def, ctx.seed.dirs.state, stateDir, {
          reader: ctx.reader,
          budget: ctx.budget,
          rows: true,
        });
        if (r.sameAsBefore) {
          record.stateMethod = { method: "seed", why: null };
          return ctx.seed.digest;
        }
        why = "the state differs from the seed";
        const held = ctx.snapshots.get(ctx.seed.digest)!;
        // A seed held whole keeps every state whole (applied from its
        // patch); a seed held without its records keeps the patches.
        if (isWholeSnapshot(held)) ctx.materialized ??= Promise.resolve(held);
        const header = isSeedHeader(held)
          ? held
          : headerOf(ctx.seed.digest, held as Snapshot);
        const kept = await asPatch(ctx, header, r);
        if (typeof kept === "string") {
          record.stateMethod = { method: "patched", why };
          return kept;
        }
        why += `; not kept as a patch: ${kept.why}`;
      } catch (e) {
        why = `comparing with the seed failed: ${(e as Error).message}`;
      }
    }
    record.stateMethod = { method: "snapshot", why };
    // A whole snapshot is compared with whole snapshots only: the seed
    // held without its records is taken whole now (memory follows the
    // store from here on: the fallback).
    if (
      ctx.seed !== null && isSeedHeader(ctx.snapshots.get(ctx.seed.digest)!)
    ) {
      await materializeSeed(ctx);
    }
  }
  const snap = normalize(
    await takeSnapshot(ctx.def, stateDir, {
      reader: ctx.reader,
      budget: ctx.budget,
      postgres: ctx.opts.launcher.postgres,
    }),
    ctx.def,
  );
  const digest = snapshotDigest(snap);
  if (!ctx.snapshots.has(digest)) {
    // The first snapshot is the seed's (verify-reset); later distinct ones
    // share its unchanged records instead of holding copies.
    const first = ctx.snapshots.values().next();
    ctx.snapshots.set(
      digest,
      first.done ? snap : shareRecords(first.value as Snapshot, snap),
    );
  }
  return digest;
}

/**
 * The digest of a session's state kept as a patch against the seed held
 * without its records (`patchFromDelta`: the rows the page engine found
 * added, changed or removed; every adapter compared by pages, the seed's
 * problems on both sides), its digest streamed over the seed merged with
 * the patch (`streamSeed`; a patch seen before is not hashed again); or
 * why it cannot be (then the state is snapshotted whole).
 */
async function asPatch(
  ctx: Ctx,
  header: SeedHeader,
  r: StateDeltaResult,
): Promise<string | { why: string }> {
  const other = r.methods.find((m) => m.method !== "pages");
  if (other !== undefined) {
    return { why: `${other.label} was compared by ${other.method}` };
  }
  const same = (a: readonly string[]) =>
    a.length === header.problems.length &&
    a.every((p, i) => p === header.problems[i]);
  if (!same(r.problems.before) || !same(r.problems.after)) {
    return { why: "its problems differ from the seed's" };
  }
  // The state is a function of the seed, the delta and the rows it puts:
  // the same ones seen before name the state already hashed.
  const key = JSON.stringify([
    r.delta,
    [...r.addedValues].map(([id, m]) => [id, [...m]]),
    r.rows === null ? null : [...r.rows].map(([id, x]) => [id, x.put]),
  ]);
  let known = ctx.patched.get(key);
  if (known === undefined) {
    known = patchOf(ctx, header, r).then((patch) =>
      "why" in patch ? patch : hashPatch(ctx, header, patch)
    );
    ctx.patched.set(key, known);
  }
  return await known;
}

/**
 * The stored patch of a session's state: the full rows of its added and
 * changed records the page engine kept (`rows`); where it could not keep
 * them (a row it cannot decode: only the added rows of plain rowid tables
 * and the changed records' differing fields), the seed's rows at the
 * changed keys are read first by one streaming pass (`streamSeed`'s `was`)
 * and the fields applied.
 */
async function patchOf(
  ctx: Ctx,
  header: SeedHeader,
  r: StateDeltaResult,
): Promise<SnapshotPatch | { why: string }> {
  let rows: ReadonlyMap<string, ReadonlyMap<string, Record<string, unknown>>> =
    r.rows === null ? r.addedValues : new Map(
      [...r.rows].map(([id, x]) => [
        id,
        new Map(x.put.map((rec) => [rec.key, rec.value])),
      ]),
    );
  const changed = CATEGORIES.flatMap((c) => r.delta[c].changed);
  const missing = changed.filter((x) => !rows.get(x.region)?.has(x.key));
  if (missing.length > 0) {
    const keys = new Map<string, StateRecord[]>();
    for (const x of missing) {
      let l = keys.get(x.region);
      if (l === undefined) keys.set(x.region, l = []);
      l.push({ key: x.key, value: {} });
    }
    const probe: SnapshotPatch = {
      base: header.digest,
      problems: header.problems,
      regions: header.regions.map(({ count: _count, ...g }) => ({
        ...g,
        put: keys.get(regionId(g)) ?? [],
        drop: [],
      })),
    };
    const s = await streamSeed(ctx.def, ctx.seed!.dirs.state, {
      reader: ctx.reader,
      budget: ctx.budget,
      patches: [probe],
    });
    if (s.patchErrors[0]) {
      return { why: `reading the seed's changed rows: ${s.patchErrors[0]}` };
    }
    const was = new Map<string, Map<string, StateRecord>>();
    probe.regions.forEach((g, i) => {
      was.set(
        regionId(g),
        new Map((s.was[0]?.[i] ?? []).map((x) => [x.key, x])),
      );
    });
    const full = changedRows(r.delta, was);
    if ("why" in full) return full;
    const merged = new Map(full);
    for (const [id, m] of r.addedValues) {
      merged.set(id, new Map([...(merged.get(id) ?? []), ...m]));
    }
    rows = merged;
  }
  return patchFromDelta(header, r.delta, rows, header.problems);
}

/** Stream the seed merged with one patch: the state's digest, kept as a patched state. */
async function hashPatch(
  ctx: Ctx,
  header: SeedHeader,
  patch: SnapshotPatch,
): Promise<string | { why: string }> {
  const s = await streamSeed(ctx.def, ctx.seed!.dirs.state, {
    reader: ctx.reader,
    budget: ctx.budget,
    patches: [patch],
  });
  if (s.header.digest !== header.digest) {
    return { why: "the seed streamed again hashes to another digest" };
  }
  const digest = s.digests[0];
  const state = s.patched[0];
  if (digest === null || digest === undefined || !state) {
    return { why: `the patch does not apply: ${s.patchErrors[0]}` };
  }
  if (!ctx.snapshots.has(digest)) {
    // The seed made whole meanwhile: keep this state whole too.
    const whole = ctx.materialized === null ? null : await ctx.materialized;
    if (!ctx.snapshots.has(digest)) {
      ctx.snapshots.set(
        digest,
        whole === null ? state : applyPatch(whole, storedPatch(state)),
      );
    }
  }
  return digest;
}

/**
 * Take the seed's whole snapshot (once) and make every held state whole:
 * for a state that cannot be kept as a patch, since a whole snapshot is
 * compared only with whole snapshots.
 */
async function materializeSeed(ctx: Ctx): Promise<void> {
  ctx.materialized ??= (async () => {
    const seed = ctx.seed!;
    const snap = normalize(
      await takeSnapshot(ctx.def, seed.dirs.state, {
        reader: ctx.reader,
        budget: ctx.budget,
        postgres: ctx.opts.launcher.postgres,
      }),
      ctx.def,
    );
    const digest = snapshotDigest(snap);
    if (digest !== seed.digest) {
      throw new Error(
        `the seed's snapshot hashes to ${digest}, its streamed digest is ${seed.digest}`,
      );
    }
    for (const [d, v] of ctx.snapshots) {
      if (isSeedHeader(v)) ctx.snapshots.set(d, snap);
      else if (isPatchedState(v)) {
        ctx.snapshots.set(d, applyPatch(snap, storedPatch(v)));
      }
    }
    return snap;
  })();
  await ctx.materialized;
}

function toCall(
  o: Awaited<ReturnType<StdioClient["request"]>>,
): CallObservation {
  const { status, message } = classifyAnswer(o);
  if (o.status === "unknown") {
    return {
      status,
      frameIndex: null,
      ms: o.ms,
      message,
      ended: o.failure.reason,
    };
  }
  return {
    status,
    frameIndex: o.frameIndex,
    ms: o.ms,
    message,
    ...(o.status === "ok"
      ? { response: (JSON.stringify(o.result) ?? "null").slice(0, 4096) }
      : {}),
  };
}

function networkChecks(ev: SandboxEvidence): SessionObservation["network"] {
  if (ev.network === null) return null;
  return ev.network.map((value) => ({ permission: "net", value }));
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

function refusedChecks(ev: SandboxEvidence): PermissionCheck[] | null {
  if (ev.attempts === null) return null;
  return ev.attempts.map((a) => ({ permission: a.permission, value: a.value }));
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
    tool: tool
      ? (tool.variant ? `${tool.name}[${tool.variant}]` : tool.name)
      : null,
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
      if (tool && callsPlanned > 0 && hasPlaceholderArgs(tool)) {
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
    obs.network = networkChecks(record.sandbox);
    obs.attempts = refusedChecks(record.sandbox);
    tp = phase(ctx, "evidence", tp);
    if (obs.setupFailure === null || p.kind !== "control") {
      obs.stateDigest = await observeState(ctx, dirs.state, record);
      if (ctx.opts.writes) {
        obs.changeset = await ctx.opts.writes.observe(dirs.state);
      }
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
    const ports = labels.map(() => portFor(ctx));
    const launches = labels.map((l, i) => launchFor(ctx, dirs, l, ports[i]));
    record.command = launches[0]!.spawn.command;
    record.backend = launches[0]!.backend;
    const args = argumentsFor(ctx, tool, dirs.state);
    if (hasPlaceholderArgs(tool)) record.arguments = args;
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
      obs.stateDigest = await observeState(ctx, dirs.state, record);
      if (ctx.opts.writes) {
        obs.changeset = await ctx.opts.writes.observe(dirs.state);
      }
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
 * Whether a second reset left exactly the first one's state, proven page
 * by page (`stateDelta`: the same digest without a second snapshot); only
 * when every adapter is sqlite. False: snapshot it and compare digests.
 */
async function sameState(
  ctx: Ctx,
  firstDir: string,
  stateDir: string,
): Promise<boolean> {
  if (!ctx.def.adapters.every((a) => a.kind === "sqlite")) return false;
  try {
    const r = await stateDelta(ctx.def, firstDir, stateDir, {
      reader: ctx.reader,
      budget: ctx.budget,
    });
    return r.sameAsBefore;
  } catch {
    return false;
  }
}

/**
 * Reset twice and compare the states. When every adapter is sqlite the
 * second reset is compared with the first page by page; if they are equal
 * and the seed is rebuilt exactly by every reset, the first is kept as the
 * seed without its records: its header and digest streamed from its pages
 * (`streamSeed`), never a whole snapshot. Otherwise both are snapshotted
 * and their digests compared.
 */
async function verifyReset(ctx: Ctx): Promise<DefinitionObservations["reset"]> {
  const digests: (string | null)[] = [];
  let first: ScratchDirs | null = null;
  const byPages = ctx.def.adapters.every((a) => a.kind === "sqlite");
  let reproducible: Promise<string | null> | null = null;
  const whyNotReproducible = () =>
    reproducible ??= seedNotReproducible(ctx.def);
  for (const i of [1, 2]) {
    const dirs = await makeDirs(ctx, `reset-${i}`);
    try {
      await ctx.opts.launcher.reset(dirs.state);
      if (i === 1) {
        // Sessions may add to the seed, not hold it all within the budget.
        ctx.budget = await seedBudget(dirs.state);
        // Observed once the second reset says how (by pages: streamed).
        if (!byPages) digests.push(await observeState(ctx, dirs.state));
      } else if (
        first !== null && await sameState(ctx, first.state, dirs.state)
      ) {
        if (digests.length === 0) {
          digests.push(
            await whyNotReproducible() === null
              ? await streamedSeed(ctx, first.state)
              : await observeState(ctx, first.state),
          );
        }
        digests.push(digests[0]!);
      } else {
        if (digests.length === 0 && first !== null) {
          digests.push(await observeState(ctx, first.state));
        }
        digests.push(await observeState(ctx, dirs.state));
      }
    } catch (e) {
      await removeDirs(ctx, dirs);
      if (first !== null) await removeDirs(ctx, first);
      ctx.seedWhy = "the reset failed";
      return {
        verified: false,
        digests,
        problem: `reset ${i} failed: ${(e as Error).message}`,
      };
    }
    // The first reset's state is kept as the seed sessions are compared with.
    if (i === 1) first = dirs;
    else await removeDirs(ctx, dirs);
  }
  const ok = digests[0] !== null && digests[0] === digests[1];
  const why = ok ? await whyNotReproducible() : "the reset is not verified";
  if (why === null) ctx.seed = { dirs: first!, digest: digests[0]! };
  else {
    ctx.seedWhy = `no seed to compare with: ${why}`;
    await removeDirs(ctx, first!);
  }
  return {
    verified: ok,
    digests,
    problem: ok ? null : "two resets produced different state",
  };
}

/**
 * The seed's digest streamed from its pages (`streamSeed`: no snapshot),
 * its header held in place of its snapshot; or, when the stream read a
 * part whole anyway (a table stored in another order, an adapter the page
 * reader declines), the seed's whole snapshot as before.
 */
async function streamedSeed(ctx: Ctx, stateDir: string): Promise<string> {
  let header: SeedHeader;
  try {
    const s = await streamSeed(ctx.def, stateDir, {
      reader: ctx.reader,
      budget: ctx.budget,
    });
    if (s.methods.some((m) => m.method !== "pages")) {
      return await observeState(ctx, stateDir);
    }
    header = s.header;
  } catch {
    return await observeState(ctx, stateDir);
  }
  if (!ctx.snapshots.has(header.digest)) {
    ctx.snapshots.set(header.digest, header);
  }
  return header.digest;
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
    snapshots: new Map(),
    sessions: [],
    seq: 0,
    timers: new OverlapTimerPool(),
    reader: new SnapshotReader(await Deno.realPath(opts.workDir)),
    budget: {},
    cleanups: [],
    seed: null,
    seedWhy: "no seed to compare with",
    patched: new Map(),
    materialized: null,
  };
  try {
    return await execute(ctx, tools);
  } finally {
    await Promise.all(ctx.cleanups);
    if (ctx.seed !== null) await removeDirs(ctx, ctx.seed.dirs);
    ctx.reader.close();
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
      tool: t
        ? (t.variant === null ? t.name : `${t.name}[${t.variant}]`)
        : null,
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
    say(
      `the server never started: ${
        control[0]?.setupFailure ?? "no control session"
      }`,
    );
  }
  if (!started) ticks.total = ticks.done;
  const hintsFor = (
    name: string,
  ): Record<(typeof HINT_NAMES)[number], DeclaredHint> => {
    const c = listing.contracts.find((x) => x.name === name);
    return Object.fromEntries(
      HINT_NAMES.map((
        h,
      ) => [
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
      coverage: coverageOf(def),
      reset,
      seedDigest: seed,
      control,
      startupWrites,
      seesNetwork,
      runs: opts.runs,
      ...exclusionsOf(def),
      writes: opts.writes?.writes ??
        { observed: false, why: "no observer of writes" },
    },
    tools: toolObs,
    snapshots: Object.fromEntries(ctx.snapshots),
    ...(opts.writes
      ? { changesets: Object.fromEntries(opts.writes.changesets) }
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
