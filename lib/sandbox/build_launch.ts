/**
 * The launch line for each sandbox backend, built from the request and a
 * few facts about the host. Pure: no `Deno.*`, no disk; `prepareLaunch` in
 * `sandbox.ts` gathers the host facts and calls {@linkcode buildLaunch}.
 *
 * @module
 */
import { SandboxError } from "./errors.ts";
import { isWithin } from "../common/paths.ts";
import type { PortRelaySpec } from "../wire/spawn_spec.ts";
import type {
  AccessKind,
  Launch,
  LaunchPolicy,
  LaunchRequest,
  OverlayLayout,
} from "./types.ts";

/** What `buildLaunch` needs to know about the machine. */
export interface HostFacts {
  /** The auditor's PATH, handed to the server unless its definition declares one. */
  path: string;
  /**
   * The auditor's home directory: bubblewrap hides it behind an empty tmpfs.
   * Null hides nothing.
   */
  home: string | null;
  /** The Deno cache servers run from (`DENO_DIR`). */
  denoDir: string;
  /** Absolute path of `bwrap`, or null when it is not installed. */
  bwrap: string | null;
  /** The POSIX shell that opens the seccomp filter on fd 3 for bwrap. */
  shell: string;
  /**
   * Absolute path of `mkfifo`: the shell makes the gate a bubblewrap server
   * waits on until its database relay listens (`connect` under bubblewrap).
   * @default {null: such a launch is refused}
   */
  mkfifo?: string | null;
  /** The seccomp filter file (see `_seccomp.ts`), or null on an unsupported architecture. */
  seccompFilter: string | null;
  /** `command[0]` as an absolute path (looked up on PATH); used by bubblewrap. */
  program: string;
  /** The program's real path (symlinks resolved): its install prefix is bound back when hidden. */
  programReal: string;
  /** Whether `command[0]` is a Deno binary. */
  programIsDeno: boolean;
  /**
   * The programs of `allow.run`, resolved: `path` as found on PATH (or as
   * given), `real` with symlinks resolved.
   * @default {[]}
   */
  allowedPrograms?: { name: string; path: string; real: string }[];
  /**
   * The directories programs are looked up in (`/usr/bin`, `/bin`, …, with
   * symlinks resolved, existing only). With a run allowance, bubblewrap
   * empties them and binds back only the server's own program and the
   * allowed ones.
   * @default {[]}
   */
  binDirs?: string[];
  /**
   * Whether bubblewrap works here: the deno backend then runs Deno inside
   * it too, with a minimal view of the file system (system directories, the
   * Deno binary and cache read-only, the definition and read paths
   * read-only, the state and evidence directories writable). Deno loads
   * modules (`import()`, JSON imports) without a read permission check, so
   * only what is mounted can be loaded.
   * @default {false}
   */
  confineDeno?: boolean;
  /**
   * Set when verity runs as root: inside bubblewrap the server drops to this
   * unprivileged uid and gid (by `setpriv`) before it starts, so it cannot
   * read root-only files; the state and evidence directories are handed to
   * that uid beforehand.
   * @default {null}
   */
  dropTo?: { setpriv: string; uid: number; gid: number } | null;
  /**
   * Local files of the server's static module graph and its Deno config
   * (absolute): the confined deno backend binds each read-only, so shared
   * code beside the definition loads while nothing else can be imported.
   * @default {[]}
   */
  moduleFiles?: string[];
  /**
   * Which of {@linkcode SYSTEM_DIRS} are symbolic links on the host, and to
   * what (e.g. `/bin` → `usr/bin` on a merged-/usr system): the minimal view
   * recreates them as links, so emptied program directories stay empty.
   * @default {{}}
   */
  systemLinks?: Record<string, string>;
  /**
   * The session's overlay, where it can be had (Linux, verity as root,
   * overlayfs): the server's whole file system is an overlay of `/` whose
   * upper layer is `dir/upper` (see {@linkcode overlayLayout}). Null: the
   * read-only view as before, writes outside the state directory unseen.
   * @default {null}
   */
  overlay?: OverlayFacts | null;
}

/** What an overlay launch needs to know beyond the request. */
export interface OverlayFacts {
  /** Absolute path of `unshare` (util-linux): the overlay's mount namespace. */
  unshare: string;
  /** Absolute path of `mount` (util-linux). */
  mount: string;
  /** The session's scratch directory for this process (absolute, empty). */
  dir: string;
  /**
   * The host's mount points other than `/` (`/proc/self/mountinfo`): an
   * overlay of `/` shows only the root file system, so each of these is
   * bound back read-only (as the read-only root showed it).
   */
  mounts: string[];
}

/** System directories of the deno backend's minimal view (each bound read-only if present). */
export const SYSTEM_DIRS: readonly string[] = [
  "/usr",
  "/lib",
  "/lib64",
  "/lib32",
  "/bin",
  "/sbin",
];

/**
 * `--perms 0755 --dir` for every ancestor of `paths` that is not
 * `provided` by a mount already: bubblewrap would otherwise create them with the
 * host's modes (0700 under /root), and an unprivileged server could not
 * reach what is bound inside them.
 */
