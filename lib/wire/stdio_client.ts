/**
 * JSON-RPC 2.0 client over newline-delimited stdio with verbatim capture.
 *
 * This is an edge module: it spawns processes. Requires `--allow-run`.
 *
 * @module
 */
import { deathMessage } from "./stderr_tail.ts";
import {
  answered,
  decodeFrame,
  type Frame,
  noAnswer,
  replyTo,
  type RpcOutcome,
  type WireFailure,
} from "./frames.ts";

export type { RpcOutcome };
import { boundDepth, MAX_VALUE_DEPTH } from "./bound.ts";
import { ServerProcess } from "./server_process.ts";
import { findExecutable } from "../common/executable.ts";
import { firstInvalidUtf8 } from "../common/utf8.ts";
import { PortRelay } from "./port_relay.ts";
import { boundedLines, LineTooLong } from "./lines.ts";

export type { ExitInfo, SpawnSpec } from "./spawn_spec.ts";
import type { ExitInfo, SpawnSpec } from "./spawn_spec.ts";

/** Options for {@linkcode StdioClient.start}. */
export interface StdioClientOptions {
  /**
   * Milliseconds the whole session may last (from spawn); past it the
   * session ends (`deadline`) and the process group is killed. Null: none.
   * @default {null}
   */
  deadlineMs?: number | null;
}

/** Largest accepted line; a longer one ends the session. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Most bytes the server may send on stdout in one session (`budget_exceeded`). */
const MAX_SESSION_BYTES = 64 * 1024 * 1024;
/**
 * Most unsolicited frames kept (notifications, server requests, garbage,
 * answers to unknown ids); later ones are counted behind one marker frame.
 */
const MAX_UNSOLICITED = 256;
/** Most protocol problems listed one by one; the rest are counted. */
const MAX_PROBLEMS = 100;

interface Pending {
  resolve: (o: RpcOutcome) => void;
  sentAt: number;
  timer: ReturnType<typeof setTimeout>;
}

const enc = new TextEncoder();

/**
 * A running MCP server spoken to over stdio.
 *
 * @example
 * ```ts ignore
 * const c = StdioClient.start({ command: ["deno", "run", "server.ts"], env: {} });
 * const r = await c.request("tools/list", {}, 10_000);
 * await c.close();
 * ```
 */
