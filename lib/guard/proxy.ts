/**
 * `verity guard`'s stdio pass-through between an MCP client and the server
 * it started: every message passes frame by frame (bounded lines, never a
 * whole stream), except that `tools/list` answers are checked against the
 * audit (`listing.ts`), `tools/call` for a drifted or un-audited tool is
 * refused by policy, `notifications/tools/list_changed` makes the guard
 * list the tools again itself, and every call is appended to a ledger as
 * an observed record with the privilege use the sandbox saw.
 *
 * Request ids from the client are hostile: one already in flight is
 * replaced by the guard's own on the way to the server and restored on the
 * answer, so every answer reaches the request it belongs to; an answer to
 * an id nothing asked is dropped.
 *
 * This is an edge module: it spawns the server and writes the ledger.
 * Requires `--allow-run`, `--allow-read`, `--allow-write`.
 *
 * @module
 */
import { basename } from "node:path";
import { appendBlocks } from "../evidence/ledger.ts";
import type { Entry } from "../evidence/chain.ts";
import { argumentShape } from "../evidence/checks.ts";
import { privilegeUse } from "../sandbox/privilege.ts";
import type { Launch } from "../sandbox/types.ts";
import { boundDepth } from "../wire/bound.ts";
import { containCommand } from "../wire/contain.ts";
import { boundedLines, LineTooLong } from "../wire/lines.ts";
import { signalGroup, stopGroup, trackGroup } from "../wire/process_group.ts";
import type { SpawnSpec } from "../wire/spawn_spec.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { ServerError } from "../errors.ts";
import { showControls } from "../common/show_controls.ts";
import type { Audited } from "./audited.ts";
import { checkPage, type ToolDecision } from "./listing.ts";
import type { GuardPolicy } from "./policy.ts";

/** The JSON-RPC error code of a call the guard refused. */
export const REFUSED = -32050;

/** Most requests in flight at once; past it a request is answered with an error. */
const MAX_PENDING = 4096;
/** Observed records waiting for the ledger before the client is read again. */
const MAX_BACKLOG = 10_000;
/** Largest frame accepted in either direction, in bytes. */
const MAX_FRAME = 16 * 1024 * 1024;
/** Milliseconds for each answer to the guard's own `tools/list`. */
const TIMEOUT_MS = 30_000;
/** Milliseconds an observed record may wait before its ledger append starts. */
const FLUSH_MS = 1000;
/** Most bytes of one call's permission checks read from the audit log. */
const MAX_SLICE = 1024 * 1024;

/** Options for {@linkcode runGuard}. */
export interface GuardOptions {
  audited: Audited;
  policy: GuardPolicy;
  /** The server, ready to spawn (sandboxed by the caller). */
  spec: SpawnSpec;
  /** The sandboxed launch (audit log, policy); undefined without a sandbox. */
  launch?: Launch;
  /** The ledger every call is appended to. */
  ledger: string;
  /** The server command as the user gave it (recorded). */
  command: readonly string[];
  /**
   * Once this settles the session ends as when the client closes its input
   * (the guard's SIGINT and SIGTERM).
   * @default {never}
   */
  stop?: Promise<unknown>;
}

/** How a guard session ended. */
export interface GuardOutcome {
  /** The exit code: the server's when it ended by itself, 1 when the guard ended it for a bad frame. */
  code: number;
  /** The ledger's head and block count after the session's last append. */
  head: string;
  blocks: number;
}

interface Call {
  tool: string;
  args: Record<string, unknown>;
  decision: ToolDecision;
  logFrom: number;
  overlapped: boolean;
}

interface Pending {
  /** The client's id (restored on the answer), or null for the guard's own request. */
  id: unknown;
  method: string;
  cursor: string | null;
  call?: Call;
  own?: (msg: Record<string, unknown> | null, text: string) => void;
}

const enc = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

function keyOf(id: unknown): string | null {
  if (typeof id === "string") return `s${id}`;
  if (typeof id === "number") return `n${id}`;
  return null;
}

/**
 * Appends entries in batches, one append in flight and at most one a
 * second (each append re-verifies and rewrites the ledger), so the calls
 * never wait for it; entries keep their order.
 */
class LedgerWriter {
  #queue: (Entry | Promise<Entry>)[] = [];
  #running: Promise<void> | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  head = "";
  blocks = 0;
  constructor(readonly path: string, readonly warn: (s: string) => void) {}

  get backlog(): number {
    return this.#queue.length;
  }

