/**
 * Why a sandboxed server died or went silent at start, when the sandbox
 * caused it: a new process refused (fork), the network denied, a path
 * hidden or unreadable, a Deno permission refused, a package missing from
 * the offline cache. Read from the server's stderr, the launch line and the
 * Deno permission log; answered as one clause naming the cause and the
 * flag or allowance that would change it. Pure.
 *
 * @module
 */
import { isWithin } from "../common/paths.ts";
import type { Launch } from "./types.ts";

const NO_SANDBOX = "or pass --no-sandbox to run it as given";

const FORK =
  /fork: (Operation not permitted|Resource temporarily unavailable)|can(no|')t fork|fork failed|spawn\S* .*EPERM|posix_spawn.*(not permitted|EPERM)|\[Errno 1\] Operation not permitted.*(fork|spawn|exec)/i;

const NETWORK =
  /\b(ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED)\b|getaddrinfo|[Nn]etwork is unreachable|[Tt]emporary failure in name resolution|[Nn]ame or service not known|[Cc]ould not resolve host|[Ff]ailed to establish a new connection/;

const MISSING_PATH =
  /No such file or directory|ENOENT|Permission denied|EACCES|can(no|')t open|not found/i;

/** What a bubblewrap line hides (`--tmpfs`) and binds back. */
function mounts(
  argv: readonly string[],
): { hidden: string[]; bound: string[] } {
  const hidden: string[] = [];
  const bound: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    if (a === "--tmpfs") hidden.push(argv[i + 1] ?? "");
    if (a === "--bind" || a === "--ro-bind" || a === "--ro-bind-try") {
      bound.push(argv[i + 2] ?? "");
    }
  }
  return {
    hidden: hidden.filter((h) => h !== ""),
    bound: bound.filter((b) => b !== "" && b !== "/"),
  };
}

/**
 * The sandbox's part in a server's failure at start, or null when nothing
 * points at the sandbox.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const launch = {
 *   backend: "bubblewrap" as const,
 *   spawn: { command: ["/bin/sh", "-c", "", "f", "bwrap", "--tmpfs", "/tmp", "--seccomp", "3", "--", "/usr/bin/x"], env: {} },
 * };
 * assert.match(
 *   sandboxCause(launch, "/usr/bin/x: fork: Operation not permitted\n", null)!,
 *   /^the sandbox refused a new process/,
 * );
 * assert.equal(sandboxCause(launch, "ValueError: bad config\n", null), null);
 * ```
 */
export function sandboxCause(
  launch: Pick<Launch, "backend" | "spawn" | "policy" | "writes">,
  stderr: string,
  auditLog: string | null,
): string | null {
  if (launch.backend === "none") return null;
  const argv = launch.spawn.command;
  const denied = /NotCapable: Requires (\w+) access to "?([^",\s]+)"?/.exec(
    stderr,
  );
  if (denied) {
    const [, kind, what] = denied;
    const how: Record<string, string> = {
      net:
        "the sandbox has no network: fetch what it needs beforehand (verity prepare)",
      read: "declare it in allow.read (a target)",
      write: "it may write only its state directory ({state})",
      run: "declare the program in allow.run (a target)",
      sys: "declare the name in allow.sys (a target)",
      env: "declare the variable (--env, or env in a target)",
      ffi:
        "native addons do not load under the deno sandbox: run it under Node (a Node target, docs/sandbox.md)",
    };
    return `the sandbox refused ${kind} access to ${what}: ${
      how[kind!] ?? "see docs/sandbox.md"
    }, ${NO_SANDBOX}`;
  }
  if (/npm package not found in cache|--cached-only/i.test(stderr)) {
    return `a package is missing from the Deno cache the server runs from offline (--cached-only): fetch it first (verity prepare <target>, or \`-- npx <package>@<version>\`), ${NO_SANDBOX}`;
  }
  if (argv.includes("--seccomp") && FORK.test(stderr)) {
    return `the sandbox refused a new process (fork): the command is a launcher or starts helpers; run the program it starts (an interpreter and its script), or declare allow.run (a target), ${NO_SANDBOX}`;
  }
  const granted = launch.policy?.net ?? [];
  const net = [
    ...(auditLog ?? "").matchAll(/"permission":"net","value":"([^"]+)"/g),
  ].map((m) => m[1]!).find((v) => !granted.includes(v));
  if (net || (argv.includes("--unshare-net") && NETWORK.test(stderr))) {
    return `the sandbox has no network${
      net ? ` (it tried ${net})` : ""
    }: an audit runs offline; fetch what the server needs beforehand (verity prepare, or \`-- npx <package>@<version>\`, which fetches into verity's cache first), ${NO_SANDBOX}`;
  }
  const mnt = mounts(argv);
  // Under an overlay the hidden directories are the session's own empty
  // layers (bound, not a tmpfs).
  const empty = launch.writes?.observed
    ? launch.writes.layout.layers.filter((l) => l.lower === null).map((l) =>
      l.at
    )
    : [];
  const hidden = [...mnt.hidden, ...empty];
  const bound = mnt.bound.filter((b) => !empty.includes(b));
  for (const line of stderr.split("\n").filter((l) => MISSING_PATH.test(l))) {
    for (const m of line.matchAll(/(\/[^\s'"`:,()[\]]+)/g)) {
      const p = m[1]!.replace(/[.;]+$/, "");
      const under = hidden.find((h) => isWithin(p, h));
      if (under !== undefined && !bound.some((b) => isWithin(p, b))) {
        return `${p} is hidden in the sandbox (${under} is empty there): declare it in allow.read (a target), ${NO_SANDBOX}`;
      }
      if (
        /Permission denied|EACCES/.test(line) && argv.includes("--reuid=65534")
      ) {
        return `the server runs as nobody (uid 65534, verity runs as root) and may not read ${p}: make it readable by others, ${NO_SANDBOX}`;
      }
    }
  }
  return null;
}