export class StdioClient {
  /** Every frame in both directions, in order. */
  readonly frames: Frame[] = [];
  /** Protocol problems seen (invalid JSON, invalid UTF-8, unmatched ids). */
  readonly problems: string[] = [];
  #proc: ServerProcess | null = null;
  #relay: PortRelay | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #t0 = performance.now();
  #nextId = 1;
  #pending = new Map<number | string, Pending>();
  #failure: WireFailure | null = null;
  #readDone: Promise<void> = Promise.resolve();
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #received = 0;
  /** Whether the server has answered a request yet (the handshake began). */
  #answered = false;
  #unsolicited = 0;
  #dropped: { frames: number; bytes: number; marker: Frame | null } = {
    frames: 0,
    bytes: 0,
    marker: null,
  };
  #problemsDropped = 0;

  private constructor() {}

  #problem(text: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(text);
    else {
      this.#problemsDropped++;
      this.problems[MAX_PROBLEMS - 1] = `... and ${
        this.#problemsDropped + 1
      } more problems (not listed)`;
    }
  }

  /** Spawn the server in its own process group. Never throws: a spawn failure ends the session. */
  static start(spec: SpawnSpec, opts: StdioClientOptions = {}): StdioClient {
    const c = new StdioClient();
    // Inside the wrapper a missing program would look like an early exit.
    const first = spec.command[0];
    if (
      spec.contain !== false && first !== undefined &&
      findExecutable(first, spec.env.PATH ?? Deno.env.get("PATH") ?? "") ===
        null
    ) {
      c.#fail({
        reason: "spawn_failed",
        message: `cannot start ${
          JSON.stringify(first)
        }: No such file or directory (os error 2)`,
      });
      return c;
    }
    const proc = ServerProcess.start(spec, true);
    c.#proc = proc;
    c.#t0 = proc.t0;
    const child = proc.child;
    if (child === null) {
      c.#fail({ reason: "spawn_failed", message: proc.spawnError! });
      return c;
    }
    c.#writer = child.stdin.getWriter();
    c.#writer.closed.catch(() => {});
    c.#readDone = c.#readStdout(child.stdout);
    if (spec.portRelay !== undefined) {
      const relay = PortRelay.start(
        spec.portRelay,
        child.pid,
        (message) => c.abort({ reason: "spawn_failed", message }),
      );
      c.#relay = relay;
      child.status.finally(() => relay.close()).catch(() => {});
    }
    const ms = opts.deadlineMs ?? null;
    if (ms !== null) {
      c.#deadlineTimer = setTimeout(() =>
        c.abort({
          reason: "deadline",
          message: `session deadline of ${(ms / 1000).toFixed(1)} s passed`,
        }), ms);
    }
    child.status.then((st) => {
      clearTimeout(c.#deadlineTimer);
      // Give stdout a moment to drain before declaring pending requests dead.
      setTimeout(
        () =>
          c.#fail({
            reason: "exited",
            message: deathMessage(
              "server exited before answering",
              st.code,
              st.signal ?? null,
              c.stderr().text,
            ),
          }),
        50,
      );
    });
    return c;
  }

  /** The first terminal failure, if any. */
  get failure(): WireFailure | null {
    return this.#failure;
  }

  /** Milliseconds since spawn on this client's monotonic clock. */
  now(): number {
    return performance.now() - this.#t0;
  }

  /** Captured stderr as text (lossy decoding), and how many bytes were dropped. */
  stderr(): { text: string; dropped: number } {
    return this.#proc?.output() ?? { text: "", dropped: 0 };
  }

  /**
   * A non-JSON line on stdout. Before the server's first answer it is not
   * speaking MCP on stdout at all (a banner, a usage text): fail every
   * pending request now, with the first bytes printed, instead of waiting
   * out the timeout. After it, the line is a protocol violation (a logger
   * writing to stdout) recorded as a problem and skipped: the calls wait
   * for their answers as usual. One rule for every command that speaks
   * stdio (`run`, `reality`, `tools`, `capture`, the overlap timer).
   */
  #invalidLine(text: string, problem: string | null): void {
    if (problem !== null) this.#problem(problem);
    if (this.#answered) return;
    const first = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    this.abort({
      reason: "invalid_output",
      message: `server printed non-JSON on stdout: ${JSON.stringify(first)}`,
    });
  }

  #fail(f: WireFailure): void {
    if (this.#failure === null) this.#failure = f;
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.resolve({ status: "unknown", failure: f, ms: this.now() - p.sentAt });
    }
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const line of boundedLines(stream, MAX_FRAME_BYTES)) {
        this.#received += line.length + 1;
        if (this.#received > MAX_SESSION_BYTES) {
          return this.abort({
            reason: "budget_exceeded",
            message:
              `server sent more than ${MAX_SESSION_BYTES} bytes in this session`,
          });
        }
        this.#onLine(line, this.now());
      }
    } catch (e) {
      if (!(e instanceof LineTooLong)) return; // torn down
      const f = decodeFrame(e.head, "in", this.now());
      f.bytes = e.bytes;
      f.problem =
        `frame exceeds ${MAX_FRAME_BYTES} bytes (first 256 bytes kept)`;
      this.frames.push(f);
      this.abort({
        reason: "frame_too_large",
        message: `server sent a line longer than ${MAX_FRAME_BYTES} bytes`,
      });
    }
  }

  /**
   * Keep an unsolicited frame while the budget lasts; past it count it
   * behind one marker frame. Returns its index, or -1 when not kept.
   */
  #keepUnsolicited(frame: Frame): number {
    if (this.#unsolicited < MAX_UNSOLICITED) {
      this.#unsolicited++;
      this.frames.push(frame);
      return this.frames.length - 1;
    }
    const d = this.#dropped;
    d.frames++;
    d.bytes += frame.bytes;
    if (d.marker === null) {
      d.marker = { dir: "in", t: frame.t, bytes: 0 };
      this.frames.push(d.marker);
    }
    d.marker.bytes = d.bytes;
    d.marker.problem =
      `${d.frames} further unsolicited frame(s) (${d.bytes} bytes) counted, not kept: over the budget of ${MAX_UNSOLICITED}`;
    return -1;
  }

  #onLine(line: Uint8Array, t: number): void {
    // Tolerate CRLF framing by stripping one trailing CR for parsing, not for capture.
    const frame = decodeFrame(line, "in", t);
    if (frame.text === undefined) {
      this.#invalidUtf8(line, frame);
      return;
    }
    const text = frame.text.endsWith("\r")
      ? frame.text.slice(0, -1)
      : frame.text;
    if (text.trim() === "") {
      this.#keepUnsolicited(frame);
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      frame.problem = "invalid JSON";
      const i = this.#keepUnsolicited(frame);
      this.#invalidLine(text, i >= 0 ? `frame ${i}: invalid JSON` : null);
      return;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      frame.problem = "not a JSON-RPC object";
      const i = this.#keepUnsolicited(frame);
      if (i >= 0) this.#problem(`frame ${i}: not a JSON-RPC object`);
      return;
    }
    const m = boundDepth(msg, MAX_VALUE_DEPTH) as Record<string, unknown>;
    const deep = m !== msg;
    if (deep) {
      frame.problem =
        `nesting deeper than ${MAX_VALUE_DEPTH} levels (deeper values replaced by a marker)`;
    }
    const id = m.id;
    if ("method" in m) {
      const index = this.#keepUnsolicited(frame);
      if (index >= 0 && deep) this.#problem(`frame ${index}: ${frame.problem}`);
      if (id !== undefined && id !== null) {
        this.#send(replyTo(id, m.method), index >= 0);
      }
      return;
    }
    const p = typeof id === "number" || typeof id === "string"
      ? this.#pending.get(id)
      : undefined;
    if (p === undefined) {
      const index = this.#keepUnsolicited(frame);
      if (index < 0) return;
      this.#problem(
        typeof id !== "number" && typeof id !== "string"
          ? `frame ${index}: response without a usable id`
          : `frame ${index}: response to unknown id ${JSON.stringify(id)}`,
      );
      return;
    }
    const index = this.frames.length;
    this.frames.push(frame);
    if (deep) this.#problem(`frame ${index}: ${frame.problem}`);
    this.#pending.delete(id as number | string);
    this.#answered = true;
    clearTimeout(p.timer);
    p.resolve(answered(m, index, t - p.sentAt));
  }

  /**
   * A line that is not UTF-8. An answer to a pending request, or anything
   * before the first answer, ends the session at once naming the invalid
   * bytes (never "no answer within N s" after waiting out the timeout);
   * after the first answer any other such line is a protocol violation,
   * kept as a problem and skipped, as an invalid JSON line is.
   */
  #invalidUtf8(line: Uint8Array, frame: Frame): void {
    const at = firstInvalidUtf8(line);
    const hex = [...line.subarray(at, at + 4)]
      .map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const what = `invalid UTF-8 at byte ${at} (${hex})`;
    frame.problem = what;
    let id: unknown;
    try {
      id = (JSON.parse(lossy.decode(line)) as { id?: unknown })?.id;
    } catch {
      id = undefined;
    }
    const answer = (typeof id === "number" || typeof id === "string") &&
      this.#pending.has(id);
    if (!answer && this.#answered) {
      const i = this.#keepUnsolicited(frame);
      if (i >= 0) this.#problem(`frame ${i}: ${what}`);
      return;
    }
    this.frames.push(frame);
    this.#problem(`frame ${this.frames.length - 1}: ${what}`);
    this.abort({
      reason: "invalid_output",
      message: `server ${
        answer ? "answered with" : "printed"
      } ${what} on stdout`,
    });
  }

  #send(message: unknown, keep = true): number {
    const text = JSON.stringify(message);
    const t = this.now();
    if (keep) {
      this.frames.push({ dir: "out", t, text, bytes: enc.encode(text).length });
    }
    const w = this.#writer;
    if (w) w.write(enc.encode(text + "\n")).catch(() => {});
    return t;
  }

  /** Send a notification (no response expected). */
  notify(method: string, params?: unknown): void {
    if (this.#failure) return;
    this.#send({
      jsonrpc: "2.0",
      method,
      ...(params === undefined ? {} : { params }),
    });
  }

  /**
   * Send a request and wait for its response, up to `timeoutMs`.
   * A timeout or a dead server resolves as `unknown`; it never rejects.
   */
  request(
    method: string,
    params: unknown,
    timeoutMs: number,
  ): Promise<RpcOutcome> {
    if (this.#failure) {
      return Promise.resolve({
        status: "unknown",
        failure: this.#failure,
        ms: 0,
      });
    }
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const sentAt = this.#send({ jsonrpc: "2.0", id, method, params });
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        const failure = noAnswer(method, timeoutMs);
        if (this.#failure === null) this.#failure = failure;
        resolve({ status: "unknown", failure, ms: this.now() - sentAt });
      }, timeoutMs);
      this.#pending.set(id, { resolve, sentAt, timer });
    });
  }

  /** End the session with `f` (pending requests fail with it) and SIGKILL the server. */
  abort(f: WireFailure): void {
    this.#fail(f);
    this.kill();
  }

  /** SIGKILL the whole process group at once. */
  kill(): void {
    this.#proc?.kill();
    void this.#relay?.close();
  }

  /**
   * Shut down as the MCP spec says: close stdin, wait, SIGTERM, wait,
   * SIGKILL; then kill whatever is left of the process group (a grandchild
   * may still hold the pipes).
   */
  async close(graceMs = 2000): Promise<ExitInfo> {
    const exit = await (this.#proc?.close(
      graceMs,
      async () => await this.#writer?.close(),
    ) ?? { code: null, signal: null, stoppedBy: "self" as const });
    await Promise.race([
      this.#readDone,
      new Promise((r) => setTimeout(r, 500)),
    ]);
    this.#fail({ reason: "closed", message: "session closed" });
    await this.#relay?.close();
    return exit;
  }
}

const lossy = new TextDecoder();