  add(e: Entry | Promise<Entry>): void {
    // A lone surrogate (from a client's arguments or a server's tool name)
    // has no canonical form: it is recorded as U+FFFD.
    this.#queue.push(
      Promise.resolve(e).then((x) => ({
        type: x.type,
        record: wellFormed(x.record),
      })),
    );
    if (this.#queue.length >= 4096) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Start an append of what is queued now (or wait for the one in flight). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#running ??= this.#append().finally(() => {
      this.#running = null;
      if (this.#queue.length > 0) {
        this.#timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
      }
    });
    return this.#running;
  }

  async #append(): Promise<void> {
    const batch = await Promise.all(this.#queue.slice(0, 4096));
    try {
      const r = await appendBlocks(this.path, batch);
      this.#queue.splice(0, batch.length);
      this.head = r.head;
      this.blocks = r.first + r.count;
    } catch (e) {
      this.warn(
        `ledger ${this.path}: cannot append (${
          (e as Error).message
        }); kept in memory, retried`,
      );
    }
  }

  /** Every entry added so far written (three tries, then what was lost is said). */
  async idle(): Promise<void> {
    for (let i = 0; i < 3 && this.#queue.length > 0; i++) {
      while (this.#running !== null) await this.#running;
      if (this.#queue.length > 0) await this.flush();
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#queue.length > 0) {
      this.warn(
        `ledger ${this.path}: ${this.#queue.length} record(s) not written`,
      );
    }
  }
}

/**
 * Run one guard session to its end: start the server, pass messages both
 * ways until the client closes its input or the server exits, then stop
 * the server, finish the ledger and return the exit code and the head.
 * Throws `EvidenceError` (exit 2) when the ledger cannot be opened, and
 * `ServerError` (exit 2) when the server cannot be started.
 */
export async function runGuard(o: GuardOptions): Promise<GuardOutcome> {
  return await new GuardSession(o).run();
}

class GuardSession {
  #o: GuardOptions;
  #ledger: LedgerWriter;
  #pending = new Map<string, Pending>();
  #decisions = new Map<string, ToolDecision>();
  #listingSeen = new Set<string>();
  /** A whole listing was checked since the tools last changed. */
  #listed = false;
  #relisting: Promise<void> | null = null;
  #ownIds = 0;
  #calls = 0;
  #inFlight = 0;
  #session: string;
  #toClient: WritableStreamDefaultWriter<Uint8Array>;
  #toServer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  /** Why the guard ended the session itself (a frame over the bound). */
  #reason: string | null = null;
  #dropped = 0;

  constructor(o: GuardOptions) {
    this.#o = o;
    this.#ledger = new LedgerWriter(o.ledger, (s) => this.#warn(s));
    this.#session = `guard-${
      new Date().toISOString().replace(/[-:.]/g, "")
    }-${Deno.pid}`;
    this.#toClient = Deno.stdout.writable.getWriter();
  }

  #warn(s: string): void {
    console.error(`verity guard: ${showControls(s)}`);
  }

  async run(): Promise<GuardOutcome> {
    const o = this.#o;
    // The first block proves the ledger is writable before the server starts.
    const first = await appendBlocks(o.ledger, [{
      type: "guard_session",
      record: {
        session: this.#session,
        evidence: {
          kind: o.audited.kind,
          file: basename(o.audited.file),
          digest: o.audited.digest,
        },
        policy: { drift: o.policy.drift, correct_hints: o.policy.correctHints },
        command: [...o.command],
        backend: o.launch?.backend ?? "none",
        started_at: new Date().toISOString(),
      },
    }]);
    this.#ledger.head = first.head;
    this.#ledger.blocks = first.first + first.count;
    const [program, ...args] = o.spec.contain === false
      ? o.spec.command
      : containCommand(o.spec.command);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program!, {
        args,
        env: o.spec.env,
        clearEnv: true,
        ...(o.spec.cwd !== undefined ? { cwd: o.spec.cwd } : {}),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        detached: true,
      }).spawn();
    } catch (e) {
      throw new ServerError(
        `verity guard: cannot start ${JSON.stringify(o.command[0] ?? "")}: ${
          (e as Error).message
        }`,
      );
    }
    trackGroup({ kill: () => signalGroup(child.pid, "SIGKILL") }, child.status);
    this.#toServer = child.stdin.getWriter();
    this.#toServer.closed.catch(() => {});
    const stderr = (async () => {
      for await (const c of child.stderr) await Deno.stderr.write(c);
    })().catch(() => {});
    const fromServer = this.#pump(
      child.stdout,
      "server",
      (l) => this.#fromServer(l),
    );
    const clientEnded = this.#pump(
      Deno.stdin.readable,
      "client",
      (l) => this.#fromClient(l),
    );
    const ended = await Promise.race([
      child.status.then(() => "server" as const),
      clientEnded.then(() => "client" as const),
      fromServer.then(() => "server" as const),
      ...(o.stop ? [o.stop.then(() => "client" as const)] : []),
    ]);
    const stop = await stopGroup(
      child.pid,
      child.status,
      2000,
      async () => await this.#toServer?.close(),
    );
    await Promise.race([fromServer, new Promise((r) => setTimeout(r, 500))]);
    await Promise.race([stderr, new Promise((r) => setTimeout(r, 500))]);
    for (const [k, p] of this.#pending) {
      this.#pending.delete(k);
      if (p.own) p.own(null, "");
      else if (p.call) {
        this.#record(p.call, "unknown", logSize(o.launch?.auditLog ?? null));
      }
    }
    await this.#ledger.idle();
    await this.#toClient.close().catch(() => {});
    const byItself = ended === "server" || stop.stoppedBy === "self" ||
      stop.stoppedBy === "stdin_close";
    return {
      code: this.#reason !== null ? 1 : byItself ? stop.status.code : 0,
      head: this.#ledger.head,
      blocks: this.#ledger.blocks,
    };
  }

  /** Read `stream` line by line until it ends or a line passes the bound. */
  async #pump(
    stream: ReadableStream<Uint8Array>,
    who: string,
    onLine: (line: Uint8Array) => void | Promise<void>,
  ): Promise<void> {
    try {
      for await (const line of boundedLines(stream, MAX_FRAME)) {
        const r = onLine(line);
        if (r) await r;
      }
    } catch (e) {
      if (!(e instanceof LineTooLong)) return;
      this.#reason = `the ${who} sent a line longer than ${MAX_FRAME} bytes`;
      this.#warn(`${this.#reason}; ending the session`);
    }
  }

  #send(w: WritableStreamDefaultWriter<Uint8Array> | null, msg: unknown): void {
    w?.write(enc.encode(JSON.stringify(msg) + "\n")).catch(() => {});
  }

  #replyError(
    id: unknown,
    code: number,
    message: string,
    data?: unknown,
  ): void {
    this.#send(this.#toClient, {
      jsonrpc: "2.0",
      id: keyOf(id) === null ? null : id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    });
  }

  /**
   * A line from the client: passed on as the guard read it (re-serialized,
   * so a key sent twice reaches the server as the guard read it), or
   * answered here.
   */
  #fromClient(line: Uint8Array): void | Promise<void> {
    const r = readLine(line);
    if (r === null) return;
    if (typeof r === "string") {
      return this.#replyError(null, -32700, `verity guard: ${r}`);
    }
    const { msg } = r;
    if (typeof msg.method !== "string" || !("id" in msg)) {
      if (typeof msg.method === "string" && msg.method.startsWith("tools/")) {
        return this.#warn(
          `dropped from the client: ${msg.method} without an id`,
        );
      }
      // A notification, or the client's answer to a server request.
      return this.#send(this.#toServer, msg);
    }
    if (keyOf(msg.id) === null) {
      return this.#replyError(
        null,
        -32600,
        "verity guard: a request id must be a string or a number",
      );
    }
    if (msg.method === "tools/call") void this.#call(msg);
    else this.#forward(msg);
    if (this.#ledger.backlog > MAX_BACKLOG) return this.#ledger.flush();
  }

  /** Send a client request to the server, its id replaced when already in flight. */
  #forward(msg: Record<string, unknown>, call?: Call): void {
    if (this.#pending.size >= MAX_PENDING) {
      return this.#replyError(
        msg.id,
        -32000,
        `verity guard: more than ${MAX_PENDING} requests in flight`,
      );
    }
    const remapped = this.#pending.has(keyOf(msg.id)!);
    const sid = remapped ? this.#ownId() : msg.id;
    const params = msg.params;
    this.#pending.set(keyOf(sid)!, {
      id: msg.id,
      method: msg.method as string,
      cursor: isPlainObject(params) && typeof params.cursor === "string"
        ? params.cursor
        : null,
      ...(call ? { call } : {}),
    });
    this.#send(this.#toServer, remapped ? { ...msg, id: sid } : msg);
  }

  #ownId(): string {
    let id: string;
    do id = `verity-guard-${++this.#ownIds}`; while (
      this.#pending.has(keyOf(id)!)
    );
    return id;
  }

  async #call(msg: Record<string, unknown>): Promise<void> {
    const p = msg.params;
    const name = isPlainObject(p) && typeof p.name === "string" ? p.name : null;
    if (name === null) {
      return this.#replyError(
        msg.id,
        -32602,
        "verity guard: tools/call needs params.name, a string",
      );
    }
    const args = isPlainObject(p) && isPlainObject(p.arguments)
      ? p.arguments
      : {};
    let d = this.#decisions.get(name);
    if (d === undefined && !this.#listed) {
      await this.#relist();
      d = this.#decisions.get(name);
    }
    if (d === undefined || d.action === "refuse") {
      const reason = d?.reason ?? "the server does not list it";
      this.#replyError(
        msg.id,
        REFUSED,
        `verity guard refused ${name}: ${reason}`,
        { tool: name, reason },
      );
      this.#warn(`refused tools/call ${name}: ${reason}`);
      const refused = d ??
        { name, action: "refuse", reason, hash: "", recipe: "3" };
      return this.#record(
        { tool: name, args, decision: refused, logFrom: 0, overlapped: false },
        "refused",
        null,
      );
    }
    if (d.action === "warn") {
      this.#warn(`passed tools/call ${name} with a warning: ${d.reason}`);
    }
    const log = this.#o.launch?.auditLog ?? null;
    const call = {
      tool: name,
      args,
      decision: d,
      logFrom: logSize(log),
      overlapped: this.#inFlight > 0,
    };
    this.#inFlight++;
    this.#forward(msg, call);
  }

  /** A line from the server: an answer to its request, anything else passed on, as the guard read it. */
  #fromServer(line: Uint8Array): void {
    const r = readLine(line);
    if (r === null) return;
    if (typeof r === "string") return this.#drop(r);
    const { msg, text } = r;
    if (typeof msg.method === "string") {
      if ("result" in msg || "error" in msg) {
        return this.#drop(
          "a request or notification that also carries an answer",
        );
      }
      if (msg.method === "notifications/tools/list_changed" && !("id" in msg)) {
        this.#decisions.clear();
        this.#listed = false;
        void this.#relist();
      }
      return this.#send(this.#toClient, msg);
    }
    const key = keyOf(msg.id);
    const p = key === null ? undefined : this.#pending.get(key);
    if (p === undefined) {
      return this.#drop(
        `an answer to id ${JSON.stringify(msg.id)}, which nothing asked`,
      );
    }
    this.#pending.delete(key!);
    if (p.own) return p.own(msg, text);
    if (p.method === "tools/list" && "result" in msg) {
      return this.#listing(p, text);
    }
    this.#send(this.#toClient, { ...msg, id: p.id });
    if (p.call) {
      this.#inFlight--;
      const r = msg.result;
      const outcome = "error" in msg
        ? "protocol_error"
        : isPlainObject(r) && r.isError === true
        ? "tool_error"
        : "ok";
      this.#record(p.call, outcome, logSize(this.#o.launch?.auditLog ?? null));
    }
  }

  #drop(what: string): void {
    if (this.#dropped++ < 100) this.#warn(`dropped from the server: ${what}`);
  }

  /** Check a listing page, keep the decisions, record them; the checked page, or null. */
  #check(text: string, cursor: string | null, by: "client" | "guard") {
    if (cursor === null) {
      // A new listing: until its last page, a tool not yet seen is listed again.
      this.#listingSeen = new Set();
      this.#decisions.clear();
      this.#listed = false;
    }
    const c = checkPage(
      text,
      this.#o.audited,
      this.#o.policy,
      this.#listingSeen,
    );
    for (const d of c.decisions) {
      this.#decisions.set(d.name, d);
      if (d.action !== "pass") {
        this.#warn(
          `${
            d.action === "warn" ? "passed with a warning" : "left out"
          }: ${d.name}: ${d.reason}`,
        );
      }
    }
    const next = (c.message?.result as Record<string, unknown> | undefined)
      ?.nextCursor;
    if (c.message !== null && typeof next !== "string") this.#listed = true;
    this.#ledger.add({
      type: "guard_listing",
      record: {
        session: this.#session,
        by,
        cursor,
        tools: c.decisions.map((d) => ({
          name: d.name,
          action: d.action,
          reason: d.reason,
          contract_hash: d.hash,
          contract_recipe: d.recipe,
        })),
        problems: c.problems,
      },
    });
    return c;
  }

  #listing(p: Pending, text: string): void {
    const c = this.#check(text, p.cursor, "client");
    if (c.message === null) {
      return this.#replyError(
        p.id,
        -32603,
        `verity guard: the server's tools/list answer cannot be checked: ${
          c.problems[0]
        }`,
      );
    }
    this.#send(this.#toClient, { ...c.message, id: p.id });
  }

  /** The guard's own request to the server; null on no answer within the timeout. */
  #request(
    method: string,
    params: unknown,
  ): Promise<{ msg: Record<string, unknown>; text: string } | null> {
    const id = this.#ownId();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(keyOf(id)!);
        resolve(null);
      }, TIMEOUT_MS);
      this.#pending.set(keyOf(id)!, {
        id: null,
        method,
        cursor: null,
        own: (msg, text) => {
          clearTimeout(timer);
          resolve(msg === null ? null : { msg, text });
        },
      });
      this.#send(this.#toServer, { jsonrpc: "2.0", id, method, params });
    });
  }

  /** List every page itself (cursor loops stopped), so calls are judged on the current listing. */
  #relist(): Promise<void> {
    this.#relisting ??= (async () => {
      const cursors = new Set<string>();
      let cursor: string | null = null;
      for (let page = 0; page < 1000; page++) {
        const r = await this.#request(
          "tools/list",
          cursor === null ? {} : { cursor },
        );
        if (r === null || !("result" in r.msg)) return;
        const c = this.#check(r.text, cursor, "guard");
        const next = (c.message?.result as Record<string, unknown> | undefined)
          ?.nextCursor;
        if (typeof next !== "string" || cursors.has(next)) return;
        cursors.add(next);
        cursor = next;
      }
    })().finally(() => (this.#relisting = null));
    return this.#relisting;
  }

  /** Append the call's observed record (its privilege use read from the audit log first). */
  #record(call: Call, outcome: string, logTo: number | null): void {
    const index = ++this.#calls;
    const at = new Date().toISOString();
    const launch = this.#o.launch;
    const privilege = (async () => {
      if (outcome === "refused") return null;
      if (launch === undefined) {
        return privilegeUse(null, { backend: "none" }, null);
      }
      const stateDir = launch.policy?.writable[0] ?? null;
      const log = launch.auditLog;
      if (log === null || logTo === null) {
        return privilegeUse(null, launch, stateDir);
      }
      const u = privilegeUse(
        await readSlice(log, call.logFrom, logTo),
        launch,
        stateDir,
      );
      if (logTo - call.logFrom > MAX_SLICE) {
        u.unseen.unshift(
          `checks past the first ${MAX_SLICE} bytes of this call's slice of the audit log`,
        );
      }
      if (call.overlapped) {
        u.unseen.unshift(
          "another call was in flight: its checks may be in this slice",
        );
      }
      return u;
    })();
    this.#ledger.add(privilege.then((privilege): Entry => {
      const a = boundDepth(call.args) as Record<string, unknown>;
      return {
        type: "observation",
        record: {
          index,
          tool: call.tool,
          args: a,
          argument_shape: argumentShape(a),
          contract_hash: call.decision.hash || null,
          contract_recipe: call.decision.recipe,
          decision: call.decision.action,
          outcome,
          session: this.#session,
          call: index,
          variant: null,
          privilege,
          at,
        },
      };
    }));
  }
}

