/**
 * A local server process that speaks over the network rather than stdio
 * (an HTTP MCP server started from a definition): spawned in its own
 * process group and PID namespace that dies with verity (`contain.ts`), stdout and stderr kept (bounded), shut down with SIGTERM
 * then SIGKILL, and the whole group swept.
 *
 * This is an edge module: it spawns processes. Requires `--allow-run`.
 *
 * @module
 */
import type { ExitInfo, SpawnSpec } from "./spawn_spec.ts";
import { containCommand } from "./contain.ts";
import { signalGroup, stopGroup, trackGroup } from "./process_group.ts";

/** Options for {@linkcode ServerProcess.start}. */
export interface ServerProcessOptions {
  /**
   * Most bytes of stdout and stderr kept (together); the rest is counted.
   * @default {1024 * 1024}
   */
  maxOutputBytes?: number;
}

/**
 * A started server process.
 *
 * @example
 * ```ts ignore
 * const p = ServerProcess.start({ command: ["deno", "run", "server.ts"], env: {} });
 * await p.close();
 * ```
 */
export class ServerProcess {
  #child: Deno.ChildProcess | null = null;
  #status: Promise<Deno.CommandStatus> | null = null;
  #out: Uint8Array[] = [];
  #outBytes = 0;
  #dropped = 0;
  #max: number;
  #exit: ExitInfo | null = null;
  #done: Deno.CommandStatus | null = null;
  /** Set when the process could not be spawned. */
  spawnError: string | null = null;
  /** `performance.now()` at spawn. */
  readonly t0 = performance.now();

  private constructor(opts: ServerProcessOptions) {
    this.#max = opts.maxOutputBytes ?? 1024 * 1024;
  }

  /** Spawn; never throws (see {@linkcode ServerProcess.spawnError}). */
  static start(
    spec: SpawnSpec,
    opts: ServerProcessOptions = {},
  ): ServerProcess {
    const p = new ServerProcess(opts);
    try {
      const [program, ...args] = spec.contain === false
        ? spec.command
        : containCommand(spec.command);
      if (program === undefined) throw new TypeError("empty command");
      const child = new Deno.Command(program, {
        args,
        env: spec.env,
        clearEnv: true,
        ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        detached: true,
      }).spawn();
      p.#child = child;
      p.#status = child.status.then((s) => {
        p.#done = s;
        return s;
      });
      trackGroup(p, p.#status);
      p.#drain(child.stdout);
      p.#drain(child.stderr);
    } catch (e) {
      p.spawnError = `cannot start ${JSON.stringify(spec.command[0] ?? "")}: ${
        e instanceof Error ? e.message : String(e)
      }`;
    }
    return p;
  }

  /** Process id (and process group id), if it started. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Resolves with the exit status once the process has gone; null if it never started. */
  get status(): Promise<Deno.CommandStatus> | null {
    return this.#status;
  }

  /** The exit status once the process has gone by itself or been stopped. */
  get exited(): Deno.CommandStatus | null {
    return this.#done;
  }

  async #drain(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) {
        const room = this.#max - this.#outBytes;
        if (room <= 0) {
          this.#dropped += chunk.length;
          continue;
        }
        const keep = chunk.length <= room ? chunk : chunk.subarray(0, room);
        this.#out.push(keep.slice());
        this.#outBytes += keep.length;
        this.#dropped += chunk.length - keep.length;
      }
    } catch {
      // torn down at kill time
    }
  }

  /** What the server printed (stdout and stderr interleaved), lossy decoded. */
  output(): { text: string; dropped: number } {
    const all = new Uint8Array(this.#outBytes);
    let o = 0;
    for (const part of this.#out) {
      all.set(part, o);
      o += part.length;
    }
    return { text: new TextDecoder().decode(all), dropped: this.#dropped };
  }

  /** SIGKILL the whole process group. */
  kill(): void {
    const pid = this.#child?.pid;
    if (pid !== undefined) signalGroup(pid, "SIGKILL");
  }

  /** SIGTERM, wait `graceMs`, SIGKILL; then sweep the group. */
  async close(graceMs = 2000): Promise<ExitInfo> {
    if (this.#exit) return this.#exit;
    const child = this.#child;
    const status = this.#status;
    if (!child || !status) {
      this.#exit = { code: null, signal: null, stoppedBy: "self" };
      return this.#exit;
    }
    const { status: s, stoppedBy } = await stopGroup(
      child.pid,
      status,
      graceMs,
    );
    try {
      await child.stdin.close();
    } catch {
      // already closed
    }
    this.#exit = { code: s.code, signal: s.signal ?? null, stoppedBy };
    return this.#exit;
  }
}