function ancestorDirs(
  paths: readonly string[],
  provided: (dir: string) => boolean,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    const parts = p.split("/").filter((x) => x !== "");
    let cur = "";
    for (const part of parts.slice(0, -1)) {
      cur += `/${part}`;
      if (seen.has(cur)) continue;
      seen.add(cur);
      if (provided(cur)) continue;
      out.push("--perms", "0755", "--dir", cur);
    }
  }
  return out;
}

/**
 * The mount options of every overlay: no redirects, no metacopy, no index,
 * so the upper layer is plain files, whiteouts and opaque directories;
 * `volatile` (Linux 5.10): no sync of the upper layer when the namespace
 * ends (it is read once and removed).
 */
export const OVERLAY_OPTIONS =
  "redirect_dir=off,metacopy=off,index=off,xino=off,volatile";

/**
 * Where an overlay launch keeps its layers under `facts.dir`: `upper` and
 * `work` (the overlay of `/`), `root` (its mount point), and one empty
 * directory per hidden directory (`/tmp`, `/run`, the auditor's home), each
 * bound in its place, so writes there are kept too. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const l = overlayLayout({ unshare: "/usr/bin/unshare", mount: "/usr/bin/mount", dir: "/e/overlays/once-1", mounts: [] }, ["/tmp"]);
 * assert.deepEqual(l.layers.map((x) => [x.at, x.upper, x.lower]), [
 *   ["/", "/e/overlays/once-1/upper", "/"],
 *   ["/tmp", "/e/overlays/once-1/hidden-1", null],
 * ]);
 * ```
 */
export function overlayLayout(
  facts: OverlayFacts,
  hidden: readonly string[],
): OverlayLayout {
  return {
    layers: [
      { at: "/", upper: `${facts.dir}/upper`, lower: "/" },
      ...hidden.map((h, i) => ({
        at: h,
        upper: `${facts.dir}/hidden-${i + 1}`,
        lower: null,
      })),
    ],
    work: `${facts.dir}/work`,
    merged: `${facts.dir}/root`,
    scaffold: [],
    owned: [],
  };
}

/** The host mount points an overlay of `/` does not show, outermost only, outside `/proc`, `/dev`, `/sys` and `skip`. */
function otherMounts(
  mounts: readonly string[],
  skip: readonly string[],
): string[] {
  const out = unique([...mounts]).filter((m) =>
    m !== "/" &&
    !["/proc", "/dev", "/sys", ...skip].some((d) => isWithin(m, d))
  ).sort();
  return out.filter((m) => !out.some((o) => o !== m && isWithin(m, o)));
}

/** Whether `p` is on the root file system (no other mount point at or above it). */
function onRootFs(p: string, mounts: readonly string[]): boolean {
  return !mounts.some((m) => m !== "/" && isWithin(p, m));
}

/**
 * The paths a bubblewrap line makes for its own mounts (destinations and
 * their ancestors): under an overlay these appear in the upper layer, and
 * are not the server's changes.
 */
function mountScaffold(argv: readonly string[]): string[] {
  // Operands of each bubblewrap option; the last one of a mount is its destination.
  const takes: Record<string, [number, boolean]> = {
    "--bind": [2, true],
    "--bind-try": [2, true],
    "--ro-bind": [2, true],
    "--ro-bind-try": [2, true],
    "--dev": [1, true],
    "--proc": [1, true],
    "--tmpfs": [1, true],
    "--dir": [1, true],
    "--perms": [1, false],
    "--symlink": [2, false],
    "--chdir": [1, false],
    "--setenv": [2, false],
    "--seccomp": [1, false],
    "--block-fd": [1, false],
    "--cap-add": [1, false],
    "--cap-drop": [1, false],
  };
  const out = new Set<string>();
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    const t = takes[argv[i]!];
    if (t === undefined) continue;
    i += t[0];
    if (!t[1]) continue;
    for (let p = argv[i]!; p !== "/" && p !== ""; p = dirname(p)) out.add(p);
  }
  return [...out].sort();
}

/** Where programs live on a Linux host; `binDirs` is these, resolved and existing. */
export const BIN_DIRS: readonly string[] = [
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
];

/** Directories bubblewrap replaces with an empty tmpfs (besides the auditor's home). */
export const HIDDEN_DIRS: readonly string[] = ["/tmp", "/run"];

/** What each backend records as evidence. */
export const OBSERVES: Record<LaunchRequest["backend"], AccessKind[]> = {
  deno: ["net", "read", "write", "env", "ffi", "sys", "import"],
  bubblewrap: [],
  none: [],
};

/** Environment names the sandbox itself controls; a definition may not set them. */
const RESERVED_ENV = [
  "DENO_AUDIT_PERMISSIONS",
  "DENO_DIR",
  "DENO_NO_UPDATE_CHECK",
];

