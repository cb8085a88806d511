/**
 * JSON-RPC 2.0 client over newline-delimited stdio with verbatim capture.
 *
 * This is an edge module: it spawns processes. Requires `--allow-run`.
 *
 * @module
 */
import { signalGroup, stopGroup, trackGroup } from "./process_group.ts";
import { deathMessage } from "./stderr_tail.ts";
import { decodeFrame, type Frame, type WireFailure } from "./frames.ts";
import { boundDepth, MAX_VALUE_DEPTH, valueDepth } from "./bound.ts";
import { containCommand } from "./contain.ts";
import { PortRelay } from "./port_relay.ts";

export type { ExitInfo, SpawnSpec } from "./spawn_spec.ts";
import type { ExitInfo, SpawnSpec } from "./spawn_spec.ts";

/** Options for {@linkcode StdioClient.start}. */
export interface StdioClientOptions {
  /**
   * Largest accepted frame in bytes; a longer line ends the session.
   * @default {16 * 1024 * 1024}
   */
  maxFrameBytes?: number;
  /**
   * Largest amount of stderr kept, in bytes (the rest is counted, not kept).
   * @default {1024 * 1024}
   */
  maxStderrBytes?: number;
  /**
   * Most bytes the server may send on stdout in the whole session; past it
   * the session ends (`budget_exceeded`) and the process group is killed.
   * @default {64 * 1024 * 1024}
   */
  maxSessionBytes?: number;
  /**
   * Most unsolicited frames kept (notifications, server requests, garbage,
   * answers to unknown ids); later ones are counted, not kept, behind one
   * marker frame.
   * @default {256}
   */
  maxUnsolicitedFrames?: number;
  /**
   * Deepest nesting kept of a parsed message; deeper values are replaced by
   * a marker before anything stores them.
   * @default {64}
   */
  maxDepth?: number;
  /**
   * Milliseconds the whole session may last (from spawn); past it the
   * session ends (`deadline`) and the process group is killed. Null: none.
   * @default {null}
   */
  deadlineMs?: number | null;
}

/** Most protocol problems listed one by one; the rest are counted. */
const MAX_PROBLEMS = 100;

/** Outcome of one request: ok, a JSON-RPC error, or unknown (timeout, death). */
export type RpcOutcome =
  | { status: "ok"; result: unknown; frameIndex: number; ms: number }
  | { status: "error"; error: unknown; frameIndex: number; ms: number }
  | { status: "unknown"; failure: WireFailure; ms: number };

interface Pending {
  resolve: (o: RpcOutcome) => void;
  sentAt: number;
  timer: ReturnType<typeof setTimeout>;
}

const enc = new TextEncoder();

