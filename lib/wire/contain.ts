/**
 * No server process outlives verity, however verity ends: on Linux every
 * server command is started as
 * `setpriv --pdeathsig KILL -- unshare --pid --fork --kill-child -- <command>`
 * (plus `--user --map-current-user` when not root), so the kernel kills the
 * wrapper with verity, the server (the first process of a new PID
 * namespace) with the wrapper, and every other process of the namespace
 * with the server (docs/sandbox.md, "containment"). Where that does not
 * work (not Linux, no util-linux, namespaces forbidden) the command runs as
 * given and verity falls back to killing the process group;
 * {@linkcode containment} says which applies.
 *
 * Requires `--allow-run` (one probe per process) and `--allow-read`.
 *
 * @module
 */
import { findExecutable } from "../common/executable.ts";

/** Whether servers run contained here, and how (or why not). */
export interface Containment {
  /** The argv prefix put before every server command; empty when not contained. */
  prefix: string[];
  /** Why containment is unavailable; null when it works. */
  reason: string | null;
}

let probed: Containment | null = null;

const find = (name: string) =>
  findExecutable(name, "/usr/bin:/bin:/usr/sbin:/sbin");

function works(prefix: string[]): boolean {
  try {
    const out = new Deno.Command(prefix[0]!, {
      args: [...prefix.slice(1), "/bin/sh", "-c", "exit 7"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
      clearEnv: true,
    }).outputSync();
    return out.code === 7;
  } catch {
    return false;
  }
}

function probe(): Containment {
  if (Deno.build.os !== "linux") {
    return { prefix: [], reason: "PID namespaces need Linux" };
  }
  const setpriv = find("setpriv");
  const unshare = find("unshare");
  if (setpriv === null || unshare === null) {
    return {
      prefix: [],
      reason: "setpriv or unshare (util-linux) is not installed",
    };
  }
  const base = [setpriv, "--pdeathsig", "KILL", "--", unshare];
  const tail = ["--pid", "--fork", "--kill-child", "--"];
  const asRoot = [...base, ...tail];
  const asUser = [...base, "--user", "--map-current-user", ...tail];
  const root = Deno.uid() === 0;
  for (const prefix of root ? [asRoot, asUser] : [asUser, asRoot]) {
    if (works(prefix)) return { prefix, reason: null };
  }
  return {
    prefix: [],
    reason: "unshare cannot create a PID namespace here",
  };
}

/**
 * How servers are contained on this machine (probed once per process).
 *
 * @example
 * ```ts ignore
 * const c = containment();
 * if (c.reason !== null) console.error(`servers not contained: ${c.reason}`);
 * ```
 */
export function containment(): Containment {
  probed ??= probe();
  return probed;
}

/**
 * `command` wrapped so that it dies with verity and takes every process it
 * started with it (see the module doc); `command` unchanged where that is
 * unavailable.
 *
 * @example
 * ```ts ignore
 * const argv = containCommand(["deno", "run", "server.ts"]);
 * ```
 */
export function containCommand(command: readonly string[]): string[] {
  const prefix = containment().prefix;
  // A command that starts in a mount namespace of its own (the sandbox's
  // overlay, `unshare --mount --propagation private -- ...`) gets it from
  // the same unshare: one process fewer.
  const own = ["--mount", "--propagation", "private", "--"];
  if (
    prefix.length > 0 && command[0] === prefix[4] &&
    own.every((a, i) => command[i + 1] === a)
  ) {
    return [...prefix.slice(0, -1), ...own, ...command.slice(5)];
  }
  return [...prefix, ...command];
}

/**
 * {@linkcode containCommand} for a long-lived process of verity's own that
 * starts servers (the overlap timer). Contained, it is the first process of
 * its PID namespace and inherits every orphan in it, but a Deno program only
 * waits for the processes it spawned itself: so it runs as the child of
 * `/bin/sh`, which reaps them while it waits (not `exec`: the shell stays
 * PID 1; `; exit $?` keeps dash from exec'ing the last command of -c).
 *
 * @example
 * ```ts ignore
 * const argv = containReaping(["deno", "run", "main.ts", "__overlap"]);
 * ```
 */
export function containReaping(command: readonly string[]): string[] {
  const c = containment();
  return c.prefix.length === 0 ? [...command] : [
    ...c.prefix,
    "/bin/sh",
    "-c",
    '"$@"; exit $?',
    "verity-reaper",
    ...command,
  ];
}