/** Flags of `deno run` that take their value as the next argument. */
export const DENO_VALUE_FLAGS: ReadonlySet<string> = new Set([
  "-c",
  "--config",
  "--import-map",
  "--location",
  "--seed",
  "--cert",
  "--ext",
  "--node-modules-linker",
  "--min-dep-age",
  "--inspect-publish-uid",
  "--preload",
  "--require",
  "--conditions",
  "-L",
  "--log-level",
]);

/** Why a `deno run` flag in a definition's command is refused, or null when it is allowed. */
export function refusedDenoFlag(flag: string): string | null {
  const permission = "permission flags are set by the deno backend";
  const reload =
    "reloading fetches from the network; servers run --cached-only";
  if (!flag.startsWith("--")) {
    const c = flag[1] ?? "";
    if ("ARWNESIP".includes(c) && c !== "") return permission;
    return c === "r" ? reload : null;
  }
  const name = flag.split("=")[0] ?? flag;
  if (/^--(allow|deny|ignore)-/.test(name) || name === "--permission-set") {
    return permission;
  }
  if (name.startsWith("--inspect") && name !== "--inspect-publish-uid") {
    return "the inspector opens a network port";
  }
  return name === "--reload" ? reload : null;
}

/** The basename of a path. */
function basename(p: string): string {
  const i = p.lastIndexOf("/");
  return i === -1 ? p : p.slice(i + 1);
}

/** The directory part of a path ("/" for a top-level entry). */
function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/** Whether `program` names a Deno binary: the resolved `{deno}`, or anything called `deno`. */
export function isDenoProgram(program: string, deno: string): boolean {
  return program === deno || /^deno(\.exe)?$/.test(basename(program));
}

/**
 * Split `deno run <flags> <script> <args>` into its parts, refusing flags
 * that would widen the sandbox or reach the network.
 */
export function splitDenoRun(
  command: readonly string[],
): { flags: string[]; script: string; args: string[] } {
  if (command[1] !== "run") {
    throw new SandboxError(
      `deno backend: the command must be "deno run …", got ${
        JSON.stringify(command.slice(0, 2).join(" "))
      }`,
    );
  }
  const flags: string[] = [];
  let i = 2;
  for (; i < command.length; i++) {
    const a = command[i]!;
    if (a === "--" || !a.startsWith("-") || a === "-") break;
    const why = refusedDenoFlag(a);
    if (why !== null) {
      throw new SandboxError(
        `deno backend: command flag ${
          JSON.stringify(a)
        } is not allowed: ${why}`,
      );
    }
    flags.push(a);
    if (DENO_VALUE_FLAGS.has(a) && i + 1 < command.length) {
      flags.push(command[++i]!);
    }
  }
  if (command[i] === "--") i++;
  const script = command[i];
  if (script === undefined) {
    throw new SandboxError(
      `deno backend: no script in ${JSON.stringify(command.join(" "))}`,
    );
  }
  return { flags, script, args: command.slice(i + 1) };
}

function checkEnvName(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new SandboxError(
      `env: ${JSON.stringify(name)} is not a valid environment variable name`,
    );
  }
}

function checkListValue(what: string, v: string): void {
  if (v.includes(",")) {
    throw new SandboxError(
      `${what} ${
        JSON.stringify(v)
      } contains a comma, which Deno's permission lists cannot carry`,
    );
  }
}

/**
 * The server's environment: its declared `env` plus a minimal base. `HOME`
 * is the state directory (anything a server keeps "at home" is observed
 * state), `PATH` the auditor's unless declared, and `VERITY_STATE_DIR` the
 * state directory. When the program is Deno, `DENO_DIR` points at the
 * prepared cache (HOME moved, so Deno would not find it) and update checks
 * are off.
 */
export function serverEnv(
  req: LaunchRequest,
  host: HostFacts,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.env)) {
    checkEnvName(k);
    if (RESERVED_ENV.includes(k)) {
      throw new SandboxError(
        `env: ${k} is set by the sandbox and may not be declared`,
      );
    }
    if (k === "VERITY_STATE_DIR" && v !== req.stateDir) {
      throw new SandboxError(
        `env: VERITY_STATE_DIR must be the state directory ${req.stateDir}, got ${
          JSON.stringify(v)
        }`,
      );
    }
    if (k === "HOME" && !isWithin(v, req.stateDir)) {
      throw new SandboxError(
        `env: HOME must point inside the state directory, got ${
          JSON.stringify(v)
        }`,
      );
    }
    env[k] = v;
  }
  env.PATH = req.env.PATH ?? host.path;
  env.HOME = req.env.HOME ?? req.stateDir;
  env.VERITY_STATE_DIR = req.stateDir;
  if (host.programIsDeno) {
    env.DENO_DIR = host.denoDir;
    env.DENO_NO_UPDATE_CHECK = "1";
    env.NO_COLOR = req.env.NO_COLOR ?? "1";
  }
  return env;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** The server's working directory: the request's `cwd`, checked to be readable. */
