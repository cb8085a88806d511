/**
 * The out-of-process overlap timer (`verity __overlap`, internal).
 *
 * It owns the connections of one concurrent attempt: it starts the server
 * process(es), opens each session, measures ping round trips, releases both
 * `tools/call` requests in the same tick, and stamps every send and receive
 * on its own monotonic clock. The harness's event loop (snapshots, parallel
 * sessions, GC) therefore cannot fake or hide an overlap. It records only
 * stamps: whether the calls overlapped is decided by the concurrent check
 * (`lib/verdicts/overlap.ts`), from the stamps stored in the report.
 *
 * Reads an {@linkcode OverlapSpec} as JSON on stdin; writes an
 * {@linkcode OverlapResult} as JSON on stdout. Requires `--allow-run`.
 *
 * @module
 */
import type { SpawnSpec } from "../wire/stdio_client.ts";
import type { StdioClient } from "../wire/stdio_client.ts";
import { openSession } from "../wire/session.ts";
import {
  ATTEMPT_MESSAGE_LIMIT,
  classifyAnswer,
  TIMED_OUT_PREFIX,
} from "../history/call_outcome.ts";
import type { WireFailure } from "../wire/frames.ts";
import type { McpClient } from "../wire/client.ts";
import { HttpClient } from "../wire/http_client.ts";
import { startLocalHttp } from "../wire/local_http.ts";
import { pingEvents } from "../verdicts/overlap.ts";
import { selfCpuMs } from "../common/process_cpu.ts";
import { boundedLines } from "../wire/lines.ts";

/** What one attempt should do. */
export interface OverlapSpec {
  mode: "single_connection" | "two_process";
  /** One launch for single_connection, two for two_process. */
  launches: SpawnSpec[];
  startTimeoutMs: number;
  callTimeoutMs: number;
  call: { name: string; arguments: Record<string, unknown> };
  /**
   * `transport = "http"`: where each launch listens. Then single_connection
   * means two sessions on one server instance (the natural HTTP case) and
   * two_process two instances, each on its own port, sharing the store.
   * @default {unset: stdio}
   */
  http?: { port: number; url: string; relayDir?: string }[];
  /**
   * Milliseconds the whole attempt may take (start, opening, pings, the
   * calls); past it the servers are stopped and the attempt's setup
   * failure says so, starting with {@linkcode TIMED_OUT_PREFIX}.
   * @default {2 * startTimeoutMs + callTimeoutMs + 10000}
   */
  deadlineMs?: number;
}

/** The default attempt deadline of a spec ({@linkcode OverlapSpec.deadlineMs}). */
export function attemptDeadlineMs(
  spec: Pick<OverlapSpec, "startTimeoutMs" | "callTimeoutMs" | "deadlineMs">,
): number {
  return spec.deadlineMs ??
    2 * spec.startTimeoutMs + spec.callTimeoutMs + 10_000;
}

/** Pings per instance before the calls (two_process). */
const PINGS = 3;

class DeadlinePassed extends Error {}

/** A wire failure as an attempt's message: a timeout or deadline is named as such. */
function failureText(prefix: string, f: WireFailure): string {
  const timedOut = f.reason === "timeout" || f.reason === "deadline";
  return `${timedOut ? TIMED_OUT_PREFIX : ""}${prefix}${f.message}`;
}

/** One call as the timer saw it. */
export interface TimedCall {
  status: "ok" | "tool_error" | "protocol_error" | "unknown";
  sendT: number;
  recvT: number | null;
  message: string | null;
  response: string | null;
}

/** What the timer reports back. */
export interface OverlapResult {
  mode: OverlapSpec["mode"];
  setupFailure: string | null;
  calls: TimedCall[];
  /** Every send and receive (calls and pings), ms on the timer's clock. */
  timeline: { event: string; t: number }[];
  stderr: string[];
  /** From the first spawn to the last server exit, ms: the servers' lifetime span. */
  serverSpanMs: number;
}

function callStatus(
  o: Awaited<ReturnType<StdioClient["request"]>>,
): Omit<TimedCall, "sendT" | "recvT"> {
  const c = classifyAnswer(o, ATTEMPT_MESSAGE_LIMIT);
  return {
    ...c,
    // A call that got no answer in time is named as timed out.
    message: o.status === "unknown" ? failureText("", o.failure) : c.message,
    response: o.status === "ok" ? JSON.stringify(o.result) : null,
  };
}

