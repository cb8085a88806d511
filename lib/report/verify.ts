/**
 * `verity report verify`: re-derive a report from the raw evidence inside
 * it. Pure.
 *
 * What is re-derived, and from what (docs/evidence.md, "What verify
 * proves"):
 *
 * - declarations (`observations.tools[].hints`, `protocol.listingProblems`,
 *   `unexercised`) from the raw `tools/list` frames with the contract
 *   parser, and every tool's `declarationChanges` from the listings the
 *   sessions kept (a session keeps one only when it differs); `protocol.serverInfo` from the raw `initialize` frame;
 * - every call outcome of a sequential session from its raw response
 *   frame (`sessions[].callResponses`), and of a concurrent attempt from the
 *   response the overlap timer kept; the network evidence of each session
 *   from its sandbox record; every observation has exactly one session;
 * - every overlap decision (and its detail) from the timer's stamps in the
 *   attempt's timeline (two-process decisions need the ping stamps, stored
 *   since reports of 2026-11-30 19:40; older ones are digest-only);
 * - every snapshot's digest from its content, and every digest an
 *   observation names must be a stored snapshot (and every stored snapshot
 *   named);
 * - the definition-level facts (`reset.verified`, `seedDigest`,
 *   `startupWrites`, `seesNetwork`, `runs`);
 * - every verdict, whole, with the verdict engine; the expectation check,
 *   whole; the run id from the definition name and capture time; the
 *   audit flag and backend claims against each other;
 * - the state effects (`stateEffects`: the control sessions' delta against
 *   the seed, the state after every errored call) from the observations
 *   and snapshots, whole; a pinned target's package against every
 *   session's command.
 *
 * Everything else (provenance, commands, environment, timings, stderr,
 * the raw frames and snapshots themselves, the expected list) is primary
 * evidence or a claim about the run: no re-derivation can prove it. It is
 * covered by the report's digest (SHA-256 of the file's bytes), which
 * `report verify --ledger --expected-head` checks against the ledger block
 * and `attest verify` against a signed statement. {@linkcode DIGEST_ONLY}
 * lists those fields.
 *
 * @module
 */
import { HINT_NAMES, parseToolPages } from "../contracts/contracts.ts";
import {
  type DeclarationChange,
  listingChanges,
  sameListing,
  type SessionListing,
} from "../contracts/listing_changes.ts";
import {
  requiresTask,
  TASK_REQUIRED_MESSAGE,
} from "../contracts/task_support.ts";
import { readJson } from "../contracts/json_reader.ts";
import { snapshotDigest } from "../state/delta.ts";
import { type Changeset, changesetDigest } from "../state/changeset.ts";
import { canonicalStateJson } from "../state/keys.ts";
import { isPlainObject as isObject } from "../common/is_plain_object.ts";
import type { Snapshot } from "../state/types.ts";
import {
  ENGINE_VERSION,
  judgeTool,
  serverFailure,
  SUPPORTED_RULES,
} from "../verdicts/engine.ts";
import type {
  AttemptObservation,
  CallObservation,
  SessionObservation,
  ToolObservations,
} from "../history/types.ts";
import type { Verdict } from "../verdicts/types.ts";
import { TEST_NAMES, type TestName } from "../definition/types.ts";
import { checkExpectations } from "./expectations.ts";
import {
  classifyResponseFrame,
  classifyResultText,
} from "../history/call_outcome.ts";
import { overlapFromTimeline } from "../verdicts/overlap.ts";
import { deriveStateEffects } from "./effects.ts";
import { type ArgumentOrigin, learnedAim } from "../init/learn_plan.ts";
import { type ClaimsInput, reportClaims } from "./claims.ts";
import { PACKED_SCHEMA, SEEDREF_SCHEMA, unpackReport } from "./pack.ts";

/** Every value inside `v` by the path an origin names it with (`a.b[0]`). */
function valuesByPath(v: unknown): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const visit = (x: unknown, path: string) => {
    out.set(path, [...(out.get(path) ?? []), x]);
    if (Array.isArray(x)) x.forEach((y, i) => visit(y, `${path}[${i}]`));
    else if (isObject(x)) {
      for (const [k, y] of Object.entries(x)) {
        visit(y, path === "" ? k : `${path}.${k}`);
      }
    }
  };
  visit(v, "");
  return out;
}

/** One difference found by {@linkcode verifyReport}. */
export interface ReportProblem {
  /** The field (a path into the report) that differs. */
  where: string;
  message: string;
}

/** The report's top-level keys; any other key is refused (no check covers it). */
export const REPORT_KEYS: readonly string[] = [
  "schema",
  "runId",
  "provenance",
  "protocol",
  "sandbox",
  "observations",
  "snapshots",
  "sessions",
  "unexercised",
  "tests",
  "verdicts",
  "expected",
  "expectations",
  "audit",
];

