/**
 * Per-call privilege use: the permission checks Deno logged while one tool
 * call was in flight, sorted into reads and writes (inside the state
 * directory or outside it), environment variables, network destinations and
 * everything else, each allowed or denied. Pure: log text in, data out.
 *
 * The runner attributes the audit log to calls by byte offset: it notes the
 * log's length before it sends a call and after the answer arrives (Deno
 * writes each check as it happens), so a call's slice holds exactly the
 * checks made while it was in flight. Checks made at start-up, between calls
 * or at shutdown belong to no call.
 *
 * @module
 */
import { classifyEvents, parseAuditLog } from "./audit_log.ts";
import type { LaunchPolicy, SandboxBackend } from "./types.ts";
import { isWithin } from "../common/paths.ts";

/** A file access: where, whether the sandbox allowed it, how often. */
export interface FileAccess {
  /** The path, with the state directory written as `{state}`. */
  path: string;
  /** Inside the session's state directory. */
  in_state: boolean;
  /** Granted by the sandbox (false: refused, the call saw an error). */
  allowed: boolean;
  count: number;
}

/** Any other access: a variable name, a network destination, an API. */
export interface NamedAccess {
  /** Deno's permission name (`env`, `net`, `sys`, `ffi`, `import`, ...). */
  permission: string;
  /** The variable, host:port, URL or host name, API; null for "all". */
  value: string | null;
  allowed: boolean;
  count: number;
}

/** What one call did with its privileges, as the sandbox saw it. */
export interface PrivilegeUse {
  /** Whether the backend records permission checks at all. */
  seen: boolean;
  backend: SandboxBackend;
  reads: FileAccess[];
  writes: FileAccess[];
  env: NamedAccess[];
  net: NamedAccess[];
  /** ffi, sys, import and anything else Deno logged. */
  other: NamedAccess[];
  /** What this record cannot show, in words (always at least one line). */
  unseen: string[];
}

/** Subprocess checks never reach Deno's log (docs/sandbox.md). */
export const SUBPROCESS_UNSEEN =
  "subprocess: Deno does not log run checks; a subprocess attempt is refused (--deny-run) but leaves no record";

/** Why a backend without a permission log shows nothing. */
export function backendUnseen(backend: SandboxBackend): string {
  return backend === "bubblewrap"
    ? "everything: bubblewrap confines reads, writes, network and subprocesses but records no attempt, allowed or denied"
    : "everything: no sandbox, nothing is recorded";
}

/** Where one call's checks lie in the audit log (byte offsets, end exclusive). */
export interface LogSpan {
  from: number;
  to: number;
}

function relative(path: string, stateDir: string | null): string {
  if (stateDir === null || !isWithin(path, stateDir)) return path;
  return path === stateDir
    ? "{state}"
    : `{state}${path.slice(stateDir.length)}`;
}

/**
 * The privilege use in a slice of a permission audit log. `logText` null
 * means the backend keeps no log: the record says so (`seen: false`).
 *
 * @example
 * ```ts
 * import { privilegeUse } from "./privilege.ts";
 * const use = privilegeUse(
 *   '{"permission":"write","value":"/s/a.json"}\n{"permission":"write","value":"/etc/x"}\n',
 *   { backend: "deno", policy: { writable: ["/s"], readable: ["/s"], env: [] } },
 *   "/s",
 * );
 * console.assert(use.writes[0]?.path === "/etc/x" && !use.writes[0]?.allowed);
 * console.assert(use.writes[1]?.path === "{state}/a.json" && use.writes[1]?.in_state);
 * ```
 */
export function privilegeUse(
  logText: string | null,
  launch: { backend: SandboxBackend; policy?: LaunchPolicy },
  stateDir: string | null,
): PrivilegeUse {
  const use: PrivilegeUse = {
    seen: logText !== null,
    backend: launch.backend,
    reads: [],
    writes: [],
    env: [],
    net: [],
    other: [],
    unseen: [],
  };
  if (logText === null) {
    use.unseen.push(backendUnseen(launch.backend));
    return use;
  }
  use.unseen.push(SUBPROCESS_UNSEEN);
  const log = parseAuditLog(logText);
  for (const p of log.problems) use.unseen.push(`unreadable log line: ${p}`);
  const policy = launch.policy ?? { writable: [], readable: [], env: [] };
  for (const a of classifyEvents(log.events, policy)) {
    if (a.permission === "read" || a.permission === "write") {
      const path = a.value ?? "*";
      const f: FileAccess = {
        path: relative(path, stateDir),
        in_state: stateDir !== null && isWithin(path, stateDir),
        allowed: a.granted,
        count: a.count,
      };
      (a.permission === "read" ? use.reads : use.writes).push(f);
      continue;
    }
    const n: NamedAccess = {
      permission: a.permission,
      value: a.value,
      allowed: a.granted,
      count: a.count,
    };
    if (a.permission === "env") use.env.push(n);
    else if (a.permission === "net") use.net.push(n);
    else use.other.push(n);
  }
  return use;
}

/**
 * Cut an audit log (its bytes) into one slice of text per call span.
 *
 * @example
 * ```ts
 * import { sliceLog } from "./privilege.ts";
 * const bytes = new TextEncoder().encode("a\nb\n");
 * console.assert(sliceLog(bytes, [{ from: 2, to: 4 }])[0] === "b\n");
 * ```
 */
export function sliceLog(
  bytes: Uint8Array,
  spans: readonly LogSpan[],
): string[] {
  const dec = new TextDecoder();
  return spans.map((s) =>
    dec.decode(
      bytes.subarray(
        Math.min(s.from, bytes.length),
        Math.min(s.to, bytes.length),
      ),
    )
  );
}
