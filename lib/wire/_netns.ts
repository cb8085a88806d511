/**
 * Finding a sandboxed server's network namespace and starting a relay
 * inside it (private to `lib/wire/`). Under bubblewrap the server has a
 * network namespace of its own with nothing but loopback; verity reaches
 * across it with `relay_in.ts`, run with `nsenter --net` into that
 * namespace (its file system and PID namespace stay verity's). Two uses:
 * an HTTP server listening inside (`local_http.ts`), and a server that
 * connects to the run's database on a loopback port (`port_relay.ts`).
 *
 * Requires `--allow-read` (/proc) and `--allow-run` (nsenter, deno).
 *
 * @module
 */
import { ServerProcess } from "./server_process.ts";

/** The pids of a process in each PID namespace it is visible in, outermost first. */
function nsPids(hostPid: number): number[] {
  const m = /^NSpid:\s*(.*)$/m.exec(
    Deno.readTextFileSync(`/proc/${hostPid}/status`),
  );
  return m ? m[1]!.trim().split(/\s+/).map(Number) : [hostPid];
}

/**
 * The children of a process, as `/proc` shows them: those of every thread
 * (a child is listed under the thread that started it, and a Deno process
 * may spawn from a thread other than its main one).
 */
export function children(hostPid: number): number[] {
  const out: number[] = [];
  for (const t of Deno.readDirSync(`/proc/${hostPid}/task`)) {
    let kids = "";
    try {
      kids = Deno.readTextFileSync(`/proc/${hostPid}/task/${t.name}/children`)
        .trim();
    } catch {
      continue; // the thread ended
    }
    if (kids) out.push(...kids.split(/\s+/).map(Number));
  }
  return out;
}

/**
 * The pid, as `/proc` shows it, of our child `localPid` (a pid as this
 * process sees it). They differ when this process runs in a PID namespace
 * of its own over the host's `/proc` (the overlap timer does).
 */
export function procPid(localPid: number): number | null {
  try {
    const self = Number(Deno.readLinkSync("/proc/self"));
    const depth = nsPids(self).length;
    const queue = children(self);
    for (let i = 0; i < queue.length && i < 4096; i++) {
      const h = queue[i]!;
      try {
        if (nsPids(h)[depth - 1] === localPid) return h;
        queue.push(...children(h));
      } catch {
        // gone
      }
    }
  } catch {
    // no /proc
  }
  return null;
}

/**
 * The `/proc` pid of a process in the network namespace of our child
 * `localPid`'s sandbox (the first below it in another network namespace
 * than ours), or null while there is none yet.
 */
export function sandboxNetns(localPid: number): number | null {
  const root = procPid(localPid);
  let own: string;
  try {
    own = Deno.readLinkSync("/proc/self/ns/net");
  } catch {
    return null;
  }
  const queue = root === null ? [] : [root];
  for (let i = 0; i < queue.length && i < 64; i++) {
    const pid = queue[i]!;
    try {
      if (Deno.readLinkSync(`/proc/${pid}/ns/net`) !== own) return pid;
      queue.push(...children(pid));
    } catch {
      // gone or not readable
    }
  }
  return null;
}

const RELAY_IN = new URL("./relay_in.ts", import.meta.url).pathname;

/**
 * Start `relay_in.ts` with `args` inside the network namespace of the
 * process `/proc/<pid>`: loopback there is the sandbox's, Unix socket paths
 * are verity's. `net`, `read` and `write` are its Deno permissions (the
 * script itself is always readable). The relay is a contained process of
 * its own: closing it (or verity's end) stops it.
 */
export function startRelayIn(
  pid: number,
  args: string[],
  perms: { net: string[]; read: string[]; write: string[] },
): ServerProcess {
  return ServerProcess.start({
    command: [
      "nsenter",
      `--net=/proc/${pid}/ns/net`,
      "--",
      Deno.execPath(),
      "run",
      "--no-prompt",
      "--no-lock",
      "--no-config",
      `--allow-net=${perms.net.join(",")}`,
      `--allow-read=${[...perms.read, RELAY_IN].join(",")}`,
      `--allow-write=${perms.write.join(",")}`,
      RELAY_IN,
      ...args,
    ],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
}

/** The last line a relay printed, for a failure message. */
export function lastLine(p: ServerProcess): string {
  return (p.output().text.trim().split("\n").at(-1) ?? "").slice(0, 200);
}