/** Top-level keys a report may carry (absent in reports before verdict rules version 3). */
export const OPTIONAL_REPORT_KEYS: readonly string[] = [
  "setupFailure",
  "stateEffects",
  "summary",
  "changesets",
  "learned",
];

/**
 * Fields that no re-derivation can check: primary evidence (raw frames,
 * stamps, snapshot contents) and claims about the run. Only the report's
 * digest, bound to a ledger head or a signature, covers them.
 */
export const DIGEST_ONLY: readonly string[] = [
  "provenance (definition name, file, digest and git state, the target's pin and what verity prepare verified, harness version and git state, Deno and SDK versions, capture time, options; only a pinned target's package in each session's command is re-derived)",
  "protocol.initialize and protocol.toolsList (the raw frames themselves)",
  "sessions[] commands, environment, stderr, exit, problems, wall and server times, sandbox records, raw call responses, how the state was observed (stateMethod)",
  "learned: where each argument value was seen (origins[].from), the seeding calls' outcomes and details, the state files; each origin's value is checked against its arguments, each set's arguments and what it names against its observations",
  "observations: call times and frame indexes, attempt timelines, tool arguments and what a learned set names (learned), coverage, reset digests, the definition's exclusions (observations.definition.excluded; every format lists them in its headline)",
  "snapshots (their contents; each digest is re-derived from them)",
  "changesets (their contents: what each session changed outside its state directory; each digest is re-derived from them)",
  "expected (the definition's expectations; the check against them is re-derived)",
  "verdicts[].details (explanatory prose: its wording changed within verdict rules version 2, so published reports carry older wording)",
];

const same = (a: unknown, b: unknown) =>
  canonicalStateJson(a) === canonicalStateJson(b);

function short(v: unknown): string {
  const s = canonicalStateJson(v) ?? String(v);
  return s.length > 160 ? s.slice(0, 157) + "..." : s;
}

interface SessionLike {
  id: string;
  command?: unknown;
  kind: string;
  tool: string | null;
  run: number;
  backend: string;
  callResponses: (string | null)[];
  sandbox: { backend?: unknown; network?: unknown; attempts?: unknown } | null;
  /** How the server stopped: "self ..." when it exited by itself. */
  exit?: string;
}

function toolLabel(t: { tool: string; variant: string | null }): string {
  return t.variant ? `${t.tool}[${t.variant}]` : t.tool;
}

/** Re-derive and compare. Pushes problems; never throws on a malformed report. */
class Verifier {
  problems: ReportProblem[] = [];
  #sessions = new Map<string, SessionLike>();
  #usedSessions = new Set<string>();
  #digests = new Set<string>();

  #engine = 0;
  /** The history's shape version (provenance.history; absent: 1). */
  #history = 1;

  constructor(readonly r: Record<string, unknown>) {
    const p = r.provenance;
    this.#engine = isObject(p) && typeof p.engine === "number" ? p.engine : 0;
    this.#history = isObject(p) && typeof p.history === "number"
      ? p.history
      : 1;
  }

  bad(where: string, message: string): void {
    this.problems.push({ where, message });
  }

  expect(where: string, claimed: unknown, derived: unknown): void {
    if (!same(claimed, derived)) {
      this.bad(
        where,
        `report says ${short(claimed)}, evidence gives ${short(derived)}`,
      );
    }
  }

  run(): ReportProblem[] {
    const r = this.r;
    for (const k of Object.keys(r)) {
      if (!REPORT_KEYS.includes(k) && !OPTIONAL_REPORT_KEYS.includes(k)) {
        this.bad(k, "unexpected top-level key: no check or digest covers it");
      }
    }
    for (const k of REPORT_KEYS) {
      if (!Object.hasOwn(r, k)) this.bad(k, "missing");
    }
    if (this.problems.length > 0) return this.problems;
    const obs = r.observations as Record<string, unknown>;
    if (
      !isObject(obs) || !isObject(obs.definition) ||
      !Array.isArray(obs.tools) ||
      !isObject(r.snapshots) || !Array.isArray(r.verdicts) ||
      !Array.isArray(r.sessions) || !isObject(r.protocol) ||
      !isObject(r.provenance) || !isObject(r.expectations) ||
      !Array.isArray(r.expected) || !Array.isArray(r.tests)
    ) {
      this.bad("report", "a section has the wrong type");
      return this.problems;
    }
    try {
      this.#provenance();
      this.#snapshots();
      this.#changesets();
      this.#protocol();
      this.#sessionsIndex();
      this.#definitionFacts();
      this.#tools();
      this.#unusedSessions();
      this.#verdicts();
      this.#target();
      this.#stateEffects();
      this.#summary();
      this.#learned();
    } catch (e) {
      this.bad("report", `cannot re-derive: ${(e as Error).message}`);
    }
    // A report judged under older rules verifies when its evidence gives the
    // same verdicts under these rules; when something differs, say that the
    // difference may be a rule change, not tampering.
    const engine = (this.r.provenance as Record<string, unknown>).engine;
    if (
      typeof engine !== "number" || !SUPPORTED_RULES.includes(engine) ||
      (engine !== ENGINE_VERSION && this.problems.length > 0)
    ) {
      this.problems.unshift({
        where: "provenance.engine",
        message: `judged by verdict rules version ${
          engine ?? "unknown"
        }; this verity re-derives versions ${
          SUPPORTED_RULES.join(" and ")
        } (current ${ENGINE_VERSION}), so differences below may be rule changes, not tampering (verify with the verity that wrote it)`,
      });
    }
    return this.problems;
  }

