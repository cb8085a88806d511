/**
 * What a declaration permits a tool to do with its privileges, and the
 * observed privilege use that exceeds it (`scope_violation` on real
 * privilege use). Pure.
 *
 * The scope comes from the tool's declared `permissions` when they speak
 * verity's privilege vocabulary (`read`, `write`, `net`, `env`, `run`,
 * `ffi`, `sys`, optionally `:state` for file kinds, or `:<anything>`), and
 * from its hints otherwise: `readOnlyHint: true` permits no write (inside
 * the state directory or outside it, allowed or refused), `openWorldHint:
 * false` no network destination. No hint speaks of reads or environment
 * variables, so with hints alone those are not judged.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** One file access as recorded per call. */
export interface ObservedFileAccess {
  path: string;
  in_state: boolean;
  allowed: boolean;
}

/** One other access (variable, destination, API). */
export interface ObservedNamedAccess {
  permission: string;
  value: string | null;
  allowed: boolean;
}

/** The privilege use recorded for one observed call. */
export interface ObservedPrivilege {
  seen: boolean;
  reads: ObservedFileAccess[];
  writes: ObservedFileAccess[];
  env: ObservedNamedAccess[];
  net: ObservedNamedAccess[];
  other: ObservedNamedAccess[];
}

const KINDS = ["read", "write", "net", "env", "run", "ffi", "sys"] as const;
type Kind = typeof KINDS[number];
const PERMISSION_RE = /^(read|write|net|env|run|ffi|sys)(?::(.+))?$/;

/** Where a declared scope comes from, and what it permits per kind. */
export interface PrivilegeScope {
  source: "permissions" | "hints" | "none";
  /** Per kind: "any", "state" (file kinds inside the state directory only) or "none". */
  permits: Record<Kind, "any" | "state" | "none">;
}

/**
 * The privilege scope a declared tool states.
 *
 * @example
 * ```ts
 * import { privilegeScope } from "./privilege_scope.ts";
 * const s = privilegeScope({ annotations: { readOnlyHint: true } });
 * console.assert(s.source === "hints" && s.permits.write === "none");
 * ```
 */
export function privilegeScope(tool: Record<string, unknown>): PrivilegeScope {
  const perms = Array.isArray(tool.permissions)
    ? tool.permissions.filter((p): p is string => typeof p === "string")
    : [];
  const recognized = perms.map((p) => PERMISSION_RE.exec(p)).filter((m) =>
    m !== null
  );
  if (recognized.length > 0) {
    const permits = Object.fromEntries(KINDS.map((k) => [k, "none"])) as Record<
      Kind,
      "any" | "state" | "none"
    >;
    for (const m of recognized) {
      const kind = m[1] as Kind;
      const scoped = m[2] === "state" && (kind === "read" || kind === "write");
      if (permits[kind] !== "any") permits[kind] = scoped ? "state" : "any";
    }
    return { source: "permissions", permits };
  }
  const ann = isPlainObject(tool.annotations) ? tool.annotations : {};
  const permits = Object.fromEntries(KINDS.map((k) => [k, "any"])) as Record<
    Kind,
    "any" | "state" | "none"
  >;
  let hinted = false;
  if (ann.readOnlyHint === true) {
    permits.write = "none";
    hinted = true;
  }
  if (ann.openWorldHint === false) {
    permits.net = "none";
    hinted = true;
  }
  return { source: hinted ? "hints" : "none", permits };
}

function describe(kind: string, what: string, allowed: boolean): string {
  return `${kind} ${what} (${allowed ? "allowed" : "refused"} by the sandbox)`;
}

/**
 * The observed accesses outside the scope, one line each; empty when the
 * call stayed inside it or its privilege use was not seen.
 *
 * @example
 * ```ts
 * import { privilegeScope, outsideScope } from "./privilege_scope.ts";
 * const out = outsideScope(privilegeScope({ annotations: { readOnlyHint: true } }), {
 *   seen: true, reads: [], env: [], net: [], other: [],
 *   writes: [{ path: "/etc/x", in_state: false, allowed: false }],
 * });
 * console.assert(out[0] === "write /etc/x (refused by the sandbox)");
 * ```
 */
export function outsideScope(
  scope: PrivilegeScope,
  use: ObservedPrivilege,
): string[] {
  if (!use.seen) return [];
  const out: string[] = [];
  const files = (kind: "read" | "write", list: ObservedFileAccess[]) => {
    const p = scope.permits[kind];
    for (const f of list) {
      // A sandbox-granted read outside the state (the server's own code, a
      // declared read path) is not privilege a declaration must state.
      const ok = p === "any" ||
        (p === "state" && (f.in_state || (kind === "read" && f.allowed)));
      if (!ok) out.push(describe(kind, f.path, f.allowed));
    }
  };
  files("read", use.reads);
  files("write", use.writes);
  const named = (list: ObservedNamedAccess[]) => {
    for (const a of list) {
      const kind = (KINDS as readonly string[]).includes(a.permission)
        ? a.permission as Kind
        : null;
      if (kind === null) {
        // import and anything unknown: only refused ones are beyond scope
        if (!a.allowed && scope.source === "permissions") {
          out.push(describe(a.permission, a.value ?? "*", a.allowed));
        }
        continue;
      }
      if (scope.permits[kind] === "none") {
        out.push(describe(kind, a.value ?? "*", a.allowed));
      }
    }
  };
  named(use.env);
  named(use.net);
  named(use.other);
  return out;
}

function fileAccesses(
  v: unknown,
  file: string,
  kp: string,
): ObservedFileAccess[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw new DefinitionError(file, kp, "must be an array");
  }
  return v.map((x, i) => {
    if (
      !isPlainObject(x) || typeof x.path !== "string" ||
      typeof x.in_state !== "boolean" || typeof x.allowed !== "boolean"
    ) {
      throw new DefinitionError(
        file,
        `${kp}[${i}]`,
        "must be an object with path (string), in_state and allowed (booleans)",
      );
    }
    return { path: x.path, in_state: x.in_state, allowed: x.allowed };
  });
}

function namedAccesses(
  v: unknown,
  file: string,
  kp: string,
  kind: string | null,
): ObservedNamedAccess[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw new DefinitionError(file, kp, "must be an array");
  }
  return v.map((x, i) => {
    if (
      !isPlainObject(x) || typeof x.allowed !== "boolean" ||
      (x.value !== null && typeof x.value !== "string") ||
      (kind === null && typeof x.permission !== "string")
    ) {
      throw new DefinitionError(
        file,
        `${kp}[${i}]`,
        "must be an object with value (string or null) and allowed (boolean)",
      );
    }
    return {
      permission: kind ?? String(x.permission),
      value: x.value as string | null,
      allowed: x.allowed,
    };
  });
}

/**
 * Read an observation's `privilege` record (verity's observed records);
 * null when absent. Throws {@linkcode DefinitionError} naming the key.
 */
export function readPrivilege(
  v: unknown,
  file: string,
  kp: string,
): ObservedPrivilege | null {
  if (v === undefined || v === null) return null;
  if (!isPlainObject(v) || typeof v.seen !== "boolean") {
    throw new DefinitionError(
      file,
      kp,
      'must be an object with "seen" (boolean)',
    );
  }
  return {
    seen: v.seen,
    reads: fileAccesses(v.reads, file, `${kp}.reads`),
    writes: fileAccesses(v.writes, file, `${kp}.writes`),
    env: namedAccesses(v.env, file, `${kp}.env`, "env"),
    net: namedAccesses(v.net, file, `${kp}.net`, "net"),
    other: namedAccesses(v.other, file, `${kp}.other`, null),
  };
}
