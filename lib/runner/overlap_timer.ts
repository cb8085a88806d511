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
} from "../history/call_outcome.ts";
import type { McpClient } from "../wire/client.ts";
import { HttpClient } from "../wire/http_client.ts";
import { startLocalHttp } from "../wire/local_http.ts";
import { pingEvents } from "../verdicts/overlap.ts";

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
   * Pings per instance before the calls (two_process).
   * @default {3}
   */
  pings?: number;
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
  return {
    ...classifyAnswer(o, ATTEMPT_MESSAGE_LIMIT),
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
  const targets0: (SpawnSpec | McpClient)[] = spec.http === undefined
    ? spec.launches
    : await Promise.all(
      spec.launches.map((l, i) =>
        startLocalHttp(
          l,
          spec.http![i]!.url,
          spec.http![i]!.port,
          spec.startTimeoutMs,
          spec.http![i]!.relayDir !== undefined
            ? { relayDir: spec.http![i]!.relayDir! }
            : {},
        )
      ),
    );
  if (spec.http !== undefined && spec.mode === "single_connection") {
    // A second session on the same server instance.
    targets0.push(new HttpClient(spec.http[0]!.url));
  }
  const opened = await Promise.all(
    targets0.map((l) =>
      openSession(l, {
        timeoutMs: spec.startTimeoutMs,
        deadlineMs: 2 * spec.startTimeoutMs + spec.callTimeoutMs + 10_000,
      })
    ),
  );
  const clients = opened.map((o) => o.client);
  try {
    const bad = opened.find((o) => o.failure !== null);
    if (bad) {
      result.setupFailure = `session opening failed: ${bad.failure!.message}`;
      return result;
    }
    timeline.push({ event: "opened", t: now() });
    if (spec.mode === "two_process") {
      for (const [i, c] of clients.entries()) {
        for (let k = 0; k < (spec.pings ?? 3); k++) {
          const s = now();
          const p = await c.request("ping", {}, spec.startTimeoutMs);
          if (p.status !== "ok") {
            result.setupFailure = `instance ${i} did not answer ping`;
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
      ? [clients[0]!, clients[1]!]
      : [clients[0]!, clients[0]!];
    const params = { name: spec.call.name, arguments: spec.call.arguments };
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
    result.calls = await Promise.all(pending);
    result.calls.forEach((c, i) => {
      if (c.recvT !== null) {
        timeline.push({ event: `receive call ${i + 1}`, t: c.recvT });
      }
    });
    return result;
  } finally {
    if (spec.http !== undefined && spec.mode === "single_connection") {
      // The second session of one HTTP instance closes before the instance.
      await clients[1]?.close(1000);
      await clients[0]?.close(1000);
    } else await Promise.all(clients.map((c) => c.close(1000)));
    timeline.push({ event: "closed", t: now() });
    result.serverSpanMs = now() - spawnT;
    result.stderr = clients.map((c) => c.stderr().text.slice(-2000));
    timeline.sort((x, y) => x.t - y.t);
  }
}

/**
 * Entry point of `verity __overlap`: one JSON spec per line on stdin, one
 * JSON result per line on stdout, until stdin closes. The runner keeps one
 * timer process per job slot, so an attempt does not pay for a process start.
 */
export async function main(_argv: string[]): Promise<number> {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  let buf = "";
  const handle = async (line: string) => {
    if (line.trim() === "") return;
    const result = await runAttempt(JSON.parse(line) as OverlapSpec);
    await Deno.stdout.write(enc.encode(JSON.stringify(result) + "\n"));
  };
  for await (const chunk of Deno.stdin.readable) {
    buf += dec.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      await handle(line);
    }
  }
  await handle(buf);
  return 0;
}