function cwdOf(req: LaunchRequest): string {
  const cwd = req.cwd ?? req.definitionDir;
  if (!cwd.startsWith("/")) {
    throw new SandboxError(
      `cwd ${JSON.stringify(cwd)} must be an absolute path`,
    );
  }
  const ok = [req.definitionDir, req.stateDir, ...req.readPaths].some((d) =>
    isWithin(cwd, d)
  );
  if (!ok) {
    throw new SandboxError(
      `cwd ${
        JSON.stringify(cwd)
      } is outside what the server may read (the definition directory, the state directory, read paths): add it to allow.read`,
    );
  }
  return cwd;
}

function allowOf(req: LaunchRequest): { sys: string[]; run: string[] } {
  return { sys: req.allow?.sys ?? [], run: req.allow?.run ?? [] };
}

/** The absolute paths (as found and real) of the programs `allow.run` names. */
function allowedRunPaths(req: LaunchRequest, host: HostFacts): string[] {
  const want = allowOf(req).run;
  const have = host.allowedPrograms ?? [];
  for (const name of want) {
    if (!have.some((p) => p.name === name)) {
      throw new SandboxError(
        `allow.run: program ${JSON.stringify(name)} was not resolved on PATH`,
      );
    }
  }
  return unique(
    have.filter((p) => want.includes(p.name)).flatMap((p) => [p.path, p.real]),
  );
}

function buildDeno(req: LaunchRequest, host: HostFacts): Launch {
  if (!host.programIsDeno) {
    throw new SandboxError(
      `deno backend: ${
        JSON.stringify(req.command[0] ?? "")
      } is not deno; use sandbox = "bubblewrap" for other commands`,
    );
  }
  if (!/^[A-Za-z0-9._-]+$/.test(req.label)) {
    throw new SandboxError(
      `launch label ${
        JSON.stringify(req.label)
      } must be letters, digits, ".", "_" or "-"`,
    );
  }
  const { flags, script, args } = splitDenoRun(req.command);
  const env = serverEnv(req, host);
  const auditLog = `${req.evidenceDir}/${req.label}.permissions.jsonl`;
  env.DENO_AUDIT_PERMISSIONS = auditLog;
  const readable = unique([
    req.definitionDir,
    req.stateDir,
    ...req.readPaths,
    `${host.denoDir}/npm`,
  ]);
  const envNames = unique([
    ...Object.keys(req.env),
    "HOME",
    "PATH",
    "VERITY_STATE_DIR",
  ]).sort();
  const sockets = req.sockets ?? [];
  for (const p of readable) checkListValue("read path", p);
  for (const p of sockets) checkListValue("socket", p);
  checkListValue("state directory", req.stateDir);
  const allow = allowOf(req);
  const runPaths = allowedRunPaths(req, host);
  for (const p of runPaths) checkListValue("allow.run program", p);
  const listen = listenAddresses(req);
  // Granted destinations: an HTTP server's own listening address, the run's
  // database socket (connecting to it also needs read and write on the file)
  // or its loopback port.
  const netGrants = [
    ...listen,
    ...sockets.map((s) => `unix:${s}`),
    ...(req.connect ?? []).map((c) => `127.0.0.1:${c.port}`),
  ];
  const hasLockFlag = flags.some((f) =>
    /^--(lock|no-lock|frozen)(=|$)/.test(f)
  );
  const lazyFlag = "--unstable-lazy-dynamic-imports";
  const ours = [
    "--no-prompt",
    "--cached-only",
    // A literal `import("../secret.json")` is in the static graph, which
    // Deno loads without a permission check: loaded lazily, it is checked
    // against --allow-read (and logged) like any other read.
    ...(flags.includes(lazyFlag) ? [] : [lazyFlag]),
    ...(hasLockFlag ? [] : ["--no-lock"]),
    ...(netGrants.length
      ? [`--allow-net=${netGrants.join(",")}`]
      : ["--deny-net"]),
    ...(runPaths.length ? [`--allow-run=${runPaths.join(",")}`] : [
      "--deny-run",
    ]),
    "--deny-ffi",
    ...(allow.sys.length ? [`--allow-sys=${allow.sys.join(",")}`] : []),
    `--allow-read=${[...readable, ...sockets].join(",")}`,
    `--allow-write=${[req.stateDir, ...sockets].join(",")}`,
    `--allow-env=${envNames.join(",")}`,
    "--ignore-env",
  ];
  const policy: LaunchPolicy = {
    writable: [req.stateDir, ...sockets],
    readable: [...readable, ...sockets],
    env: envNames,
    sys: allow.sys,
    run: runPaths,
    ...(netGrants.length ? { net: netGrants } : {}),
  };
  const cwd = cwdOf(req);
  // Deno does not confine the programs it starts: a run allowance puts the
  // whole server inside bubblewrap too, so they get the OS walls. There the
  // program is named by the path it was found at: PATH inside is not the host's.
  const confined = runPaths.length > 0 || host.confineDeno === true;
  const exe = confined && host.program.startsWith("/")
    ? host.program
    : req.command[0]!;
  const inner = [exe, "run", ...ours, ...flags, script, ...args];
  const wrapped = confined ? bubblewrapArgv(req, host, inner, env, cwd) : null;
  return {
    spawn: { command: wrapped?.argv ?? inner, env, cwd },
    backend: "deno",
    auditLog,
    seesNetwork: true,
    policy,
    observes: OBSERVES.deno,
    ...captured(wrapped?.overlay),
  };
}