/** Whether `program` names an executable file, directly or on `path`. */
function programExists(program: string, path: string | undefined): boolean {
  const isExec = (p: string): boolean => {
    try {
      const st = Deno.statSync(p);
      return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return isExec(program);
  return (path ?? "").split(":").some((d) =>
    d !== "" && isExec(`${d}/${program}`)
  );
}

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
  #stderr: Uint8Array[] = [];
  #stderrBytes = 0;
  #stderrDropped = 0;
  #child: Deno.ChildProcess | null = null;
  #relay: PortRelay | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #t0 = performance.now();
  #nextId = 1;
  #pending = new Map<number | string, Pending>();
  #failure: WireFailure | null = null;
  #exit: ExitInfo | null = null;
  #exited: Promise<Deno.CommandStatus> | null = null;
  #readDone: Promise<void> = Promise.resolve();
  #maxFrame: number;
  #maxStderr: number;
  #maxSession: number;
  #maxUnsolicited: number;
  #maxDepth: number;
  #deadlineMs: number | null;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #received = 0;
  /** Whether the server has answered a request yet (the handshake began). */
  #answered = false;
  /** Non-JSON lines tolerated after the first answer (see {@linkcode StdioClient.invalidLines}). */
  #invalidLines = 0;
  #unsolicited = 0;
  #dropped: { frames: number; bytes: number; marker: Frame | null } = {
    frames: 0,
    bytes: 0,
    marker: null,
  };
  #problemsDropped = 0;
  /** Notifications and server-initiated requests, by frame index. */
  readonly incoming: { frameIndex: number; message: unknown }[] = [];

  private constructor(opts: StdioClientOptions) {
    this.#maxFrame = opts.maxFrameBytes ?? 16 * 1024 * 1024;
    this.#maxStderr = opts.maxStderrBytes ?? 1024 * 1024;
    this.#maxSession = opts.maxSessionBytes ?? 64 * 1024 * 1024;
    this.#maxUnsolicited = opts.maxUnsolicitedFrames ?? 256;
    this.#maxDepth = opts.maxDepth ?? MAX_VALUE_DEPTH;
    this.#deadlineMs = opts.deadlineMs ?? null;
  }

  /** Bytes received on stdout so far. */
  get receivedBytes(): number {
    return this.#received;
  }

  /** Unsolicited frames counted but not kept (over the budget), and their bytes. */
  get droppedFrames(): { frames: number; bytes: number } {
    return { frames: this.#dropped.frames, bytes: this.#dropped.bytes };
  }

  #problem(text: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(text);
    else {
      this.#problemsDropped++;
      this.problems[MAX_PROBLEMS - 1] = `... and ${
        this.#problemsDropped + 1
      } more problems (not listed)`;
    }
  }

  /** End the session now: record why, fail pending requests, kill the group. */
  #abort(f: WireFailure): void {
    this.#fail(f);
    this.kill();
  }

  /** Spawn the server in its own process group. Never throws: a spawn failure ends the session. */
  static start(spec: SpawnSpec, opts: StdioClientOptions = {}): StdioClient {
    const c = new StdioClient(opts);
    c.#t0 = performance.now();
    try {
      if (spec.command.length === 0) throw new TypeError("empty command");
      if (spec.contain !== false) {
        // Inside the wrapper a missing program would look like an early exit.
        const first = spec.command[0]!;
        if (!programExists(first, spec.env.PATH ?? Deno.env.get("PATH"))) {
          throw new Error("No such file or directory (os error 2)");
        }
      }
      const [program, ...args] = spec.contain === false
        ? spec.command
        : containCommand(spec.command);
      if (program === undefined) throw new TypeError("empty command");
      const cmd = new Deno.Command(program, {
        args,
        env: spec.env,
        clearEnv: true,
        ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        detached: true,
      });
      const child = cmd.spawn();
      c.#child = child;
      trackGroup(c, child.status);
      c.#writer = child.stdin.getWriter();
      c.#writer.closed.catch(() => {});
      c.#exited = child.status;
      c.#readDone = c.#readStdout(child.stdout);
      c.#readStderr(child.stderr);
      if (spec.portRelay !== undefined) {
        const relay = PortRelay.start(
          spec.portRelay,
          child.pid,
          (message) => c.#abort({ reason: "spawn_failed", message }),
        );
        c.#relay = relay;
        child.status.finally(() => relay.close()).catch(() => {});
      }
      if (c.#deadlineMs !== null) {
        const ms = c.#deadlineMs;
        c.#deadlineTimer = setTimeout(() =>
          c.#abort({
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
              message: c.#exitMessage(st.code, st.signal ?? null),
            }),
          50,
        );
      });
    } catch (e) {
      c.#fail({
        reason: "spawn_failed",
        message: `cannot start ${JSON.stringify(spec.command[0] ?? "")}: ${
          e instanceof Error ? e.message : String(e)
        }`,
      });
    }
    return c;
  }

  /** Process id (and process group id) of the server, if it started. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** The first terminal failure, if any. */
  get failure(): WireFailure | null {
    return this.#failure;
  }

  /** Exit information, once the process has gone. */
  get exit(): ExitInfo | null {
    return this.#exit;
  }

  /** Milliseconds since spawn on this client's monotonic clock. */
  now(): number {
    return performance.now() - this.#t0;
  }

  /** Captured stderr as text (lossy decoding), and how many bytes were dropped. */
  stderr(): { text: string; dropped: number } {
    const all = new Uint8Array(this.#stderrBytes);
    let o = 0;
    for (const part of this.#stderr) {
      all.set(part, o);
      o += part.length;
    }
    return {
      text: new TextDecoder().decode(all),
      dropped: this.#stderrDropped,
    };
  }

  #exitMessage(code: number | null, signal: string | null): string {
    return deathMessage(
      "server exited before answering",
      code,
      signal,
      this.stderr().text,
    );
  }

  /**
   * Non-JSON lines the server printed on stdout after its first answer:
   * each is a protocol violation, kept (within the unsolicited budget) as a
   * frame with its problem, and skipped (docs/reliability.md, "Invalid
   * stdout lines").
   */
  get invalidLines(): number {
    return this.#invalidLines;
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
    if (this.#answered) this.#invalidLines++;
    else this.#garbage(text);
  }

  #garbage(text: string): void {
    const first = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    this.#abort({
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

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) {
        const room = this.#maxStderr - this.#stderrBytes;
        if (room <= 0) {
          this.#stderrDropped += chunk.length;
          continue;
        }
        const keep = chunk.length <= room ? chunk : chunk.subarray(0, room);
        this.#stderr.push(keep.slice());
        this.#stderrBytes += keep.length;
        this.#stderrDropped += chunk.length - keep.length;
      }
    } catch {
      // stream torn down at kill time
    }
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    let buf = new Uint8Array(0);
    let len = 0;
    const reader = stream.getReader();
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        const t = this.now();
        this.#received += value.length;
        if (this.#received > this.#maxSession) {
          this.#abort({
            reason: "budget_exceeded",
            message:
              `server sent more than ${this.#maxSession} bytes in this session`,
          });
          await reader.cancel().catch(() => {});
          return;
        }
        let start = 0;
        for (let i = 0; i < value.length; i++) {
          if (value[i] !== 0x0a) continue;
          const piece = value.subarray(start, i);
          let line: Uint8Array;
          if (len === 0) line = piece;
          else {
            line = new Uint8Array(len + piece.length);
            line.set(buf.subarray(0, len));
            line.set(piece, len);
            len = 0;
          }
          start = i + 1;
          this.#onLine(line, t);
        }
        const rest = value.subarray(start);
        if (rest.length === 0) continue;
        if (len + rest.length > this.#maxFrame) {
          const seen = len + rest.length;
          const head = len > 0
            ? buf.subarray(0, Math.min(len, 256))
            : rest.subarray(0, 256);
          const f = decodeFrame(head.slice(), "in", t);
          f.bytes = seen;
          f.problem =
            `frame exceeds ${this.#maxFrame} bytes (first 256 bytes kept)`;
          this.frames.push(f);
          this.#abort({
            reason: "frame_too_large",
            message: `server sent a line longer than ${this.#maxFrame} bytes`,
          });
          await reader.cancel().catch(() => {});
          return;
        }
        if (len + rest.length > buf.length) {
          const nb = new Uint8Array(
            Math.max(buf.length * 2, len + rest.length, 4096),
          );
          nb.set(buf.subarray(0, len));
          buf = nb;
        }
        buf.set(rest, len);
        len += rest.length;
      }
      if (len > 0) this.#onLine(buf.slice(0, len), this.now());
    } catch {
      // torn down
    }
  }

  /**
   * Keep an unsolicited frame while the budget lasts; past it count it
   * behind one marker frame. Returns its index, or -1 when not kept.
   */
  #keepUnsolicited(frame: Frame): number {
    if (this.#unsolicited < this.#maxUnsolicited) {
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
      `${d.frames} further unsolicited frame(s) (${d.bytes} bytes) counted, not kept: over the budget of ${this.#maxUnsolicited}`;
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
    let deep = false;
    if (valueDepth(msg, this.#maxDepth) > this.#maxDepth) {
      deep = true;
      frame.problem =
        `nesting deeper than ${this.#maxDepth} levels (deeper values replaced by a marker)`;
      msg = boundDepth(msg, this.#maxDepth);
    }
    const m = msg as Record<string, unknown>;
    const id = m.id;
    if ("method" in m) {
      const index = this.#keepUnsolicited(frame);
      if (index >= 0) {
        this.incoming.push({ frameIndex: index, message: m });
        if (deep) this.#problem(`frame ${index}: ${frame.problem}`);
      }
      if (id !== undefined && id !== null) {
        // Server-initiated request (e.g. roots/list, ping): we advertise nothing, so refuse politely.
        const keep = index >= 0;
        if (m.method === "ping") {
          this.#send({ jsonrpc: "2.0", id, result: {} }, keep);
        } else {
          this.#send({
            jsonrpc: "2.0",
            id,
            error: { code: -32601, message: "Method not found" },
          }, keep);
        }
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
    const ms = t - p.sentAt;
    if ("error" in m) {
      p.resolve({ status: "error", error: m.error, frameIndex: index, ms });
    } else p.resolve({ status: "ok", result: m.result, frameIndex: index, ms });
  }

  /**
   * A line that is not UTF-8. An answer to a pending request, or anything
   * before the first answer, ends the session at once naming the invalid
   * bytes (never "no answer within N s" after waiting out the timeout);
   * after the first answer any other such line is a protocol violation,
   * kept as a problem and skipped, as an invalid JSON line is.
   */
  #invalidUtf8(line: Uint8Array, frame: Frame): void {
    const at = firstInvalidByte(line);
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
    this.#abort({
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
        const failure: WireFailure = {
          reason: "timeout",
          message: `no answer to ${method} within ${
            (timeoutMs / 1000).toFixed(1)
          } s`,
        };
        if (this.#failure === null) this.#failure = failure;
        resolve({ status: "unknown", failure, ms: this.now() - sentAt });
      }, timeoutMs);
      this.#pending.set(id, { resolve, sentAt, timer });
    });
  }

  /** End the session with `f` and SIGKILL the server (e.g. a budget the runner keeps). */
  abort(f: WireFailure): void {
    this.#abort(f);
  }

  /** SIGKILL the whole process group at once. */
  kill(): void {
    const pid = this.#child?.pid;
    if (pid !== undefined) signalGroup(pid, "SIGKILL");
    void this.#relay?.close();
  }

  /**
   * Shut down as the MCP spec says: close stdin, wait, SIGTERM, wait,
   * SIGKILL; then kill whatever is left of the process group.
   */
  async close(graceMs = 2000): Promise<ExitInfo> {
    if (this.#exit) return this.#exit;
    const child = this.#child;
    const exited = this.#exited;
    if (!child || !exited) {
      this.#exit = { code: null, signal: null, stoppedBy: "self" };
      return this.#exit;
    }
    // Always ends with a sweep of the group: a grandchild may still hold
    // the pipes.
    const { status, stoppedBy } = await stopGroup(
      child.pid,
      exited,
      graceMs,
      async () => await this.#writer?.close(),
    );
    await Promise.race([
      this.#readDone,
      new Promise((r) => setTimeout(r, 500)),
    ]);
    this.#fail({ reason: "closed", message: "session closed" });
    await this.#relay?.close();
    this.#exit = {
      code: status.code,
      signal: status.signal ?? null,
      stoppedBy,
    };
    return this.#exit;
  }
}

const lossy = new TextDecoder();

/** Offset of the first byte of `bytes` that is not valid UTF-8 (`bytes.length` when none is). */
function firstInvalidByte(bytes: Uint8Array): number {
  const text = lossy.decode(bytes);
  let from = 0;
  let prefix = 0;
  for (
    let i = text.indexOf("\uFFFD");
    i >= 0;
    i = text.indexOf("\uFFFD", i + 1)
  ) {
    prefix += enc.encode(text.slice(from, i)).length;
    from = i;
    // A U+FFFD the server really sent is the three bytes EF BF BD.
    if (
      bytes[prefix] !== 0xef || bytes[prefix + 1] !== 0xbf ||
      bytes[prefix + 2] !== 0xbd
    ) {
      return prefix;
    }
  }
  return bytes.length;
}
