/**
 * JSON-RPC 2.0 over Streamable HTTP (MCP 2025-11-25), on `fetch`, with
 * verbatim capture: every HTTP exchange (status, headers with secrets
 * redacted, body bytes or SSE events, stamps) and every JSON-RPC message as
 * a {@linkcode Frame}, so the same contract parser reads the raw
 * `tools/list` bytes as over stdio. Falls back to the legacy HTTP+SSE
 * transport (2024-11-05) when the server only speaks that.
 *
 * This is an edge module: it makes network requests. Requires `--allow-net`.
 *
 * @module
 */
import type { McpClient } from "./client.ts";
import {
  answered,
  decodeFrame,
  type Frame,
  noAnswer,
  PROTOCOL_VERSION,
  replyTo,
  type RpcOutcome,
  type WireFailure,
} from "./frames.ts";
import type { Authorizer } from "./oauth.ts";
import { Redactor } from "./redact.ts";
import { boundDepth, MAX_VALUE_DEPTH } from "./bound.ts";
import { readAtMost } from "./lines.ts";
import type { ServerProcess } from "./server_process.ts";
import { type SseEvent, SseEventTooLarge, SseParser } from "./sse.ts";
import type { ExitInfo } from "./spawn_spec.ts";

/** Options for {@linkcode HttpClient}. */
export interface HttpClientOptions {
  /** Extra headers sent with every request (e.g. `Authorization`); their values are never shown. */
  headers?: Record<string, string>;
  /**
   * Open the GET stream for server messages after `notifications/initialized`.
   * @default {true}
   */
  getStream?: boolean;
  /** Where the `Authorization` header comes from, and who answers a 401 or 403 (OAuth). */
  auth?: Authorizer;
  /** A local server process this session owns (closed with the session). */
  server?: ServerProcess;
  /** Called last when the session closes (e.g. stops a relay). */
  cleanup?: () => Promise<void>;
}

/** Largest JSON body or single SSE event accepted, in bytes (`frame_too_large`). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Most bytes the server may send in one session, bodies and streams (`budget_exceeded`). */
const MAX_SESSION_BYTES = 64 * 1024 * 1024;
/** Reconnections (with `Last-Event-ID`) tried for one stream. */
const MAX_RECONNECTS = 3;

/** One server-sent event as evidence. */
export interface EventRecord {
  t: number;
  event: string;
  id: string | null;
  retry: number | null;
  bytes: number;
  /** The frame its data became, or null (priming or non-message event). */
  frame: number | null;
}

/** One HTTP request and what came back, verbatim but for secrets. */
export interface HttpExchange {
  /** Why it was made: a JSON-RPC method, "get-stream", "resume", "legacy-stream", "delete". */
  purpose: string;
  method: "POST" | "GET" | "DELETE";
  /** The URL, password and query values redacted. */
  url: string;
  /** Request headers, secrets redacted. */
  requestHeaders: [string, string][];
  /** The frame holding the request body (POST). */
  requestFrame: number | null;
  /** Stamp when sent (ms since the session began). */
  t: number;
  status: number | null;
  /** Response headers, secrets redacted. */
  responseHeaders: [string, string][] | null;
  tHeaders: number | null;
  /** Frames carried by a JSON body. */
  frames: number[];
  /** Events of an SSE body. */
  events: EventRecord[];
  /** A body that was not JSON-RPC (an error page, a wrong type): first bytes. */
  body: { text?: string; base64?: string; bytes: number } | null;
  /** Stamp when the body ended or was abandoned. */
  tEnd: number | null;
  /** How it ended: "complete", "cancelled", or the error. */
  end: string | null;
}

interface Pending {
  resolve: (o: RpcOutcome) => void;
  sentAt: number;
  timer: ReturnType<typeof setTimeout>;
  abort: AbortController;
}

const enc = new TextEncoder();
const KEEP_BODY = 64 * 1024;

/**
 * A Streamable HTTP MCP client with evidence.
 *
 * @example
 * ```ts ignore
 * const c = new HttpClient("http://127.0.0.1:8080/mcp");
 * const r = await c.request("initialize", { ... }, 10_000);
 * await c.close();
 * ```
 */