/**
 * The addresses an HTTP server may listen on: its own port on the loopback
 * names and the wildcard address (a server that binds every interface is
 * still reached on loopback); no other host and no other port.
 */
function listenAddresses(req: LaunchRequest): string[] {
  if (req.listen === undefined) return [];
  if (!Number.isInteger(req.listen) || req.listen < 1 || req.listen > 65535) {
    throw new SandboxError(`listen port ${req.listen} is not a TCP port`);
  }
  return ["127.0.0.1", "localhost", "0.0.0.0", "[::1]", "[::]"].map((h) =>
    `${h}:${req.listen}`
  );
}

/**
 * A `deno run` command outside the deno backend has no permission flags (the
 * definition leaves them to the backend), so it gets `--allow-all`: under
 * bubblewrap the OS confines it, under `none` the user chose no sandbox. It
 * still runs `--cached-only` and never writes the project's lockfile.
 */
function passThroughDeno(
  command: readonly string[],
  program: string,
  host: HostFacts,
): string[] {
  if (!host.programIsDeno || command[1] !== "run") {
    return [program, ...command.slice(1)];
  }
  const { flags } = splitDenoRun(command);
  const hasLockFlag = flags.some((f) =>
    /^--(lock|no-lock|frozen)(=|$)/.test(f)
  );
  return [
    program,
    "run",
    "--allow-all",
    "--no-prompt",
    "--cached-only",
    ...(hasLockFlag ? [] : ["--no-lock"]),
    ...command.slice(2),
  ];
}

/**
 * The bubblewrap line: read-only root, fresh /dev and /proc, empty tmpfs over
 * /tmp, /run and the auditor's home, the definition's directory and read
 * paths bound back read-only, the state directory bound writable, new user,
 * IPC, PID, network, UTS and cgroup namespaces, no capabilities, die with
 * the parent, a scrubbed environment, and a seccomp filter that refuses to
 * create processes. The filter is handed over on fd 3 by a POSIX shell,
 * because Deno cannot pass extra file descriptors to a child.
 */
/**
 * The bubblewrap argument vector around `inner` (see {@linkcode buildBubblewrap}).
 * With a run allowance, no process-creation filter is loaded and the
 * program directories are emptied, with only the server's program (and
 * Deno) and the allowed programs bound back; `argv` then starts with bwrap.
 * Without one, `argv` is the shell line that loads the filter on fd 3.
 * A server in its own network namespace that connects to loopback ports
 * (`connect`: the run's database) is held: the shell makes a FIFO (the
 * gate) and opens it on fd 4, bubblewrap blocks on it (`--block-fd 4`)
 * before the server starts, and `portRelay` tells the spawner to start the
 * relay in that namespace, which opens the gate once it listens.
 */
