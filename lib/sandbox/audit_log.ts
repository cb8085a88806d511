/**
 * Deno permission audit logs (`DENO_AUDIT_PERMISSIONS`) as evidence. Pure:
 * text in, data out.
 *
 * The log records every permission *check*, not its outcome, with
 * whole-second timestamps. So an attempt is a check for something the launch
 * does not grant; whether the call made it is told by comparing the "once"
 * sessions with the control sessions of the same server.
 *
 * @module
 */
import type {
  AccessKind,
  Launch,
  LaunchPolicy,
  PermissionEvent,
  SandboxBackend,
} from "./types.ts";
import { isWithin } from "../common/paths.ts";

/** A parsed audit log: the checks, and the lines that could not be read. */
export interface AuditLog {
  events: PermissionEvent[];
  /** One line per unreadable log line (e.g. cut short when the process was killed). */
  problems: string[];
}

/**
 * Parse a `DENO_AUDIT_PERMISSIONS` JSONL log, keeping unreadable lines as
 * problems rather than failing.
 *
 * @example
 * ```ts
 * const log = parseAuditLog('{"v":1,"datetime":"2026-11-29T00:00:00Z","permission":"net","value":"127.0.0.1:8080"}\n');
 * console.assert(log.events[0]?.value === "127.0.0.1:8080");
 * ```
 */
export function parseAuditLog(text: string): AuditLog {
  const events: PermissionEvent[] = [];
  const problems: string[] = [];
  // Line by line, without splitting the text into an array: a log holds up
  // to MAX_AUDIT_LOG_BYTES (~800,000 lines). A line equal to the one
  // before (the same check within the same second) is the same event.
  let prev: string | null = null;
  let prevEvent: PermissionEvent | null = null;
  for (let start = 0, i = 0; start < text.length; i++) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === "") continue;
    if (line === prev && prevEvent !== null) {
      events.push(prevEvent);
      continue;
    }
    prev = line;
    prevEvent = null;
    const e = parseLine(line, i, problems);
    if (e !== null) {
      events.push(e);
      prevEvent = e;
    }
  }
  return { events, problems };
}

/** One log line as an event, or null with its problem recorded. */
function parseLine(
  line: string,
  i: number,
  problems: string[],
): PermissionEvent | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    problems.push(`line ${i + 1}: not JSON: ${line.slice(0, 80)}`);
    return null;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    problems.push(`line ${i + 1}: not an object`);
    return null;
  }
  const o = v as Record<string, unknown>;
  if (typeof o.permission !== "string") {
    problems.push(`line ${i + 1}: no "permission" string`);
    return null;
  }
  const value = o.value;
  if (value !== null && value !== undefined && typeof value !== "string") {
    problems.push(`line ${i + 1}: "value" is neither a string nor null`);
    return null;
  }
  return { permission: o.permission, value: value ?? null };
}

/**
 * Parse a `DENO_AUDIT_PERMISSIONS` JSONL log into permission checks, in
 * order, skipping unreadable lines (see {@linkcode parseAuditLog} to keep them).
 *
 * @example
 * ```ts
 * const events = readAuditLog('{"v":1,"permission":"env","value":"HOME"}');
 * console.assert(events.length === 1);
 * ```
 */
export function readAuditLog(text: string): PermissionEvent[] {
  return parseAuditLog(text).events;
}

/** One kind of access to one resource, as the audit log saw it. */
export interface Attempt {
  /** `net`, `read`, `write`, `env`, `run`, `ffi`, `sys`, `import`, or whatever Deno logged. */
  permission: string;
  /** Host:port, URL, path, variable name or API; null means "all" (e.g. the whole environment). */
  value: string | null;
  /** Whether the launch grants it; a check for something not granted is a refused attempt. */
  granted: boolean;
  /** How many checks of it the log holds. */
  count: number;
}

function granted(e: PermissionEvent, policy: LaunchPolicy): boolean {
  const v = e.value;
  switch (e.permission) {
    case "read":
      return v !== null && policy.readable.some((p) => isWithin(v, p));
    case "write":
      return v !== null && policy.writable.some((p) => isWithin(v, p));
    case "env":
      return v !== null && policy.env.includes(v);
    case "sys":
      return v !== null && (policy.sys ?? []).includes(v);
    case "run":
      return v !== null && (policy.run ?? []).some((p) => v === p);
    case "net":
      // Only an HTTP server's own listening address and the run's own
      // database socket are ever granted.
      return v !== null && (policy.net ?? []).includes(v);
    default:
      // ffi and import are never granted by the deno backend; sys and run
      // only when the definition declared them (allow.sys, allow.run).
      return false;
  }
}