  #provenance(): void {
    const p = this.r.provenance as Record<string, unknown>;

    const def = isObject(p.definition) ? p.definition : {};
    const captured = typeof p.capturedAt === "string" ? p.capturedAt : "";
    const stamp = captured.replace(/[-:]/g, "").replace(".", "");
    const name = String(def.name).replace(/[^A-Za-z0-9_.-]/g, "_");
    // Run ids end in 8 random hex digits (unique across concurrent runs);
    // reports written before that have none.
    const base = `${stamp}-${name}`;
    const claimed = this.r.runId;
    const suffix = typeof claimed === "string" &&
        claimed.startsWith(base) &&
        /^-[0-9a-f]{8}$/.test(claimed.slice(base.length))
      ? claimed.slice(base.length)
      : "";
    this.expect("runId", claimed, base + suffix);
    const options = isObject(p.options) ? p.options : {};
    this.expect("audit", this.r.audit, options.audit);
    if (this.r.audit === true && (this.r.expected as unknown[]).length > 0) {
      this.bad("expected", "an audit carries no expectations");
    }
    const sandbox = this.r.sandbox;
    if (
      !isObject(sandbox) ||
      Object.keys(sandbox).some((k) => k !== "backend" && k !== "allow")
    ) {
      this.bad("sandbox", "expected { backend, allow? }");
    } else this.expect("sandbox.backend", sandbox.backend, options.backend);
    const tests = this.r.tests as unknown[];
    if (
      tests.some((t) => !TEST_NAMES.includes(t as TestName)) ||
      new Set(tests).size !== tests.length
    ) this.bad("tests", `not a set of test names: ${short(tests)}`);
    // Every rules version judges every test: a test missing from the list
    // is a test whose verdicts (a VIOLATION among them) were dropped.
    const missing = TEST_NAMES.filter((t) => !tests.includes(t));
    if (missing.length > 0) {
      this.bad(
        "tests",
        `${missing.join(", ")} missing: every report judges every test (${
          TEST_NAMES.join(", ")
        })`,
      );
    }
  }

  #snapshots(): void {
    for (const [digest, snap] of Object.entries(this.r.snapshots as object)) {
      if (
        isObject(snap) &&
        (Object.hasOwn(snap, "digest") || Object.hasOwn(snap, "base"))
      ) {
        this.bad(
          `snapshots.${digest}`,
          "a stored snapshot with a digest or base is not a whole snapshot",
        );
        continue;
      }
      const again = snapshotDigest(snap as Snapshot);
      if (again !== digest) {
        this.bad(`snapshots.${digest}`, `content hashes to ${again}`);
      }
    }
  }

  #changesets(): void {
    if (!Object.hasOwn(this.r, "changesets")) return;
    if (!isObject(this.r.changesets)) {
      this.bad("changesets", "not an object");
      return;
    }
    for (const [digest, c] of Object.entries(this.r.changesets)) {
      const ok = isObject(c) && Array.isArray(c.changes) &&
        Array.isArray(c.problems) && typeof c.lossy === "boolean";
      const again = ok ? changesetDigest(c as unknown as Changeset) : null;
      if (again !== digest) {
        this.bad(
          `changesets.${digest}`,
          again === null ? "not a changeset" : `content hashes to ${again}`,
        );
      }
    }
  }

  #digest(where: string, d: unknown): void {
    if (d === null) return;
    if (
      typeof d !== "string" || !Object.hasOwn(this.r.snapshots as object, d)
    ) {
      this.bad(
        where,
        `names snapshot ${short(d)}, which the report does not hold`,
      );
      return;
    }
    this.#digests.add(d);
  }

  #protocol(): void {
    const p = this.r.protocol as Record<string, unknown>;
    const pages = p.toolsList;
    if (!Array.isArray(pages) || pages.some((x) => typeof x !== "string")) {
      this.bad("protocol.toolsList", "not a list of frame texts");
      return;
    }
    const listing = parseToolPages(pages as string[]);
    this.expect(
      "protocol.listingProblems",
      p.listingProblems,
      listing.problems,
    );
    let serverInfo: unknown = null;
    if (typeof p.initialize === "string") {
      try {
        const m = readJson(p.initialize).value;
        const res = isObject(m) ? m.result : undefined;
        serverInfo = isObject(res) ? res.serverInfo ?? null : null;
      } catch {
        serverInfo = null;
      }
    }
    this.expect("protocol.serverInfo", p.serverInfo, serverInfo);
    const obs = this.r.observations as { tools: ToolObservations[] };
    const listed = listing.contracts.map((c) => c.name);
    this.expect(
      "unexercised",
      this.r.unexercised,
      listed.filter((n) => !obs.tools.some((t) => t.tool === n)),
    );
    obs.tools.forEach((t, i) => {
      const c = listing.contracts.find((x) => x.name === t.tool);
      const hints = Object.fromEntries(
        HINT_NAMES.map((h) => [
          h,
          c
            ? c.hints[h].toJSON()
            : { state: "ABSENT", detail: "tool not listed" },
        ]),
      );
      this.expect(
        `observations.tools[${i}] (${toolLabel(t)}).hints`,
        t.hints,
        hints,
      );
      // History version 3 on: a tool that needs the task protocol is not
      // called, and says so; every other tool was called.
      if (this.#history >= 3) {
        const needsTask = c !== undefined && requiresTask(c.raw);
        this.expect(
          `observations.tools[${i}] (${toolLabel(t)}).skipped`,
          t.skipped,
          needsTask
            ? { reason: "task_required", message: TASK_REQUIRED_MESSAGE }
            : undefined,
        );
        if (
          needsTask &&
          [...t.once, ...t.twice, ...(t.probed ?? []), ...(t.concurrent ?? [])]
              .length > 0
        ) {
          this.bad(
            `observations.tools[${i}] (${toolLabel(t)})`,
            "a tool that needs the task protocol has sessions (it is never called)",
          );
        }
      }
    });
  }

  #sessionsIndex(): void {
    (this.r.sessions as SessionLike[]).forEach((s, i) => {
      if (!isObject(s) || typeof s.kind !== "string") {
        this.bad(`sessions[${i}]`, "not a session record");
        return;
      }
      const key = `${s.kind} ${s.tool} ${s.run}`;
      if (this.#sessions.has(key)) {
        this.bad(`sessions[${i}]`, `a second record for ${key}`);
      }
      this.#sessions.set(key, s);
    });
  }

  #session(where: string, kind: string, tool: string | null, run: number) {
    const key = `${kind} ${tool} ${run}`;
    const s = this.#sessions.get(key);
    if (!s) {
      this.bad(where, `no session record for ${key}: the raw evidence is gone`);
      return null;
    }
    this.#usedSessions.add(key);
    return s;
  }

  #unusedSessions(): void {
    for (const key of this.#sessions.keys()) {
      if (!this.#usedSessions.has(key)) {
        this.bad(
          `sessions (${key})`,
          "a session record that no observation uses",
        );
      }
    }
  }

  #definitionFacts(): void {
    const d = (this.r.observations as Record<string, unknown>)
      .definition as Record<string, unknown>;
    const reset = isObject(d.reset) ? d.reset : {};
    const digests = Array.isArray(reset.digests) ? reset.digests : [];
    digests.forEach((x, i) =>
      this.#digest(`observations.definition.reset.digests[${i}]`, x)
    );
    const verified = digests.length === 2 && digests[0] !== null &&
      digests[0] === digests[1];
    this.expect(
      "observations.definition.reset.verified",
      reset.verified,
      verified,
    );
    const seed = digests[0] ?? null;
    this.expect("observations.definition.seedDigest", d.seedDigest, seed);
    const control = Array.isArray(d.control)
      ? d.control as SessionObservation[]
      : [];
    control.forEach((c, i) =>
      this.#sequential(`observations.definition.control[${i}]`, c, null)
    );
    this.expect(
      "observations.definition.startupWrites",
      d.startupWrites,
      seed !== null &&
        control.some((c) => c.stateDigest !== null && c.stateDigest !== seed),
    );
    this.expect(
      "observations.definition.seesNetwork",
      d.seesNetwork,
      control.length > 0 && control.every((c) => c.network !== null),
    );
    const options = (this.r.provenance as Record<string, unknown>).options;
    this.expect(
      "observations.definition.runs",
      d.runs,
      isObject(options) ? options.runs : undefined,
    );
    this.#runsPresent("observations.definition.control", control, d.runs);
  }

  /**
   * A session kind planned for `runs` runs must hold runs 1..runs, each
   * once: "10 runs" beside 3 sessions, or a run dropped with its record,
   * contradicts the plan the report says it ran.
   */
  #runsPresent(
    where: string,
    sessions: readonly { run?: unknown }[],
    runs: unknown,
  ): void {
    if (typeof runs !== "number") return;
    const got = sessions.map((s) => s.run);
    const want = Array.from({ length: runs }, (_, i) => i + 1);
    if (
      got.length !== runs ||
      !want.every((n) => got.includes(n))
    ) {
      this.bad(
        where,
        `report says ${runs} run(s), the observations hold ${got.length} (runs ${
          short(got)
        })`,
      );
    }
  }

  #calls(
    where: string,
    calls: CallObservation[],
    derived: { status: string; message: string | null; response?: string }[],
    exit?: string,
  ) {
    if (calls.length !== derived.length) {
      this.bad(
        `${where}.calls`,
        `report says ${calls.length} call(s), the session's raw evidence holds ${derived.length}`,
      );
      return;
    }
    calls.forEach((c, k) => {
      const d = derived[k]!;
      if (d.status === "protocol_error_or_unknown") {
        if (c.status !== "protocol_error" && c.status !== "unknown") {
          this.bad(
            `${where}.calls[${k}].status`,
            `report says ${c.status}, but no response was kept (protocol error or no answer)`,
          );
        }
        return;
      }
      this.expect(`${where}.calls[${k}].status`, c.status, d.status);
      if (d.status === "tool_error" || d.status === "protocol_error") {
        this.expect(`${where}.calls[${k}].message`, c.message, d.message);
      }
      // The answer the process-memory rule compares (rules version 3 on).
      if (
        d.response !== undefined && d.status !== "protocol_error" &&
        (c.response !== undefined || this.#engine >= 3)
      ) {
        this.expect(`${where}.calls[${k}].response`, c.response, d.response);
      }
    });
    // "exited" (a server that died) needs a server that stopped by itself.
    calls.forEach((c, k) => {
      if (
        c.ended === "exited" && exit !== undefined && !exit.startsWith("self")
      ) {
        this.bad(
          `${where}.calls[${k}].ended`,
          `report says the server exited, the session record says it was stopped (${
            short(exit)
          })`,
        );
      }
    });
  }

  #sequential(
    where: string,
    o: SessionObservation,
    t: ToolObservations | null,
  ) {
    this.#digest(`${where}.stateDigest`, o.stateDigest);
    const s = this.#session(where, o.kind, t ? toolLabel(t) : null, o.run);
    if (!s) return;
    this.expect(`${where}.backend`, o.backend, s.backend);
    const net = isObject(s.sandbox) ? s.sandbox.network : null;
    this.expect(
      `${where}.network`,
      o.network,
      Array.isArray(net)
        ? net.map((value) => ({ permission: "net", value }))
        : null,
    );
    // The refused attempts the read_only check reads (rules version 5 on).
    if (o.attempts !== undefined || this.#engine >= 5) {
      const att = isObject(s.sandbox) ? s.sandbox.attempts : null;
      this.expect(
        `${where}.attempts`,
        o.attempts,
        Array.isArray(att)
          ? att.map((a) => ({
            permission: isObject(a) ? a.permission : undefined,
            value: isObject(a) ? a.value : undefined,
          }))
          : null,
      );
    }
    this.#calls(
      where,
      o.calls,
      (s.callResponses ?? []).map((f) => classifyResponseFrame(f)),
      typeof s.exit === "string" ? s.exit : undefined,
    );
  }

  #attempt(where: string, o: AttemptObservation, t: ToolObservations) {
    this.#digest(`${where}.stateDigest`, o.stateDigest);
    const s = this.#session(
      where,
      `attempt:${o.mode}`,
      toolLabel(t),
      o.attempt,
    );
    if (!s) return;
    this.#calls(
      where,
      o.calls,
      (s.callResponses ?? []).map((f) => classifyResultText(f)),
    );
    if (this.#history >= 2) {
      // Stamps only: the concurrent check decides overlap, and its verdict
      // (evidence.attempts[].overlap) is re-derived with the others.
      if (o.overlap !== undefined || o.overlapDetail !== undefined) {
        this.bad(
          `${where}.overlap`,
          `history version ${this.#history} stores no overlap decision (the concurrent check decides it from the stamps)`,
        );
      }
      return;
    }
    // History version 1: the timer's stored decision must be the one its
    // stamps give.
    const d = o.setupFailure === null
      ? overlapFromTimeline(o.mode, o.timeline)
      : null;
    if (d !== null) {
      this.expect(`${where}.overlap`, o.overlap, d.overlap);
      this.expect(`${where}.overlapDetail`, o.overlapDetail, d.detail);
    } else if (o.setupFailure !== null || o.mode === "single_connection") {
      // No calls released (setup failed, or no send stamps): no overlap.
      this.expect(`${where}.overlap`, o.overlap, false);
    }
    // A two-process timeline without ping stamps (reports written before
    // they were stored) leaves the decision to the digest.
  }

  #tools(): void {
    const tools = (this.r.observations as { tools: ToolObservations[] }).tools;
    const seen = new Set<string>();
    const changes = this.#listingChanges();
    const d = (this.r.observations as Record<string, unknown>)
      .definition as Record<string, unknown>;
    const control = Array.isArray(d.control)
      ? d.control as SessionObservation[]
      : [];
    const started = control.some((c) => c.setupFailure === null);
    tools.forEach((t, i) => {
      const where = `observations.tools[${i}] (${toolLabel(t)})`;
      if (seen.has(toolLabel(t))) this.bad(where, "observed twice");
      seen.add(toolLabel(t));
      for (const kind of ["once", "twice", "probed"] as const) {
        (t[kind] ?? []).forEach((o, k) => {
          if (o.kind !== kind) {
            this.bad(`${where}.${kind}[${k}].kind`, `is ${short(o.kind)}`);
          }
          this.#sequential(`${where}.${kind}[${k}]`, o, t);
        });
      }
      (t.concurrent ?? []).forEach((o, k) =>
        this.#attempt(`${where}.concurrent[${k}]`, o, t)
      );
      // Once and twice (and probed, when run) hold every run, unless none
      // ran: a server that never started, or a tool the task protocol keeps
      // from being called, has no tool sessions at all.
      const runs = started && t.skipped === undefined ? d.runs : 0;
      this.#runsPresent(`${where}.once`, t.once, runs);
      this.#runsPresent(`${where}.twice`, t.twice, runs);
      if ((t.probed ?? []).length > 0) {
        this.#runsPresent(`${where}.probed`, t.probed ?? [], runs);
      }
      this.expect(
        `${where}.declarationChanges`,
        t.declarationChanges,
        changes.get(t.tool),
      );
    });
  }

  /**
   * Every tool's declaration changes, re-derived from the raw listings the
   * sessions kept (`sessions[].toolsList`) against `protocol.toolsList`.
   */
  #listingChanges(): Map<string, DeclarationChange[]> {
    const p = this.r.protocol as Record<string, unknown>;
    const reference = Array.isArray(p.toolsList) ? p.toolsList as string[] : [];
    const kept: SessionListing[] = [];
    (this.r.sessions as SessionLike[]).forEach((s, i) => {
      if (!isObject(s) || !Object.hasOwn(s, "toolsList")) return;
      const pages = (s as { toolsList?: unknown }).toolsList;
      if (!Array.isArray(pages) || pages.some((x) => typeof x !== "string")) {
        this.bad(`sessions[${i}].toolsList`, "not a list of frame texts");
        return;
      }
      if (s.kind.startsWith("attempt:")) {
        this.bad(
          `sessions[${i}].toolsList`,
          "a concurrent attempt keeps no listing",
        );
        return;
      }
      if (sameListing(reference, pages as string[])) {
        this.bad(
          `sessions[${i}].toolsList`,
          "kept, but declares every tool as the first listing does",
        );
      }
      kept.push({
        kind: s.kind,
        tool: s.tool,
        run: s.run,
        toolsList: pages as string[],
      });
    });
    return listingChanges(reference, kept);
  }

  /** A pinned target: every session's command runs the pinned package. */
  #target(): void {
    const p = this.r.provenance as Record<string, unknown>;
    if (!Object.hasOwn(p, "target")) return; // reports before 2026-12-01
    const t = p.target;
    if (!isObject(t) || typeof t.pinned !== "boolean") {
      this.bad("provenance.target", "expected { pinned: true|false, ... }");
      return;
    }
    if (t.pinned !== true) return; // a local command: nothing to re-derive
    if (
      typeof t.package !== "string" || typeof t.version !== "string" ||
      (t.runtime !== "deno" && t.runtime !== "node")
    ) {
      this.bad(
        "provenance.target",
        "a pinned target needs package, version and runtime",
      );
      return;
    }
    const spec = `npm:${t.package}@${t.version}`;
    const runs = (command: string[]) =>
      t.runtime === "node"
        ? command.some((a) => a.includes(`/node_modules/${t.package}/`))
        : command.some((a) => a === spec || a.startsWith(`${spec}/`));
    (this.r.sessions as SessionLike[]).forEach((s, i) => {
      const command = isObject(s) && Array.isArray(s.command)
        ? (s.command as unknown[]).filter((a) => typeof a === "string")
        : [];
      if (command.length > 0 && !runs(command as string[])) {
        this.bad(
          `sessions[${i}].command`,
          `does not run the pinned ${
            t.runtime === "node" ? `node_modules/${t.package}` : spec
          } that provenance.target names`,
        );
      }
    });
  }

  /** The headline's claims, from the verdicts (already re-derived) and the listing. */
  #summary(): void {
    if (!Object.hasOwn(this.r, "summary")) return; // before 2026-12-02
    const s = this.r.summary;
    if (!isObject(s) || Object.keys(s).some((k) => k !== "claims")) {
      this.bad("summary", "expected { claims }");
      return;
    }
    this.expect(
      "summary.claims",
      s.claims,
      reportClaims(this.r as unknown as ClaimsInput),
    );
  }

  /**
   * What learning did, against the argument sets it names: every learned
   * set the battery ran has its entry, with the same arguments and the
   * same `learned` fact, which follows from its origins (`learnedAim`);
   * every origin's value is the one at its path in its arguments.
   */
  #learned(): void {
    if (!Object.hasOwn(this.r, "learned")) return; // not learned, or before 2026-12-02
    const l = this.r.learned;
    if (
      !isObject(l) || Object.keys(l).sort().join() !== "calls,files,steps" ||
      !Array.isArray(l.steps) || !Array.isArray(l.calls) ||
      !Array.isArray(l.files)
    ) {
      this.bad(
        "learned",
        "expected exactly { steps: [], calls: [], files: [] }",
      );
      return;
    }
    const originsOf = (
      where: string,
      set: unknown,
    ): ArgumentOrigin[] | null => {
      if (
        !isObject(set) || !isObject(set.arguments) ||
        !Array.isArray(set.origins) ||
        !set.origins.every((o) =>
          isObject(o) && typeof o.path === "string" &&
          typeof o.from === "string"
        )
      ) {
        this.bad(
          where,
          "expected { arguments: {}, origins: [{ path, value, from }] }",
        );
        return null;
      }
      const at = valuesByPath(set.arguments);
      const origins = set.origins as ArgumentOrigin[];
      origins.forEach((o, i) => {
        if (!(at.get(o.path) ?? []).some((v) => same(v, o.value))) {
          this.bad(
            `${where}.origins[${i}].value`,
            `report says ${short(o.value)}, the arguments hold ${
              short(at.get(o.path)?.[0])
            } at ${short(o.path)}`,
          );
        }
      });
      return origins;
    };
    l.steps.forEach((s, i) => originsOf(`learned.steps[${i}]`, s));
    const tools = (this.r.observations as { tools: ToolObservations[] }).tools;
    for (const t of tools) {
      if (t.learned === undefined) continue;
      const i = l.calls.findIndex((c) =>
        isObject(c) && c.tool === t.tool && c.variant === t.variant
      );
      const c = l.calls[i] as Record<string, unknown> | undefined;
      const where = `learned.calls[${i}]`;
      if (c === undefined) {
        this.bad(
          "learned.calls",
          `no entry for ${short(t.tool)} ${short(t.variant)}`,
        );
        continue;
      }
      const origins = originsOf(where, c);
      if (origins === null) continue;
      this.expect(`${where}.arguments`, c.arguments, t.arguments);
      this.expect(`${where}.learned`, c.learned, t.learned);
      this.expect(
        `${where}.learned`,
        c.learned,
        learnedAim(origins, l.files.length === 0),
      );
    }
  }

  /** The state effects, re-derived whole from observations and snapshots. */
  #stateEffects(): void {
    if (!Object.hasOwn(this.r, "stateEffects")) return; // before 2026-12-01
    const claimed = this.r.stateEffects;
    if (
      !isObject(claimed) ||
      Object.keys(claimed).sort().join() !== "control,erroredCalls" ||
      !Array.isArray(claimed.control) || !Array.isArray(claimed.erroredCalls)
    ) {
      this.bad(
        "stateEffects",
        "expected exactly { control: [], erroredCalls: [] }",
      );
      return;
    }
    const derived = deriveStateEffects(
      this.r.observations as Parameters<typeof deriveStateEffects>[0],
      this.r.snapshots as Record<string, Snapshot>,
    );
    for (const k of ["control", "erroredCalls"] as const) {
      const a = claimed[k] as unknown[];
      const b = derived[k] as unknown[];
      if (a.length !== b.length) {
        this.bad(
          `stateEffects.${k}`,
          `report says ${a.length} entr(ies), evidence gives ${b.length}`,
        );
        continue;
      }
      a.forEach((x, i) => this.expect(`stateEffects.${k}[${i}]`, x, b[i]));
    }
  }

  #verdicts(): void {
    const r = this.r;
    const obs = r.observations as {
      definition: Parameters<typeof judgeTool>[0];
      tools: ToolObservations[];
    };
    // Re-derive under the rules the report was judged with, when this
    // engine has them; otherwise under the current rules (and say so).
    const rules = SUPPORTED_RULES.includes(this.#engine)
      ? this.#engine
      : ENGINE_VERSION;
    const failed = rules >= 3 ? serverFailure(obs.definition, obs.tools) : null;
    if (Object.hasOwn(r, "setupFailure")) {
      this.expect("setupFailure", r.setupFailure, failed);
    } else if (failed !== null) {
      this.bad("setupFailure", `missing; the evidence gives ${short(failed)}`);
    }
    const derived = obs.tools.flatMap((t) =>
      judgeTool(
        obs.definition,
        t,
        r.snapshots as Record<string, Snapshot>,
        r.tests as TestName[],
        {
          serverFailed: failed,
          rules,
          changesets: (r.changesets ?? {}) as Record<string, Changeset>,
        },
      )
    );
    const key = (v: Verdict) =>
      `${v.tool}${v.variant ? `[${v.variant}]` : ""} ${v.test}`;
    const saved = new Map<string, Verdict>();
    for (const v of r.verdicts as Verdict[]) {
      if (saved.has(key(v))) this.bad(key(v), "verdict listed twice");
      saved.set(key(v), v);
    }
    derived.forEach((d, i) => {
      const s = saved.get(key(d));
      saved.delete(key(d));
      if (!s) {
        this.bad(
          key(d),
          `verdict missing from the report (derived ${d.outcome})`,
        );
        return;
      }
      if ((r.verdicts as Verdict[])[i] !== s) {
        this.bad(`verdicts[${i}]`, `out of order: ${key(d)} expected here`);
      }
      const fields = new Set([...Object.keys(s), ...Object.keys(d)]);
      fields.delete("details"); // prose: covered by the digest (see DIGEST_ONLY)
      for (const f of fields) {
        const a = (s as unknown as Record<string, unknown>)[f];
        const b = (d as unknown as Record<string, unknown>)[f];
        if (!same(a, b)) {
          this.bad(
            `${key(d)} ${f}`,
            `report says ${short(a)}, evidence gives ${short(b)}`,
          );
        }
      }
    });
    for (const k of saved.keys()) {
      this.bad(k, "verdict in the report that the evidence does not produce");
    }
    const exp = checkExpectations(
      r.expected as Parameters<typeof checkExpectations>[0],
      derived,
    );
    const claimed = r.expectations as Record<string, unknown>;
    if (claimed.matched !== exp.matched || claimed.total !== exp.total) {
      this.bad(
        "expectations",
        `report says ${claimed.matched}/${claimed.total}, evidence gives ${exp.matched}/${exp.total}`,
      );
    } else this.expect("expectations.results", claimed.results, exp.results);
    if (Object.keys(claimed).sort().join() !== "matched,results,total") {
      this.bad("expectations", "expected exactly { matched, total, results }");
    }
  }
}