function bubblewrapArgv(
  req: LaunchRequest,
  host: HostFacts,
  inner: string[],
  env: Record<string, string>,
  cwd: string,
): { argv: string[]; portRelay?: PortRelaySpec; overlay?: OverlayLayout } {
  if (host.bwrap === null) {
    throw new SandboxError(
      allowOf(req).run.length && req.backend === "deno"
        ? "allow.run under the deno backend needs bubblewrap to confine the programs the server starts (apt-get install -y bubblewrap)"
        : "bubblewrap backend: bwrap is not installed (apt-get install -y bubblewrap), or pass --no-sandbox",
    );
  }
  const runPaths = allowedRunPaths(req, host);
  const filtered = runPaths.length === 0;
  if (filtered && host.seccompFilter === null) {
    throw new SandboxError(
      "bubblewrap backend: no process-creation filter for this CPU architecture",
    );
  }
  // The deno backend sees a minimal file system; other commands a
  // read-only root with /tmp, /run and the auditor's home hidden.
  const minimal = req.backend === "deno";
  const hidden = minimal ? ["/tmp"] : [...HIDDEN_DIRS];
  if (
    !minimal && host.home !== null && host.home !== "/" && host.home !== ""
  ) {
    hidden.push(host.home);
  }
  // The run's work directory holds every other session's state: under the
  // read-only root a server as the auditor's uid could read it (hardening,
  // round three). The minimal view never shows it.
  if (!minimal) {
    for (const h of req.hide ?? []) {
      if (!hidden.some((x) => isWithin(h, x))) hidden.push(h);
    }
  }
  const isHidden = (p: string): boolean =>
    minimal || hidden.some((h) => isWithin(p, h));
  const drop = host.dropTo ?? null;
  // With an overlay, the hidden directories (not the run's own) are empty
  // directories of the session's instead of tmpfs: writes there are kept.
  const ov = host.overlay ?? null;
  const kept = ov === null
    ? []
    : hidden.filter((h) => !(req.hide ?? []).includes(h));
  const layout = ov === null ? null : overlayLayout(ov, kept);
  const mounts = ov?.mounts ?? [];
  // A path the server's own (code, system directories) comes from the
  // overlay, writable there; the toolchain and other mounts from the host.
  const fromOverlay = (p: string) => layout !== null && onRootFs(p, mounts);
  const view = (p: string) => fromOverlay(p) ? `${layout!.merged}${p}` : p;
  // A server with a network namespace of its own that must reach the run's
  // database on a loopback port: bubblewrap holds it (--block-fd 4, a FIFO
  // the shell makes) until the relay listens there (lib/wire/port_relay.ts).
  const ownNetwork = !(req.backend === "deno" &&
    (req.listen !== undefined || (req.sockets ?? []).length > 0 ||
      (req.connect ?? []).length > 0));
  const connect = ownNetwork ? req.connect ?? [] : [];
  const gate = connect.length > 0 ? gatePath(req) : null;
  if (gate !== null && !host.mkfifo) {
    throw new SandboxError(
      "bubblewrap backend: mkfifo (coreutils) is missing: a server that connects to the database over TCP cannot be held until its relay listens",
    );
  }
  for (const c of connect) {
    if (!Number.isInteger(c.port) || c.port < 1 || c.port > 65535) {
      throw new SandboxError(`connect port ${c.port} is not a TCP port`);
    }
    if (!c.socket.startsWith("/")) {
      throw new SandboxError(
        `connect socket ${JSON.stringify(c.socket)} must be an absolute path`,
      );
    }
  }
  const argv: string[] = [
    host.bwrap,
    // As root a user namespace would map the server back to uid 0; it drops
    // to an unprivileged uid instead (setpriv, below).
    ...(drop === null ? ["--unshare-user-try"] : []),
    "--unshare-ipc",
    "--unshare-pid",
    // A Deno server that listens (HTTP) or talks over a socket keeps the
    // host's network namespace: Deno's scoped --allow-net is its wall there.
    ...(ownNetwork ? ["--unshare-net"] : []),
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    ...(drop === null
      ? []
      : ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]),
  ];
  const covered: string[] = [];
  if (minimal) {
    const links = host.systemLinks ?? {};
    // System directories stay the host's, read-only: the server's uid
    // could write nothing there, overlay or not.
    for (const d of SYSTEM_DIRS) {
      if (!Object.hasOwn(links, d)) argv.push("--ro-bind-try", d, d);
    }
    for (const d of SYSTEM_DIRS) {
      if (Object.hasOwn(links, d)) argv.push("--symlink", links[d]!, d);
    }
    covered.push(...SYSTEM_DIRS);
  } else if (layout !== null) {
    argv.push("--bind", layout.merged, "/", "--ro-bind-try", "/sys", "/sys");
    for (const m of otherMounts(mounts, hidden)) argv.push("--ro-bind", m, m);
  } else {
    argv.push("--ro-bind", "/", "/");
  }
  argv.push("--dev", "/dev", "--proc", "/proc");
  covered.push("/dev", "/proc");
  for (const h of hidden) {
    const i = kept.indexOf(h);
    if (i === -1) argv.push("--tmpfs", h);
    else argv.push("--bind", layout!.layers[i + 1]!.upper, h);
  }
  if (!filtered) {
    // Processes may be created, so only declared programs may be found:
    // the program directories are emptied and the allowed ones bound back.
    const binDirs = host.binDirs ?? [];
    for (const d of binDirs) argv.push("--tmpfs", d);
    const keep: [string, string][] = [];
    const add = (path: string, real: string) => {
      for (const p of unique([path, real])) {
        if (binDirs.some((d) => isWithin(p, d))) keep.push([real, p]);
      }
    };
    add(host.program, host.programReal);
    // setpriv starts the server as the unprivileged uid (verity as root).
    if (drop !== null) add(drop.setpriv, drop.setpriv);
    for (const p of host.allowedPrograms ?? []) {
      if (allowOf(req).run.includes(p.name)) add(p.path, p.real);
    }
    const seen = new Set<string>();
    for (const [src, dst] of keep) {
      if (seen.has(dst)) continue;
      seen.add(dst);
      argv.push("--ro-bind", src, dst);
    }
  }
  // The program's install prefix (e.g. a Python under ~/.pyenv) and, for
  // Deno, its cache, when they sit in a hidden directory (in the minimal
  // view: always).
  const optional: string[] = [];
  const prefix = dirname(dirname(host.programReal));
  const tree = prefix === "/" ? dirname(host.programReal) : prefix;
  if (
    isHidden(host.programReal) &&
    !covered.some((c) => isWithin(host.programReal, c)) &&
    // A prefix holding a hidden directory (a program in ~/bin) would show it.
    !hidden.some((h) => isWithin(h, tree))
  ) {
    optional.push(tree);
  }
  if (host.programIsDeno && isHidden(host.denoDir)) optional.push(host.denoDir);
  // A program found through a symlink in a hidden directory (an npm-installed
  // deno under ~/.cache) is shown there as the file the link names.
  const link = host.program !== host.programReal &&
      host.program.startsWith("/") && isHidden(host.program) &&
      !covered.some((c) => isWithin(host.program, c))
    ? host.program
    : null;
  const readOnly = unique([
    req.definitionDir,
    ...req.readPaths,
    ...(minimal
      ? (host.moduleFiles ?? []).filter((f) =>
        !isWithin(f, req.definitionDir) &&
        !req.readPaths.some((r) => isWithin(f, r))
      )
      : []),
  ]);
  const writable = [
    ...(req.backend === "deno" ? [req.evidenceDir] : []),
    req.stateDir,
  ];
  if (minimal || drop !== null) {
    argv.push(
      ...ancestorDirs(
        [
          ...unique(optional),
          ...(link === null ? [] : [link]),
          ...readOnly,
          ...writable,
          ...unique(req.sockets ?? []),
        ],
        minimal
          ? (d) => covered.some((c) => isWithin(d, c))
          // Under the read-only root only what a tmpfs hid must be made.
          : (d) => !hidden.some((h) => d !== h && isWithin(d, h)),
      ),
    );
  }
  for (const p of unique(optional)) argv.push("--ro-bind-try", p, p);
  if (link !== null) argv.push("--ro-bind", host.programReal, link);
  for (const p of readOnly) {
    // Under the overlay's root a path it shows needs no mount of its own.
    if (!minimal && fromOverlay(p) && !isHidden(p)) continue;
    argv.push(fromOverlay(p) ? "--bind" : "--ro-bind", view(p), p);
  }
  // Deno inside bubblewrap writes its permission log in the evidence directory.
  for (const p of writable) argv.push("--bind", p, p);
  // The overlay's own directories stay out of the server's reach.
  if (ov !== null && writable.some((w) => isWithin(ov.dir, w))) {
    argv.push("--tmpfs", dirname(ov.dir));
  }
  for (const so of unique(req.sockets ?? [])) argv.push("--bind", so, so);
  argv.push("--chdir", cwd, "--clearenv");
  for (const k of Object.keys(env).sort()) argv.push("--setenv", k, env[k]!);
  const run = drop === null ? inner : [
    drop.setpriv,
    `--reuid=${drop.uid}`,
    `--regid=${drop.gid}`,
    "--clear-groups",
    "--",
    ...inner,
  ];
  const relay = gate === null ? {} : { portRelay: { gate, connect } };
  if (gate !== null) argv.push("--block-fd", "4");
  let line: string[];
  if (!filtered) {
    argv.push("--", ...run);
    line = gate === null ? argv : [
      host.shell,
      "-c",
      '"$0" -m 600 "$1" && exec 4<>"$1" && shift && exec "$@"',
      host.mkfifo!,
      gate,
      ...argv,
    ];
  } else {
    argv.push("--seccomp", "3", "--", ...run);
    line = gate === null
      ? [host.shell, "-c", 'exec 3<"$0" && exec "$@"', host.seccompFilter!]
      : [
        host.shell,
        "-c",
        '"$1" -m 600 "$2" && exec 3<"$0" 4<>"$2" && shift 2 && exec "$@"',
        host.seccompFilter!,
        host.mkfifo!,
        gate,
      ];
    line.push(...argv);
  }
  if (layout === null) return { argv: line, ...relay };
  const overlay = {
    ...layout,
    scaffold: mountScaffold(argv),
    owned: unique([req.definitionDir, ...req.readPaths]).filter((p) =>
      fromOverlay(p) && !(req.programTrees ?? []).includes(p)
    ),
  };
  return {
    argv: overlayLine(ov!, host.shell, overlay, line),
    ...relay,
    overlay,
  };
}

