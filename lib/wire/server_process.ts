/**
 * A started server process, shared by the stdio client and the HTTP
 * server: spawned in its own process group and PID namespace that dies
 * with verity (`contain.ts`), its output kept (bounded), shut down with
 * SIGTERM then SIGKILL, and the whole group swept.
 *
 * This is an edge module: it spawns processes. Requires `--allow-run`.
 *
 * @module
 */
import type { ExitInfo, SpawnSpec } from "./spawn_spec.ts";
import { containCommand } from "./contain.ts";
import { signalGroup, stopGroup, trackGroup } from "./process_group.ts";
import { concatBytes } from "./frames.ts";

/** Most bytes of output kept; the rest is counted. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

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
  #exit: ExitInfo | null = null;
  #done: Deno.CommandStatus | null = null;
  /** Set when the process could not be spawned. */
  spawnError: string | null = null;
  /** `performance.now()` at spawn. */
  readonly t0 = performance.now();

  /**
   * Spawn; never throws (see {@linkcode ServerProcess.spawnError}). With
   * `stdio`, stdout is left to the caller ({@linkcode ServerProcess.child})
   * and only stderr is kept; otherwise both are kept, interleaved.
   */
  static start(spec: SpawnSpec, stdio = false): ServerProcess {
    const p = new ServerProcess();
    try {
      if (spec.command.length === 0) throw new TypeError("empty command");
      const [program, ...args] = spec.contain === false
        ? spec.command
        : containCommand(spec.command);
      const child = new Deno.Command(program!, {
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
      p.#status = child.status.then((s) => p.#done = s);
      trackGroup(p, p.#status);
      if (!stdio) p.#drain(child.stdout);
      p.#drain(child.stderr);
    } catch (e) {
      p.spawnError = `cannot start ${JSON.stringify(spec.command[0] ?? "")}: ${
        e instanceof Error ? e.message : String(e)
      }`;
    }
    return p;
  }

  /** The child process, if it started. */
  get child(): Deno.ChildProcess | null {
    return this.#child;
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
        const room = Math.max(0, MAX_OUTPUT_BYTES - this.#outBytes);
        if (room > 0) {
          this.#out.push(chunk.slice(0, room));
          this.#outBytes += Math.min(room, chunk.length);
        }
        this.#dropped += Math.max(0, chunk.length - room);
      }
    } catch {
      // torn down at kill time
    }
  }

  /** What the server printed (as kept), lossy decoded, and the bytes dropped. */
  output(): { text: string; dropped: number } {
    return {
      text: new TextDecoder().decode(concatBytes(this.#out)),
      dropped: this.#dropped,
    };
  }

  /** SIGKILL the whole process group. */
  kill(): void {
    const pid = this.#child?.pid;
    if (pid !== undefined) signalGroup(pid, "SIGKILL");
  }

  /**
   * Stop it (`closeInput` first, when given: the MCP stdio shutdown), then
   * SIGTERM, then SIGKILL, each after `graceMs`; then sweep the group.
   */
  async close(
    graceMs = 2000,
    closeInput?: () => Promise<void>,
  ): Promise<ExitInfo> {
    if (this.#exit) return this.#exit;
    const child = this.#child;
    if (!child || !this.#status) {
      return this.#exit = { code: null, signal: null, stoppedBy: "self" };
    }
    const { status: s, stoppedBy } = await stopGroup(
      child.pid,
      this.#status,
      graceMs,
      closeInput,
    );
    await child.stdin.close().catch(() => {});
    return this.#exit = { code: s.code, signal: s.signal ?? null, stoppedBy };
  }
}