/** A line read as one JSON-RPC object and its text; null for a blank line; else what is wrong with it. */
function readLine(
  line: Uint8Array,
): { msg: Record<string, unknown>; text: string } | string | null {
  let text: string;
  let msg: unknown;
  try {
    text = strict.decode(line);
    if (text.trim() === "") return null;
    msg = JSON.parse(text);
  } catch (e) {
    return e instanceof SyntaxError
      ? `a line that is not JSON (${e.message})`
      : "a line that is not UTF-8";
  }
  return isPlainObject(msg)
    ? { msg, text }
    : "a line that is not one JSON-RPC object (batches are not passed)";
}

/** `v` with every string and key well-formed UTF-16 (lone surrogates as U+FFFD). */
function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return v.toWellFormed();
  if (Array.isArray(v)) return v.map(wellFormed);
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k.toWellFormed(), wellFormed(x)]),
  );
}

function logSize(path: string | null): number {
  if (path === null) return 0;
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

async function readSlice(
  path: string,
  from: number,
  to: number,
): Promise<string> {
  if (to <= from) return "";
  let f: Deno.FsFile | null = null;
  try {
    f = await Deno.open(path);
    await f.seek(from, Deno.SeekMode.Start);
    const buf = new Uint8Array(Math.min(to - from, MAX_SLICE));
    let n = 0;
    while (n < buf.length) {
      const got = await f.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    // Only whole lines: a check cut at the edge is not half-read.
    const text = new TextDecoder().decode(buf.subarray(0, n));
    return text.slice(0, text.lastIndexOf("\n") + 1);
  } catch {
    return "";
  } finally {
    f?.close();
  }
}