/**
 * `line` run in a mount namespace of its own where the overlay of `/` is
 * mounted first (`unshare --mount`, then `mount -t overlay`, then `exec`:
 * no extra process remains). bubblewrap 0.8 has no overlay option.
 */
function overlayLine(
  ov: OverlayFacts,
  shell: string,
  l: OverlayLayout,
  line: readonly string[],
): string[] {
  const upper = l.layers[0]!.upper;
  for (const p of [upper, l.work, l.merged]) {
    if (/[,:\\]/.test(p)) {
      throw new SandboxError(
        `overlay directory ${
          JSON.stringify(p)
        } has a comma, colon or backslash, which overlay mount options cannot carry`,
      );
    }
  }
  const mount =
    `"$0" -t overlay -o "lowerdir=/,upperdir=$1,workdir=$2,${OVERLAY_OPTIONS}" verity-overlay "$3" && shift 3 && `;
  // A line that is itself `sh -c <script> <$0> ...` (the seccomp filter's
  // opener) runs in the same shell: its arguments follow ours, one place on.
  const inner = line[0] === shell && line[1] === "-c" ? line[2]! : null;
  const script = inner === null
    ? `${mount}exec "$@"`
    : mount + inner.replace(/"\$(\d)"/g, (_, d) => `"$${Number(d) + 1}"`)
      .replace(/\bshift( \d)?/, (_, n) => `shift ${Number(n ?? 1) + 1}`)
      .replace(/^(?!.*\bshift\b)(.*)exec "\$@"$/, '$1shift && exec "$@"');
  return [
    ov.unshare,
    "--mount",
    "--propagation",
    "private",
    "--",
    shell,
    "-c",
    script,
    ov.mount,
    upper,
    l.work,
    l.merged,
    ...(inner === null ? line : line.slice(3)),
  ];
}