/**
 * Group permission checks into attempts (one per permission and value, in a
 * stable order) and mark each as granted or refused under `policy`.
 *
 * @example
 * ```ts
 * const a = classifyEvents([{ permission: "write", value: "/home/me/x" }], {
 *   writable: ["/state"], readable: ["/state"], env: ["HOME"],
 * });
 * console.assert(a[0]?.granted === false);
 * ```
 */
export function classifyEvents(
  events: readonly PermissionEvent[],
  policy: LaunchPolicy,
): Attempt[] {
  const byKey = new Map<string, Attempt>();
  for (const e of events) {
    const key = `${e.permission}\u0000${e.value ?? "\u0001"}`;
    const had = byKey.get(key);
    if (had) had.count++;
    else {byKey.set(key, {
        permission: e.permission,
        value: e.value,
        granted: granted(e, policy),
        count: 1,
      });}
  }
  return [...byKey.values()].sort((a, b) =>
    a.permission < b.permission
      ? -1
      : a.permission > b.permission
      ? 1
      : (a.value ?? "") < (b.value ?? "")
      ? -1
      : (a.value ?? "") > (b.value ?? "")
      ? 1
      : 0
  );
}

/** The refused attempts only (what a report lists as attempted escapes). */
export function refusedAttempts(
  events: readonly PermissionEvent[],
  policy: LaunchPolicy,
): Attempt[] {
  return classifyEvents(events, policy).filter((a) => !a.granted);
}

/**
 * Network destinations the process tried to reach, unique and sorted
 * (host:port, URL or host name, exactly as Deno logged them).
 *
 * @example
 * ```ts
 * const n = networkAttempts([{ permission: "net", value: "127.0.0.1:9000" }, { permission: "env", value: "HOME" }]);
 * console.assert(n.length === 1 && n[0] === "127.0.0.1:9000");
 * ```
 */
export function networkAttempts(events: readonly PermissionEvent[]): string[] {
  return [
    ...new Set(
      events.filter((e) => e.permission === "net").map((e) => e.value ?? "*"),
    ),
  ].sort();
}

/** What a report records about the sandbox of one server process. */
export interface SandboxEvidence {
  backend: SandboxBackend;
  /** The exact argv that started the process. */
  command: string[];
  /** The complete environment it got (nothing else is inherited). */
  env: Record<string, string>;
  cwd: string | null;
  /** The Deno permission audit log, when the backend keeps one. */
  auditLog: string | null;
  /** The kinds of attempt this backend can see (empty: it sees none). */
  observes: AccessKind[];
  /**
   * Refused attempts from the audit log, in a stable order; null when the
   * backend cannot see attempts (bubblewrap, none) or the log is missing.
   */
  attempts: Attempt[] | null;
  /** Every network destination checked, granted or not (deno backend). */
  network: string[] | null;
  /** Unreadable log lines, or why the log is missing. */
  problems: string[];
}

/**
 * The sandbox evidence of one launch, from its audit log's text (null when
 * there is no log or it could not be read).
 *
 * @example
 * ```ts
 * const ev = launchEvidence({
 *   spawn: { command: ["deno", "run", "s.ts"], env: {} }, backend: "deno",
 *   auditLog: "/e/s.jsonl", seesNetwork: true,
 *   policy: { writable: ["/s"], readable: ["/s"], env: [] }, observes: ["net"],
 * }, '{"permission":"net","value":"127.0.0.1:9000"}');
 * console.assert(ev.attempts?.[0]?.value === "127.0.0.1:9000");
 * ```
 */
export function launchEvidence(
  launch: Launch,
  logText: string | null,
): SandboxEvidence {
  const base = {
    backend: launch.backend,
    command: [...launch.spawn.command],
    env: { ...launch.spawn.env },
    cwd: launch.spawn.cwd ?? null,
    auditLog: launch.auditLog,
    observes: [...(launch.observes ?? [])],
  };
  if (launch.auditLog === null) {
    return { ...base, attempts: null, network: null, problems: [] };
  }
  if (logText === null) {
    return {
      ...base,
      attempts: null,
      network: null,
      problems: [`audit log ${launch.auditLog} is missing`],
    };
  }
  const log = parseAuditLog(logText);
  const policy = launch.policy ?? { writable: [], readable: [], env: [] };
  return {
    ...base,
    attempts: refusedAttempts(log.events, policy),
    // An HTTP server listening on its own granted port, or reaching the run's
    // own database socket, is not reaching out.
    network: networkAttempts(
      log.events.filter((e) =>
        !(e.permission === "net" && e.value !== null &&
          (policy.net ?? []).includes(e.value))
      ),
    ),
    problems: log.problems,
  };
}