/**
 * Re-derive everything a report claims from the raw evidence inside it
 * and name every field that differs. An empty list means the report agrees
 * with its own evidence; whether that evidence is what a run recorded is
 * for the ledger head or a signature to prove. Pure.
 *
 * @example
 * ```ts ignore
 * const problems = verifyReport(parseEvidenceJson(text));
 * ```
 */
export function verifyReport(
  report: unknown,
  options: { seed?: Snapshot | null } = {},
): ReportProblem[] {
  if (!isObject(report)) {
    return [{ where: "schema", message: "not a verity report" }];
  }
  if (report.schema === PACKED_SCHEMA || report.schema === SEEDREF_SCHEMA) {
    // The stored form: rebuild every snapshot from the seed and its patch
    // and every frame from its digest, then re-derive as for /1 (each
    // rebuilt snapshot's digest is re-derived from its content). /3: the
    // seed is the snapshot rebuilt from the definition (options.seed),
    // its digest re-derived like the others'.
    const { report: unpacked, problems } = unpackReport(report, {
      seed: options.seed ?? null,
    });
    return [...problems, ...new Verifier(unpacked).run()];
  }
  if (report.schema !== "verity.report/1") {
    return [{
      where: "schema",
      message: "not a verity.report/1, /2 or /3 report",
    }];
  }
  return new Verifier(report).run();
}
