/**
 * Long-lived overlap-timer processes (`verity __overlap`), one per job slot.
 * Each takes one attempt spec per line and answers one result per line; a
 * timer that does not answer in time is killed and replaced.
 *
 * Requires `--allow-run`.
 *
 * @module
 */
import type { OverlapResult, OverlapSpec } from "./overlap_timer.ts";
import { selfCommand } from "./self.ts";
import { containReaping } from "../wire/contain.ts";
import { TIMED_OUT_PREFIX } from "../history/call_outcome.ts";
import { boundedLines } from "../wire/lines.ts";

class TimerProcess {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncIterator<Uint8Array>;
  #stderr: Promise<string>;

  constructor() {
    // Contained like a server: killing the timer (or verity) kills every
    // server it started, since they share its PID namespace; a shell as
    // that namespace's first process reaps the orphans the timer inherits.
    const [prog, ...args] = containReaping(selfCommand("__overlap"));
    this.#child = new Deno.Command(prog!, {
      args,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    // Unbounded, as the attempt's answers are (a call's whole result).
    this.#lines = boundedLines(this.#child.stdout, Infinity)
      [Symbol.asyncIterator]();
    this.#stderr = new Response(this.#child.stderr).text().catch(() => "");
  }

  /** Run one attempt; resolves to a result, or a failure message. */
  async run(
    spec: OverlapSpec,
    limitMs: number,
  ): Promise<OverlapResult | string> {
    await this.#writer.write(
      new TextEncoder().encode(JSON.stringify(spec) + "\n"),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = Symbol("late");
    const timeout = new Promise<typeof late>((res) => {
      timer = setTimeout(() => res(late), limitMs);
    });
    const answer = await Promise.race([this.#lines.next(), timeout]);
    clearTimeout(timer);
    // The timer's own silence is named as such, never parsed as its answer.
    if (answer === late) {
      return `${TIMED_OUT_PREFIX}the overlap timer gave no answer within ${
        (limitMs / 1000).toFixed(1)
      } s and was killed with its servers`;
    }
    if (answer.done) {
      const err = (await this.#stderr).trim().split("\n").pop() ?? "";
      return `overlap timer exited: ${err}`;
    }
    const line = new TextDecoder().decode(answer.value);
    try {
      return JSON.parse(line) as OverlapResult;
    } catch {
      return `overlap timer answered garbage: ${line.slice(0, 200)}`;
    }
  }

  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    const done = await Promise.race([
      this.#child.status.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 2000)),
    ]);
    if (!done) await this.kill();
  }

  /** Kill the timer (its PID namespace, servers included, goes with it) and wait for it. */
  async kill(): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // gone
    }
    await this.#child.status.catch(() => {});
  }
}

/** A pool of overlap-timer processes, created on demand. */
export class OverlapTimerPool {
  #idle: TimerProcess[] = [];
  #all = new Set<TimerProcess>();

  /** Run one attempt on an idle timer (starting one if none is idle). */
  async run(
    spec: OverlapSpec,
    limitMs: number,
  ): Promise<OverlapResult | string> {
    const t = this.#idle.pop() ?? new TimerProcess();
    this.#all.add(t);
    const r = await t.run(spec, limitMs);
    if (typeof r === "string") {
      // A timer that failed is not reused; it is gone before the attempt ends.
      await t.kill();
      this.#all.delete(t);
    } else this.#idle.push(t);
    return r;
  }

  /**
   * Start timers ahead of the attempts, up to `n` idle ones: a timer's own
   * start (a Deno process) then overlaps other work. Closed by
   * {@linkcode OverlapTimerPool.close} like any other.
   */
  warm(n: number): void {
    while (this.#idle.length < n) {
      const t = new TimerProcess();
      this.#all.add(t);
      this.#idle.push(t);
    }
  }

  /** Close every timer. */
  async close(): Promise<void> {
    await Promise.all([...this.#all].map((t) => t.close()));
    this.#all.clear();
    this.#idle = [];
  }
}