/**
 * The FIFO a held bubblewrap server waits on: in the evidence directory
 * (verity's, per session), named after the launch label.
 */
function gatePath(req: LaunchRequest): string {
  if (!/^[A-Za-z0-9._-]+$/.test(req.label)) {
    throw new SandboxError(
      `launch label ${
        JSON.stringify(req.label)
      } must be letters, digits, ".", "_" or "-"`,
    );
  }
  if (!req.evidenceDir.startsWith("/")) {
    throw new SandboxError(
      `evidence directory ${
        JSON.stringify(req.evidenceDir)
      } must be an absolute path`,
    );
  }
  return `${req.evidenceDir}/${req.label}.gate`;
}

/**
 * The bubblewrap line: read-only root, fresh /dev and /proc, empty tmpfs over
 * /tmp, /run and the auditor's home, the definition's directory and read
 * paths bound back read-only, the state directory bound writable, new user,
 * IPC, PID, network, UTS and cgroup namespaces, no capabilities, die with
 * the parent, a scrubbed environment, and a seccomp filter that refuses to
 * create processes. The filter is handed over on fd 3 by a POSIX shell,
 * because Deno cannot pass extra file descriptors to a child. A run
 * allowance replaces the filter with emptied program directories (see
 * {@linkcode bubblewrapArgv}).
 */
function buildBubblewrap(req: LaunchRequest, host: HostFacts): Launch {
  const env = serverEnv(req, host);
  const cwd = cwdOf(req);
  const { argv, portRelay, overlay } = bubblewrapArgv(
    req,
    host,
    passThroughDeno(req.command, host.program, host),
    env,
    cwd,
  );
  const allow = allowOf(req);
  return {
    spawn: { command: argv, env, cwd, ...(portRelay ? { portRelay } : {}) },
    backend: "bubblewrap",
    auditLog: null,
    seesNetwork: false,
    policy: {
      writable: [req.stateDir],
      readable: ["/"],
      env: Object.keys(env).sort(),
      sys: allow.sys,
      run: allowedRunPaths(req, host),
      // The run's database, relayed into the server's network namespace.
      ...(portRelay
        ? { net: portRelay.connect.map((c) => `127.0.0.1:${c.port}`) }
        : {}),
    },
    observes: OBSERVES.bubblewrap,
    ...captured(overlay),
  };
}

/** A launch's `writes` when it has an overlay (otherwise `prepareLaunch` says why not). */
function captured(overlay: OverlayLayout | undefined): Pick<Launch, "writes"> {
  return overlay ? { writes: { observed: true, layout: overlay } } : {};
}

/**
 * Build the launch for `req` on a host described by `host`.
 *
 * @example
 * ```ts
 * const launch = buildLaunch({
 *   command: ["/usr/bin/deno", "run", "server.ts"], env: {}, stateDir: "/s",
 *   definitionDir: "/d", readPaths: [], backend: "deno", evidenceDir: "/e", label: "once-1",
 * }, {
 *   path: "/usr/bin", home: "/home/me", denoDir: "/home/me/.cache/deno", bwrap: null,
 *   shell: "/bin/sh", seccompFilter: null, program: "/usr/bin/deno",
 *   programReal: "/usr/bin/deno", programIsDeno: true,
 * });
 * console.assert(launch.spawn.command.includes("--deny-net"));
 * ```
 */
export function buildLaunch(req: LaunchRequest, host: HostFacts): Launch {
  if (req.command.length === 0) throw new SandboxError("empty server command");
  for (
    const [what, p] of [["state directory", req.stateDir], [
      "definition directory",
      req.definitionDir,
    ]] as const
  ) {
    if (!p.startsWith("/")) {
      throw new SandboxError(
        `${what} ${JSON.stringify(p)} must be an absolute path`,
      );
    }
  }
  for (const p of req.readPaths) {
    if (!p.startsWith("/")) {
      throw new SandboxError(
        `read path ${JSON.stringify(p)} must be an absolute path`,
      );
    }
  }
  if (req.backend === "deno") return buildDeno(req, host);
  if (req.backend === "bubblewrap") return buildBubblewrap(req, host);
  const env = serverEnv(req, host);
  return {
    spawn: {
      command: passThroughDeno(req.command, req.command[0]!, host),
      env,
      cwd: cwdOf(req),
    },
    backend: "none",
    auditLog: null,
    seesNetwork: false,
    policy: { writable: ["/"], readable: ["/"], env: Object.keys(env).sort() },
    observes: OBSERVES.none,
  };
}
