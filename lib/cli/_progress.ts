/**
 * The live progress line of a long `verity run` on a terminal: sessions
 * done/total, the current phase and tool, elapsed time and an ETA, redrawn
 * in place on stderr. Silent when stderr is not a terminal, with `--quiet`
 * or with `--json`. The line's text is {@linkcode progressLine} (pure).
 *
 * @module
 */
import type { SessionTick } from "../runner/runner.ts";

/** A duration as `42s`, `3m05s` or `1h02m`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/**
 * One progress line: `sessions 12/40 · sequential · write_file[new] ·
 * 0:14 elapsed · ETA 32s`. The ETA is the mean time per finished session
 * times the sessions left, shown once a session has finished. Pure.
 */
export function progressLine(
  t: SessionTick,
  elapsedMs: number,
  width = 100,
): string {
  const parts = [
    `sessions ${t.done}/${t.total}`,
    t.phase,
    ...(t.tool === null ? [] : [t.tool]),
    `${duration(elapsedMs)} elapsed`,
    t.done > 0 && t.done < t.total
      ? `ETA ${duration((elapsedMs / t.done) * (t.total - t.done))}`
      : t.done >= t.total
      ? "finishing"
      : "ETA –",
  ];
  const line = `verity: ${parts.join(" · ")}`;
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** Where progress goes: a terminal's stderr, its width and the clock. */
export interface ProgressSink {
  write(text: string): void;
  columns(): number;
  now(): number;
}

/** The live progress line and the run's phase lines, on one stderr. */
export class Progress {
  #sink: ProgressSink | null;
  #started: number;
  #shown = false;
  #last: SessionTick | null = null;
  #lastDraw = -Infinity;

  /** `sink` null: no live line (not a terminal, --quiet or --json). */
  constructor(sink: ProgressSink | null) {
    this.#sink = sink;
    this.#started = sink?.now() ?? 0;
  }

  /** The live sink for stderr, or null when stderr is not a terminal. */
  static stderr(): ProgressSink | null {
    if (!Deno.stderr.isTerminal()) return null;
    const enc = new TextEncoder();
    return {
      write: (text) => {
        Deno.stderr.writeSync(enc.encode(text));
      },
      columns: () => {
        try {
          // 0 when the terminal does not say (a pseudo-terminal with no size)
          return Deno.consoleSize().columns || 100;
        } catch {
          return 100;
        }
      },
      now: () => performance.now(),
    };
  }

  /** A session started or ended: redraw (at most every 100 ms, and at the end). */
  tick(t: SessionTick): void {
    this.#last = t;
    if (this.#sink === null) return;
    const now = this.#sink.now();
    if (now - this.#lastDraw < 100 && t.done < t.total) return;
    this.#lastDraw = now;
    this.#draw();
  }

  #draw(): void {
    if (this.#sink === null || this.#last === null) return;
    const line = progressLine(
      this.#last,
      this.#sink.now() - this.#started,
      Math.max(40, this.#sink.columns() - 1),
    );
    this.#sink.write(`\r\x1b[2K${line}`);
    this.#shown = true;
  }

  /** Clear the live line (before other output, and at the end). */
  clear(): void {
    if (this.#sink !== null && this.#shown) {
      this.#sink.write("\r\x1b[2K");
      this.#shown = false;
    }
  }

  /** Print a line above the live line, then redraw it. */
  line(text: string): void {
    const had = this.#shown;
    this.clear();
    console.error(text);
    if (had) this.#draw();
  }
}