/** Run one attempt. Effectful: spawns the server(s). */
export async function runAttempt(spec: OverlapSpec): Promise<OverlapResult> {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const timeline: { event: string; t: number }[] = [];
  const result: OverlapResult = {
    mode: spec.mode,
    setupFailure: null,
    calls: [],
    timeline,
    stderr: [],
    serverSpanMs: 0,
  };
  const spawnT = now();
  const deadlineMs = attemptDeadlineMs(spec);
  let phase = "starting the server";
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    deadlineTimer = setTimeout(
      () => reject(new DeadlinePassed()),
      deadlineMs,
    );
  });
  deadline.catch(() => {});
  /** `p`, unless the attempt's deadline passes first. */
  const within = <T>(p: Promise<T>): Promise<T> => Promise.race([p, deadline]);
  // Every client started, even one that arrives after the deadline, is closed.
  const clients: McpClient[] = [];
  const late: Promise<unknown>[] = [];
  const track = <T>(p: Promise<T>, of: (t: T) => McpClient): Promise<T> => {
    const q = p.then((t) => {
      if (!clients.includes(of(t))) clients.push(of(t));
      return t;
    });
    late.push(q.catch(() => {}));
    return q;
  };
  try {
    const targets0: (SpawnSpec | McpClient)[] = spec.http === undefined
      ? spec.launches
      : await within(Promise.all(
        spec.launches.map((l, i) => {
          const { url, port, relayDir } = spec.http![i]!;
          const relay = relayDir === undefined ? {} : { relayDir };
          return track(
            startLocalHttp(l, url, port, spec.startTimeoutMs, relay),
            (c) => c,
          );
        }),
      ));
    if (spec.http !== undefined && spec.mode === "single_connection") {
      // A second session on the same server instance.
      targets0.push(new HttpClient(spec.http[0]!.url));
    }
    phase = "opening the sessions";
    const opened = await within(Promise.all(
      targets0.map((l) =>
        track(
          openSession(l, {
            timeoutMs: spec.startTimeoutMs,
            // The client's own deadline is a backstop behind the attempt's.
            deadlineMs: deadlineMs + 5_000,
          }),
          (o) => o.client,
        ).then((o) => {
          if (o.failure === null) return o.client;
          throw new OpeningFailed(
            failureText("session opening failed: ", o.failure),
          );
        })
      ),
    ));
    timeline.push({ event: "opened", t: now() });
    if (spec.mode === "two_process") {
      for (const [i, c] of opened.entries()) {
        phase = `pinging instance ${i + 1}`;
        for (let k = 0; k < PINGS; k++) {
          const s = now();
          const p = await within(c.request("ping", {}, spec.startTimeoutMs));
          if (p.status !== "ok") {
            result.setupFailure = p.status === "unknown"
              ? failureText(
                `instance ${i + 1} did not answer ping: `,
                p.failure,
              )
              : `instance ${i + 1} answered ping with an error: ${
                JSON.stringify(p.error).slice(0, 200)
              }`;
            return result;
          }
          const r = now();
          // Raw stamps only: the concurrent check decides from them.
          const ev = pingEvents(i + 1);
          timeline.push({ event: ev.send, t: s }, { event: ev.receive, t: r });
        }
      }
    }
    const targets = spec.mode === "two_process" || spec.http !== undefined
      ? [opened[0]!, opened[1]!]
      : [opened[0]!, opened[0]!];
    const params = { name: spec.call.name, arguments: spec.call.arguments };
    phase = "waiting for the two calls";
    // Release both calls in the same tick.
    const sendT = [0, 0];
    const pending = targets.map((c, i) => {
      sendT[i] = now();
      return c.request("tools/call", params, spec.callTimeoutMs).then((o) => {
        const recvT = o.status === "unknown" ? null : now();
        return { ...callStatus(o), sendT: sendT[i]!, recvT };
      });
    });
    timeline.push({ event: "send call 1", t: sendT[0]! }, {
      event: "send call 2",
      t: sendT[1]!,
    });
    result.calls = await within(Promise.all(pending));
    result.calls.forEach((c, i) => {
      if (c.recvT !== null) {
        timeline.push({ event: `receive call ${i + 1}`, t: c.recvT });
      }
    });
    return result;
  } catch (e) {
    if (e instanceof DeadlinePassed) {
      result.setupFailure =
        `${TIMED_OUT_PREFIX}the attempt did not finish within its deadline of ${
          (deadlineMs / 1000).toFixed(1)
        } s (while ${phase}); its servers were stopped`;
      timeline.push({ event: "deadline", t: now() });
    } else if (e instanceof OpeningFailed) {
      result.setupFailure = e.message;
    } else {
      result.setupFailure = `attempt failed: ${(e as Error).message}`;
    }
    result.calls = [];
    return result;
  } finally {
    clearTimeout(deadlineTimer);
    const closed: McpClient[] = [];
    const closeAll = async () => {
      const batch = clients.splice(0);
      closed.push(...batch);
      // The second session of one HTTP instance closes before the instance.
      if (spec.http !== undefined && spec.mode === "single_connection") {
        for (const c of batch.reverse()) await c.close(1000);
      } else await Promise.all(batch.map((c) => c.close(1000)));
    };
    await closeAll();
    // What was still starting when the attempt ended is closed when it is
    // there (bounded: every start and opening has its own timeouts).
    await Promise.all(late);
    await closeAll();
    timeline.push({ event: "closed", t: now() });
    result.serverSpanMs = now() - spawnT;
    result.stderr = closed.map((c) => c.stderr().text.slice(-2000));
    timeline.sort((x, y) => x.t - y.t);
  }
}

class OpeningFailed extends Error {}

/**
 * Entry point of `verity __overlap`: one JSON spec per line on stdin, one
 * JSON result per line on stdout, until stdin closes. The runner keeps one
 * timer process per job slot, so an attempt does not pay for a process start.
 */
export async function main(_argv: string[]): Promise<number> {
  const enc = new TextEncoder();
  for await (const bytes of boundedLines(Deno.stdin.readable, Infinity)) {
    const line = new TextDecoder().decode(bytes);
    if (line.trim() === "") continue;
    const result = await runAttempt(JSON.parse(line) as OverlapSpec);
    // The whole line, however the pipe splits it (a short write would
    // leave half a line for the next attempt to be read after).
    const out = enc.encode(JSON.stringify(result) + "\n");
    let off = 0;
    while (off < out.length) off += await Deno.stdout.write(out.subarray(off));
  }
  // VERITY_PHASE_TIMES=FILE (scripts/bench_overhead.ts): the timer's own CPU
  // (harness time, not its servers') beside the run's phase times.
  const phaseFile = Deno.env.get("VERITY_PHASE_TIMES");
  if (phaseFile) {
    await Deno.writeTextFile(
      `${phaseFile}.timer-${crypto.randomUUID()}`,
      JSON.stringify({ cpu_self: selfCpuMs() }) + "\n",
    ).catch(() => {});
  }
  return 0;
}
