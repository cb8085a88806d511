/**
 * Stopping a server's process group, shared by the stdio client and the
 * HTTP server process: one place for the signal order and the final sweep.
 *
 * @module
 */

/** How a process was stopped (the `stoppedBy` of the clients' exit info). */
export type StoppedBy = "self" | "stdin_close" | "sigterm" | "sigkill";

/** Send `signal` to the whole process group led by `pid`; a gone group is fine. */
export function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Stop a process group: optionally close its input first (the MCP stdio
 * shutdown), then SIGTERM, then SIGKILL, each after `graceMs`; always end
 * with a SIGKILL sweep of the group, since a grandchild may outlive the
 * leader. Resolves with the leader's status and what stopped it.
 *
 * Requires `--allow-run` (signals).
 */
export async function stopGroup(
  pid: number,
  exited: Promise<Deno.CommandStatus>,
  graceMs: number,
  closeInput?: () => Promise<void>,
): Promise<{ status: Deno.CommandStatus; stoppedBy: StoppedBy }> {
  const waitFor = async (ms: number): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((res) => (timer = setTimeout(() => res(false), ms))),
    ]);
    clearTimeout(timer);
    return r;
  };
  let stoppedBy: StoppedBy = "self";
  if (!(await waitFor(0))) {
    let gone = false;
    if (closeInput) {
      stoppedBy = "stdin_close";
      try {
        await closeInput();
      } catch {
        // pipe already broken
      }
      gone = await waitFor(graceMs);
    }
    if (!gone) {
      stoppedBy = "sigterm";
      signalGroup(pid, "SIGTERM");
      if (!(await waitFor(graceMs))) stoppedBy = "sigkill";
    }
  }
  signalGroup(pid, "SIGKILL");
  return { status: await exited, stoppedBy };
}

/** Every started process group not yet seen to exit, for {@linkcode killAllGroups}. */
const LIVE = new Set<{ kill(): void }>();

/** Track `owner` until `exited` settles, so {@linkcode killAllGroups} can reach it. */
export function trackGroup(
  owner: { kill(): void },
  exited: Promise<unknown>,
): void {
  LIVE.add(owner);
  exited.finally(() => LIVE.delete(owner)).catch(() => {});
}

/**
 * SIGKILL the process group of every server this process started and has
 * not yet closed (stdio clients and HTTP server processes alike): what an
 * interrupted harness does before it exits, so no untrusted server outlives
 * it. Returns how many groups were signalled.
 */
export function killAllGroups(): number {
  const n = LIVE.size;
  for (const owner of LIVE) owner.kill();
  LIVE.clear();
  return n;
}