export class HttpClient implements McpClient {
  readonly frames: Frame[] = [];
  readonly problems: string[] = [];
  /** Every HTTP exchange, in the order they were started. */
  readonly exchanges: HttpExchange[] = [];
  #url: string;
  #opts: HttpClientOptions;
  #redact: Redactor;
  #t0: number;
  #nextId = 1;
  #pending = new Map<number | string, Pending>();
  #failure: WireFailure | null = null;
  #sessionId: string | null = null;
  #protocol: string | null = null;
  #mode: "probe" | "streamable" | "legacy" = "probe";
  /** The legacy stream's first `endpoint` event, or why it never came. */
  #endpointEvent = Promise.withResolvers<string>();
  #legacyUrl: string | null = null;
  #closing = false;
  #streams = new Set<AbortController>();
  #notifyChain: Promise<unknown> = Promise.resolve();
  #received = 0;
  #consecutive5xx = 0;
  #exit: ExitInfo | null = null;

  /** `url` is the MCP endpoint. */
  constructor(url: string, opts: HttpClientOptions = {}) {
    this.#url = url;
    this.#opts = opts;
    this.#t0 = opts.server?.t0 ?? performance.now();
    this.#redact = new Redactor(
      [...Object.values(opts.headers ?? {}), ...Redactor.urlSecrets(url)],
      Object.keys(opts.headers ?? {}),
    );
  }

  get failure(): WireFailure | null {
    return this.#failure;
  }

  /** "streamable" or "legacy" once the first exchange told which. */
  get mode(): string {
    return this.#mode;
  }

  now(): number {
    return performance.now() - this.#t0;
  }

  stderr(): { text: string; dropped: number } {
    return this.#opts.server?.output() ?? { text: "", dropped: 0 };
  }

  #fail(f: WireFailure): void {
    const failure = { ...f, message: this.#redact.text(f.message) };
    if (this.#failure === null) this.#failure = failure;
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.abort.abort();
      p.resolve({ status: "unknown", failure, ms: this.now() - p.sentAt });
    }
  }

  #problem(text: string): void {
    if (this.problems.length < 1000) {
      this.problems.push(this.#redact.text(text));
    }
  }

  #headers(extra: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { ...(this.#opts.headers ?? {}) };
    const auth = this.#opts.auth?.header(this.#url);
    if (auth) {
      this.#redact.add(auth.slice(auth.indexOf(" ") + 1));
      h.authorization = auth;
    }
    if (this.#mode !== "legacy") {
      if (this.#sessionId !== null) h["mcp-session-id"] = this.#sessionId;
      if (this.#protocol !== null) h["mcp-protocol-version"] = this.#protocol;
    }
    return { ...h, ...extra };
  }

  #record(
    purpose: string,
    method: HttpExchange["method"],
    url: string,
    headers: Record<string, string>,
    requestFrame: number | null,
  ): HttpExchange {
    const ex: HttpExchange = {
      purpose,
      method,
      url: this.#redact.url(url),
      requestHeaders: this.#redact.headers(headers),
      requestFrame,
      t: this.now(),
      status: null,
      responseHeaders: null,
      tHeaders: null,
      frames: [],
      events: [],
      body: null,
      tEnd: null,
      end: null,
    };
    if (this.exchanges.length < 100_000) this.exchanges.push(ex);
    return ex;
  }

  #pushFrame(frame: Frame): number {
    if (frame.text !== undefined && this.#redact.has(frame.text)) {
      frame.text = this.#redact.text(frame.text);
      frame.problem = "a secret was redacted from this frame";
    }
    this.frames.push(frame);
    return this.frames.length - 1;
  }

  /** Count received bytes against the session budget; false when over. */
  #take(n: number): boolean {
    this.#received += n;
    if (this.#received <= MAX_SESSION_BYTES) return true;
    this.#fail({
      reason: "budget_exceeded",
      message:
        `server sent more than ${MAX_SESSION_BYTES} bytes in this session`,
    });
    return false;
  }

  /** A body's first `limit` bytes, counted against the session budget. */
  #readBody(res: Response, limit: number) {
    return readAtMost(res.body, limit, (n) => this.#take(n));
  }

  /** Keep the first bytes of a non-JSON-RPC body as evidence. */
  async #keepBody(res: Response, ex: HttpExchange): Promise<string> {
    const { bytes, seen } = await this.#readBody(res, KEEP_BODY).catch(
      () => ({ bytes: new Uint8Array(0), seen: 0, over: false }),
    );
    const f = decodeFrame(bytes, "in", 0);
    ex.body = f.text !== undefined
      ? { text: this.#redact.text(f.text), bytes: seen }
      : { base64: f.base64!, bytes: seen };
    ex.tEnd = this.now();
    return f.text?.trim().slice(0, 160) ?? "";
  }

  #onResponseHeaders(res: Response, ex: HttpExchange): boolean {
    ex.status = res.status;
    ex.responseHeaders = this.#redact.headers(res.headers);
    ex.tHeaders = this.now();
    const sid = res.headers.get("mcp-session-id");
    if (sid !== null && this.#mode !== "legacy") {
      if (!/^[\x21-\x7e]+$/.test(sid)) {
        this.#fail({
          reason: "closed",
          message:
            "server sent a session id with invisible or non-ASCII characters",
        });
        return false;
      }
      if (this.#sessionId === null && ex.purpose === "initialize") {
        this.#sessionId = sid;
      } else if (this.#sessionId !== null && sid !== this.#sessionId) {
        this.#fail({
          reason: "closed",
          message: `server changed its session id (${
            JSON.stringify(this.#sessionId.slice(0, 40))
          } to ${JSON.stringify(sid.slice(0, 40))})`,
        });
        return false;
      }
    }
    return true;
  }

  /** Handle one JSON-RPC message text received on any stream. */
  #onMessage(frame: Frame): number {
    const index = this.#pushFrame(frame);
    if (frame.text === undefined) {
      this.#problem(`frame ${index}: invalid UTF-8`);
      return index;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(frame.text);
    } catch {
      frame.problem = "invalid JSON";
      this.#problem(`frame ${index}: invalid JSON`);
      return index;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      frame.problem = "not a JSON-RPC object";
      this.#problem(`frame ${index}: not a JSON-RPC object`);
      return index;
    }
    const m = boundDepth(msg, MAX_VALUE_DEPTH) as Record<string, unknown>;
    const id = m.id;
    if ("method" in m) {
      if (id !== undefined && id !== null) {
        this.#reply(replyTo(id, m.method));
      }
      return index;
    }
    if (typeof id !== "number" && typeof id !== "string") {
      this.#problem(`frame ${index}: response without a usable id`);
      return index;
    }
    const p = this.#pending.get(id);
    if (!p) {
      this.#problem(
        `frame ${index}: response to unknown id ${JSON.stringify(id)}`,
      );
      return index;
    }
    this.#pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(answered(m, index, frame.t - p.sentAt));
    return index;
  }

  #outFrame(message: unknown): { text: string; index: number } {
    const text = JSON.stringify(message);
    const index = this.#pushFrame({
      dir: "out",
      t: this.now(),
      text,
      bytes: enc.encode(text).length,
    });
    return { text, index };
  }

  /** Answer a server-initiated request. */
  #reply(message: unknown): void {
    const { text, index } = this.#outFrame(message);
    void this.#postMessage(text, index, "reply", null, new AbortController());
  }

  /** Read an SSE body until it ends or `stopWhen()`, dispatching each message event. */
  async #readSse(
    body: ReadableStream<Uint8Array>,
    ex: HttpExchange,
    parser: SseParser,
    stopWhen: () => boolean,
  ): Promise<"ended" | "stopped" | "failed"> {
    const reader = body.getReader();
    try {
      while (true) {
        if (stopWhen()) {
          await reader.cancel().catch(() => {});
          ex.end = "cancelled";
          return "stopped";
        }
        const { value, done } = await reader.read();
        if (done) {
          ex.end = parser.pendingBytes > 0
            ? `ended mid-event (${parser.pendingBytes} bytes dropped)`
            : "complete";
          return "ended";
        }
        if (!this.#take(value.length)) {
          await reader.cancel().catch(() => {});
          ex.end = "session byte budget exceeded";
          return "failed";
        }
        let events: SseEvent[];
        try {
          events = parser.push(value);
        } catch (e) {
          if (!(e instanceof SseEventTooLarge)) throw e;
          const f = decodeFrame(enc.encode(e.head), "in", this.now());
          f.bytes = e.seen;
          f.problem = `${e.message} (first 256 bytes kept)`;
          this.#pushFrame(f);
          ex.end = e.message;
          this.#fail({
            reason: "frame_too_large",
            message:
              `server sent an SSE event longer than ${MAX_FRAME_BYTES} bytes`,
          });
          await reader.cancel().catch(() => {});
          return "failed";
        }
        for (const e of events) {
          const rec: EventRecord = {
            t: this.now(),
            event: e.event,
            id: e.hasId ? e.id : null,
            retry: e.retry,
            bytes: e.bytes,
            frame: null,
          };
          if (ex.events.length < 100_000) ex.events.push(rec);
          if (e.event === "endpoint") this.#endpointEvent.resolve(e.data);
          if (e.hasData && e.event === "message" && e.data !== "") {
            rec.frame = this.#onMessage(
              decodeFrame(enc.encode(e.data), "in", rec.t),
            );
          }
        }
      }
    } catch (e) {
      ex.end = this.#closing ? "cancelled" : `error: ${errText(e)}`;
      return this.#closing ? "stopped" : "failed";
    } finally {
      ex.tEnd = this.now();
      try {
        reader.releaseLock();
      } catch {
        // still locked by a pending read that was cancelled
      }
    }
  }

  async #fetch(
    url: string,
    init: RequestInit,
    ex: HttpExchange,
  ): Promise<Response | string> {
    try {
      const res = await fetch(url, { ...init, redirect: "manual" });
      if (res.status >= 300 && res.status < 400) {
        const loc = res.headers.get("location") ?? "";
        await res.body?.cancel().catch(() => {});
        this.#onResponseHeaders(res, ex);
        ex.end = "redirect not followed";
        return `HTTP ${res.status} redirect to ${
          this.#redact.url(loc)
        } (verity does not follow redirects)`;
      }
      return res;
    } catch (e) {
      ex.end = `error: ${this.#redact.text(errText(e))}`;
      ex.tEnd = this.now();
      return this.#redact.text(
        init.signal?.aborted ? "aborted" : `cannot reach server: ${errText(e)}`,
      );
    }
  }

  /**
   * POST one message. For a request, the response is dispatched from the
   * JSON or SSE body, resuming the stream if it ends early; for a
   * notification or reply, a 202 is expected. Legacy: to the endpoint, and
   * answers come on the legacy stream.
   */
  async #postMessage(
    text: string,
    frameIndex: number,
    purpose: string,
    id: number | null,
    abort: AbortController,
    tries = 0,
  ): Promise<{ status: number | null; problem: string | null }> {
    const url = this.#legacyUrl ?? this.#url;
    const headers = this.#headers({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    });
    const ex = this.#record(purpose, "POST", url, headers, frameIndex);
    this.#streams.add(abort);
    try {
      const res = await this.#fetch(url, {
        method: "POST",
        headers,
        body: text,
        signal: abort.signal,
      }, ex);
      if (typeof res === "string") return { status: null, problem: res };
      if (!this.#onResponseHeaders(res, ex)) {
        await res.body?.cancel().catch(() => {});
        return { status: res.status, problem: this.#failure?.message ?? null };
      }
      if (res.status === 401 || res.status === 403) {
        // Refused before the message was handled: sign in and send it again.
        await this.#keepBody(res, ex);
        const www = res.headers.get("www-authenticate");
        const line = this.#opts.auth && tries < 3
          ? await this.#opts.auth.challenge({
            url,
            status: res.status,
            wwwAuthenticate: www,
            sent: headers.authorization ?? null,
          })
          : `HTTP ${res.status}: the server asks for authorization (${
            www === null ? "no WWW-Authenticate" : www.slice(0, 200)
          })`;
        if (line === null) {
          return this.#postMessage(
            text,
            frameIndex,
            purpose,
            id,
            abort,
            tries + 1,
          );
        }
        this.#fail({ reason: "closed", message: line });
        return { status: res.status, problem: this.#failure!.message };
      }
      const type = (res.headers.get("content-type") ?? "").toLowerCase();
      if (res.status >= 500) this.#consecutive5xx++;
      else this.#consecutive5xx = 0;
      // Legacy answers come on its stream; a 202 or 204 carries none.
      if (
        res.status === 202 || res.status === 204 ||
        (res.ok && this.#mode === "legacy")
      ) {
        await this.#keepBody(res, ex);
        ex.end = "complete";
        return { status: res.status, problem: null };
      }
      if (res.status === 404 && this.#sessionId !== null) {
        await this.#keepBody(res, ex);
        this.#fail({
          reason: "closed",
          message: "session expired: the server answered 404 to its session id",
        });
        return { status: 404, problem: this.#failure!.message };
      }
      if (res.status < 200 || res.status >= 300) {
        const head = await this.#keepBody(res, ex);
        // A JSON-RPC error answer carried by an HTTP error status is still
        // the server's answer: dispatch it as over stdio.
        if (
          id !== null && type.startsWith("application/json") &&
          ex.body?.text !== undefined &&
          ex.body.bytes === enc.encode(ex.body.text).length &&
          answers(ex.body.text, id)
        ) {
          ex.frames.push(
            this.#onMessage(
              decodeFrame(enc.encode(ex.body.text), "in", this.now()),
            ),
          );
          if (!this.#pending.has(id)) {
            return { status: res.status, problem: null };
          }
        }
        return {
          status: res.status,
          problem: `HTTP ${res.status}${head ? `: ${head}` : ""}`,
        };
      }
      if (type.startsWith("application/json")) {
        const { bytes, seen, over } = await this.#readBody(
          res,
          MAX_FRAME_BYTES,
        );
        ex.tEnd = this.now();
        if (over) {
          const f = decodeFrame(bytes.subarray(0, 256), "in", this.now());
          f.bytes = seen;
          f.problem =
            `body exceeds ${MAX_FRAME_BYTES} bytes (first 256 bytes kept)`;
          ex.frames.push(this.#pushFrame(f));
          ex.end = "too large";
          this.#fail({
            reason: "frame_too_large",
            message:
              `server sent a JSON body longer than ${MAX_FRAME_BYTES} bytes`,
          });
          return { status: res.status, problem: this.#failure!.message };
        }
        ex.end = "complete";
        if (bytes.length === 0) {
          return {
            status: res.status,
            problem: id === null ? null : "HTTP 200 with an empty body",
          };
        }
        if (id === null) {
          this.#problem(
            `${purpose}: server answered a notification with a JSON body (HTTP ${res.status}), not 202`,
          );
        }
        ex.frames.push(this.#onMessage(decodeFrame(bytes, "in", this.now())));
        return { status: res.status, problem: null };
      }
      if (type.startsWith("text/event-stream") && res.body) {
        const parser = new SseParser(MAX_FRAME_BYTES);
        const waiting = () => id !== null && this.#pending.has(id);
        const how = await this.#readSse(
          res.body,
          ex,
          parser,
          () => id !== null && !waiting(),
        );
        return {
          status: res.status,
          problem: how === "failed" || !waiting()
            ? null
            : await this.#follow(purpose, parser, abort.signal, waiting, true),
        };
      }
      const head = await this.#keepBody(res, ex);
      ex.end = "wrong content type";
      this.#fail({
        reason: "closed",
        message: `server answered ${purpose} with content type ${
          JSON.stringify(type || "(none)")
        }, not JSON or an event stream${head ? `: ${head.slice(0, 80)}` : ""}`,
      });
      return { status: res.status, problem: this.#failure!.message };
    } catch (e) {
      if (ex.end === null) {
        ex.end = abort.signal.aborted ? "aborted" : `error: ${errText(e)}`;
      }
      ex.tEnd ??= this.now();
      return {
        status: ex.status,
        problem: abort.signal.aborted ? "aborted" : `HTTP error: ${errText(e)}`,
      };
    } finally {
      this.#streams.delete(abort);
    }
  }

  /**
   * GET the endpoint as an event stream while `wanted()`, reconnecting with
   * Last-Event-ID after the stream's `retry` (1 s when it sent none, at most
   * 10 s) each time it ends, at most {@linkcode MAX_RECONNECTS} times. With
   * `resume` (a POST's stream ended before its answer) it starts with the
   * wait; in legacy mode it reads one stream. Returns a problem, or null.
   */
  async #follow(
    purpose: string,
    parser: SseParser,
    signal: AbortSignal,
    wanted: () => boolean,
    resume: boolean,
  ): Promise<string | null> {
    for (let n = resume ? 1 : 0; n <= MAX_RECONNECTS; n++) {
      if (n > 0) {
        if (!wanted() || signal.aborted) return null;
        if (parser.lastEventId === null) {
          return resume
            ? `the SSE stream for ${purpose} ended before the response, without an event id to resume from`
            : null;
        }
        await sleep(Math.min(parser.retry ?? 1000, 10_000), signal);
      }
      if (!wanted() || signal.aborted) return null;
      const headers = this.#headers({
        accept: "text/event-stream",
        ...(parser.lastEventId === null
          ? {}
          : { "last-event-id": parser.lastEventId }),
      });
      const ex = this.#record(
        resume ? `resume ${purpose}` : purpose,
        "GET",
        this.#url,
        headers,
        null,
      );
      const res = await this.#fetch(
        this.#url,
        { method: "GET", headers, signal },
        ex,
      );
      if (typeof res === "string") return res;
      if (!this.#onResponseHeaders(res, ex)) {
        await res.body?.cancel().catch(() => {});
        return null;
      }
      const type = (res.headers.get("content-type") ?? "").toLowerCase();
      if (
        res.status !== 200 || !type.startsWith("text/event-stream") || !res.body
      ) {
        const head = await this.#keepBody(res, ex);
        const brief = `HTTP ${res.status} ${JSON.stringify(type)}`;
        const whole = `${brief}${head ? `: ${head}` : ""}`;
        if (resume) return `resuming ${purpose} failed: ${whole}`;
        if (this.#mode === "legacy") return whole;
        if (res.status === 405) ex.end = "server offers no GET stream";
        else this.#problem(`GET stream: ${brief}`);
        return null;
      }
      const how = await this.#readSse(res.body, ex, parser, () => !wanted());
      if (how !== "ended" || this.#mode === "legacy") return null;
    }
    return resume
      ? `the SSE stream for ${purpose} ended ${
        MAX_RECONNECTS + 1
      } times before the response`
      : null;
  }

  /**
   * Legacy HTTP+SSE: GET the URL as an event stream and wait for its
   * `endpoint` event (same origin only); a problem, or null.
   */
  async #legacyConnect(): Promise<string | null> {
    this.#mode = "legacy";
    void this.#stream("legacy-stream").then((problem) => {
      const ended = "the legacy SSE stream ended";
      this.#endpointEvent.reject(new Error(problem ?? ended));
      if (problem === null && !this.#closing) {
        this.#fail({ reason: "closed", message: ended });
      }
    });
    try {
      const u = new URL((await this.#endpointEvent.promise).trim(), this.#url);
      if (u.origin === new URL(this.#url).origin) this.#legacyUrl = u.href;
      return this.#legacyUrl
        ? null
        : `endpoint ${u.origin} is on another origin`;
    } catch (e) {
      return errText(e);
    }
  }

  notify(method: string, params?: unknown): void {
    if (this.#failure || this.#closing) return;
    const { text, index } = this.#outFrame({
      jsonrpc: "2.0",
      method,
      ...(params === undefined ? {} : { params }),
    });
    this.#notifyChain = this.#notifyChain.then(async () => {
      const r = await this.#postMessage(
        text,
        index,
        method,
        null,
        new AbortController(),
      );
      if (r.problem) this.#problem(`${method}: ${r.problem}`);
      if (
        method !== "notifications/initialized" ||
        !(this.#opts.getStream ?? true) || this.#mode === "legacy"
      ) return;
      // The standalone GET stream for server messages.
      void this.#stream("get-stream");
    });
  }

  /** A GET stream held open until the client closes or fails: its problem, or null. */
  #stream(purpose: string): Promise<string | null> {
    const abort = new AbortController();
    this.#streams.add(abort);
    return this.#follow(
      purpose,
      new SseParser(MAX_FRAME_BYTES),
      abort.signal,
      () => !this.#closing && !this.#failure,
      false,
    ).finally(() => this.#streams.delete(abort));
  }

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
    const message = { jsonrpc: "2.0", id, method, params };
    const sentAt = this.now();
    return new Promise((resolve) => {
      const abort = new AbortController();
      const timer = setTimeout(() => {
        if (!this.#pending.delete(id)) return;
        abort.abort();
        const failure = noAnswer(method, timeoutMs);
        if (this.#failure === null) this.#failure = failure;
        resolve({ status: "unknown", failure, ms: this.now() - sentAt });
      }, timeoutMs);
      this.#pending.set(id, { resolve, sentAt, timer, abort });
      const settle = (problem: string) => {
        const p = this.#pending.get(id);
        if (!p) return;
        this.#pending.delete(id);
        clearTimeout(p.timer);
        const failure: WireFailure = {
          reason: "closed",
          message: this.#redact.text(`${method}: ${problem}`),
        };
        resolve({ status: "unknown", failure, ms: this.now() - sentAt });
      };
      const post = () => {
        const { text, index } = this.#outFrame(message);
        return this.#postMessage(text, index, method, id, abort);
      };
      void (async () => {
        await this.#notifyChain;
        let r = await post();
        // A 4xx to the first POST (401 and 403 were a sign-in): try the
        // legacy HTTP+SSE transport; later messages wait for its endpoint.
        if (
          this.#mode === "probe" && method === "initialize" &&
          this.#pending.has(id) && r.status !== null && r.status >= 400 &&
          r.status < 500
        ) {
          const connecting = this.#legacyConnect();
          this.#notifyChain = connecting;
          const why = await connecting;
          if (why !== null) {
            return settle(
              `${
                r.problem ?? `HTTP ${r.status}`
              }; legacy HTTP+SSE fallback failed: ${why}`,
            );
          }
          r = await post();
        }
        if (this.#mode === "probe") this.#mode = "streamable";
        if (r.problem) settle(r.problem);
        if (r.status !== null && r.status >= 500 && this.#consecutive5xx >= 3) {
          this.#fail({
            reason: "closed",
            message:
              `server answered HTTP ${r.status} to ${this.#consecutive5xx} requests in a row`,
          });
        }
      })().catch((e) => settle(`HTTP error: ${errText(e)}`));
    }).then((o) => {
      const out = o as RpcOutcome;
      if (method === "initialize" && out.status === "ok") {
        const v = (out.result as Record<string, unknown> | null)
          ?.protocolVersion;
        this.#protocol = typeof v === "string" && /^[\x21-\x7e]+$/.test(v)
          ? v
          : PROTOCOL_VERSION;
      }
      return out;
    });
  }

  /** End the session with `f` (e.g. the local server never answered). */
  abort(f: WireFailure): void {
    this.#fail(f);
  }

  kill(): void {
    this.#closing = true;
    for (const a of this.#streams) a.abort();
    this.#opts.server?.kill();
    void this.#opts.cleanup?.();
  }

  /** Abort every stream, DELETE the session, then stop a local server. */
  async close(graceMs = 2000): Promise<ExitInfo> {
    if (this.#exit) return this.#exit;
    this.#closing = true;
    for (const a of this.#streams) a.abort();
    if (this.#sessionId !== null && this.#mode !== "legacy") {
      const headers = this.#headers({});
      const ex = this.#record("delete", "DELETE", this.#url, headers, null);
      const res = await this.#fetch(this.#url, {
        method: "DELETE",
        headers,
        signal: AbortSignal.timeout(Math.max(graceMs, 500)),
      }, ex);
      if (typeof res !== "string") {
        this.#onResponseHeaders(res, ex);
        await this.#keepBody(res, ex);
        ex.end = "complete";
      }
    }
    this.#fail({ reason: "closed", message: "session closed" });
    this.#exit = this.#opts.server
      ? await this.#opts.server.close(graceMs)
      : { code: null, signal: null, stoppedBy: "self" };
    await this.#opts.cleanup?.();
    return this.#exit;
  }
}

/** Whether `text` is a JSON-RPC error answer to request `id`. */
function answers(text: string, id: number): boolean {
  try {
    const m = JSON.parse(text);
    return typeof m === "object" && m !== null && m.id === id &&
      typeof m.error === "object" && m.error !== null;
  } catch {
    return false;
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
