/**
 * The sandbox edge: turns a {@linkcode LaunchRequest} into the exact process
 * line that runs an untrusted server, probes which backends work here, and
 * reads the evidence Deno leaves behind.
 *
 * - `deno`: `deno run` with `--deny-net`, `--allow-write=<state>`, read
 *   limited to what the server needs, `--allow-env=<declared>`, `--deny-run`,
 *   `--deny-ffi`, `--no-prompt`, `--cached-only`, and a
 *   `DENO_AUDIT_PERMISSIONS` log per process: the evidence of attempts.
 * - `bubblewrap`: any other command on Linux (see `build_launch.ts`).
 * - `none`: only the environment is scrubbed.
 *
 * The decisions live in the pure `build_launch.ts`, `choose_backend.ts` and
 * `audit_log.ts`; this file only gathers facts from the host.
 *
 * @module
 */
import {
  BIN_DIRS,
  buildLaunch,
  type HostFacts,
  isDenoProgram,
  OVERLAY_OPTIONS,
  splitDenoRun,
  SYSTEM_DIRS,
} from "./build_launch.ts";
import { noProcessFilter, seccompArch } from "./_seccomp.ts";
import { SandboxError } from "./errors.ts";
import { isWithin } from "../common/paths.ts";
import { ownerText, SCRATCH_OWNER, selfOwner } from "../common/owner.ts";
import type { Launch, LaunchRequest, OverlayLayout } from "./types.ts";
import { launchEvidence, type SandboxEvidence } from "./audit_log.ts";
import { hiddenAncestors, resolveProgram } from "./shims.ts";
import { sandboxCause } from "./cause.ts";

export { SandboxError } from "./errors.ts";
export { readAuditLog } from "./audit_log.ts";
export type { Attempt, SandboxEvidence } from "./audit_log.ts";
export { chooseBackend } from "./choose_backend.ts";
export type * from "./types.ts";

/** Look `name` up on a PATH string; absolute path of the first executable file, or null. */
export function findOnPath(name: string, path: string): string | null {
  if (name.includes("/")) return name;
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    const candidate = `${dir}/${name}`;
    try {
      const st = Deno.statSync(candidate);
      if (st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The deno binary that `{deno}` stands for: `Deno.execPath()` when verity
 * runs from source; in a compiled verity binary, `VERITY_DENO` or `deno` on
 * PATH.
 *
 * Requires `--allow-env` and `--allow-read`.
 *
 * @example
 * ```ts ignore
 * const deno = resolveDeno(); // e.g. "/usr/local/bin/deno"
 * ```
 */
export function resolveDeno(): string {
  const exec = Deno.execPath();
  if (!Deno.build.standalone) return exec;
  const fromEnv = Deno.env.get("VERITY_DENO");
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const onPath = findOnPath("deno", Deno.env.get("PATH") ?? "");
  if (onPath !== null) return onPath;
  throw new SandboxError(
    "verity: no deno to run Deno servers with: set VERITY_DENO=/path/to/deno or put deno on PATH (npx -y deno@2.9.6 installs one)",
  );
}

/**
 * The Node.js binary that `{node}` stands for: `node` on PATH, a version
 * manager's shim resolved (see `shims.ts`), symlinks resolved.
 * Throws {@linkcode SandboxError} when there is none.
 *
 * Requires `--allow-env` and `--allow-read`.
 */
export function resolveNode(): string {
  const onPath = findOnPath("node", Deno.env.get("PATH") ?? "");
  if (onPath === null) {
    throw new SandboxError(
      "verity: {node} is used but there is no node on PATH (install Node.js)",
    );
  }
  return realPathOr(resolveProgram(onPath, Deno.cwd()).program);
}

/**
 * The Deno cache directory the way Deno picks it: `DENO_DIR`, else
 * `$XDG_CACHE_HOME/deno`, else `~/Library/Caches/deno` (macOS) or
 * `~/.cache/deno`.
 *
 * Requires `--allow-env`.
 */
export function defaultDenoDir(): string {
  const env = (k: string): string | undefined => {
    const v = Deno.env.get(k);
    return v === undefined || v === "" ? undefined : v;
  };
  const dir = env("DENO_DIR");
  if (dir !== undefined) return dir;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg !== undefined) return `${xdg}/deno`;
  const home = env("HOME") ?? "/";
  return Deno.build.os === "darwin"
    ? `${home}/Library/Caches/deno`
    : `${home}/.cache/deno`;
}

function realPath(what: string, p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    throw new SandboxError(`${what} ${JSON.stringify(p)} does not exist`);
  }
}

function realPathOr(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

/** Write `bytes` to `path` unless it already holds them: temp file + rename, safe under parallel sessions. */
function writeOnce(path: string, bytes: Uint8Array): void {
  try {
    const have = Deno.readFileSync(path);
    if (have.length === bytes.length && have.every((b, i) => b === bytes[i])) {
      return;
    }
  } catch {
    // absent
  }
  const tmp = `${path}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
  Deno.writeFileSync(tmp, bytes, { mode: 0o644 });
  Deno.renameSync(tmp, path);
}

/** A Deno server's module graph, as {@linkcode staticModuleFiles} reads it. */
export interface ModuleGraphFiles {
  /** Local files of the graph outside DENO_DIR (real paths). */
  modules: string[];
  /** The Deno config its directory resolves imports with, if any. */
  config: string | null;
  /** The script's own directory (real path); null for a remote script. */
  scriptDir: string | null;
  /**
   * The nearest directory at or above the script holding a `deno.json`,
   * `deno.jsonc` or `package.json`: the server's package.
   */
  packageRoot: string | null;
}

const moduleFilesCache = new Map<string, ModuleGraphFiles>();

/**
 * The local files a Deno server's static module graph loads (`deno info`,
 * which lists literal `import()`s too), the Deno config file its directory
 * resolves imports with, and the script's directory. Cached per script.
 */
function staticModuleFiles(
  command: readonly string[],
  cwd: string,
  denoDir: string,
  deno: string,
): ModuleGraphFiles {
  let script: string;
  try {
    script = splitDenoRun(command).script;
  } catch {
    return { modules: [], config: null, scriptDir: null, packageRoot: null };
  }
  const key = `${cwd}\u0000${script}\u0000${denoDir}`;
  const hit = moduleFilesCache.get(key);
  if (hit !== undefined) return hit;
  const files: string[] = [];
  let config: string | null = null;
  const local = !/^[a-z][a-z0-9+.-]*:/i.test(script) ||
    script.startsWith("file:");
  if (local && deno !== "") {
    try {
      const out = new Deno.Command(deno, {
        args: ["info", "--json", "--no-lock", script],
        cwd,
        env: { DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      if (out.code === 0) {
        const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
          modules?: { specifier?: string; local?: string }[];
        };
        for (const m of info.modules ?? []) {
          if (
            m.specifier?.startsWith("file:") && typeof m.local === "string" &&
            !m.local.startsWith(denoDir + "/")
          ) files.push(realPathOr(m.local));
        }
      }
    } catch {
      // no graph: only the definition directory is visible
    }
  }
  // The config Deno discovers from the script's directory upwards.
  let dir = local
    ? realPathOr(
      script.startsWith("/") || script.startsWith("file:")
        ? script.replace(/^file:\/\//, "")
        : `${cwd}/${script}`,
    ).replace(/\/[^/]*$/, "")
    : cwd;
  const scriptDir = local ? dir : null;
  const isFile = (f: string) => {
    try {
      return Deno.statSync(f).isFile;
    } catch {
      return false;
    }
  };
  let packageRoot: string | null = null;
  while (dir !== "") {
    const found = ["deno.json", "deno.jsonc"].map((n) => `${dir}/${n}`).find(
      isFile,
    );
    if (packageRoot === null && (found || isFile(`${dir}/package.json`))) {
      packageRoot = dir;
    }
    if (found !== undefined) {
      config = found;
      break;
    }
    dir = dir.replace(/\/[^/]*$/, "");
  }
  const out = {
    modules: [...new Set(files)],
    config,
    scriptDir,
    packageRoot: local ? packageRoot : null,
  };
  moduleFilesCache.set(key, out);
  return out;
}

/**
 * Which files of a server's module graph the confined deno backend binds:
 * only its own package's, that is under the definition directory, a
 * declared read path, the script's directory or its package root (the
 * nearest directory above it with a `deno.json`, `deno.jsonc` or
 * `package.json`; not when that is `/` or holds the auditor's home), and
 * the Deno config it resolves imports with. A module elsewhere (a literal
 * `import("../../secret.json")`) is not bound: the server finds nothing
 * there, and the launch names it in `refusedModules`. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const r = packageModuleFiles(
 *   { modules: ["/r/fx/a/server.ts", "/r/fx/_shared/s.ts", "/tmp/secret.json"], config: "/r/deno.json", scriptDir: "/r/fx/a", packageRoot: "/r" },
 *   { definitionDir: "/r/fx/a", readPaths: [], home: "/root" },
 * );
 * assert.deepEqual(r.bound, ["/r/fx/a/server.ts", "/r/fx/_shared/s.ts", "/r/deno.json"]);
 * assert.deepEqual(r.refused, ["/tmp/secret.json"]);
 * ```
 */
export function packageModuleFiles(
  graph: ModuleGraphFiles,
  where: {
    definitionDir: string;
    readPaths: readonly string[];
    home: string | null;
  },
): { bound: string[]; refused: string[] } {
  const pkg = graph.packageRoot;
  const workspace = pkg === null || pkg === "" || pkg === "/" ||
      (where.home !== null && isWithin(where.home, pkg))
    ? null
    : pkg;
  const roots = [
    where.definitionDir,
    ...where.readPaths,
    ...(graph.scriptDir === null ? [] : [graph.scriptDir]),
    ...(workspace === null ? [] : [workspace]),
  ];
  const inside = (f: string) => roots.some((r) => isWithin(f, r));
  return {
    bound: [
      ...graph.modules.filter(inside),
      ...(graph.config === null ? [] : [graph.config]),
    ],
    refused: graph.modules.filter((f) => !inside(f)),
  };
}

let links: Record<string, string> | null = null;

/** The system directories that are symbolic links here (merged /usr). */
function systemLinks(): Record<string, string> {
  if (links !== null) return links;
  links = {};
  for (const d of SYSTEM_DIRS) {
    try {
      if (Deno.lstatSync(d).isSymlink) links[d] = Deno.readLinkSync(d);
    } catch {
      // absent
    }
  }
  return links;
}

let bwrapWorks: boolean | null = null;

/**
 * Whether bubblewrap can create its namespaces here (probed once, in about
 * 10 ms): the deno backend then runs Deno inside it with a minimal view.
 */
function bubblewrapWorksHere(): boolean {
  if (bwrapWorks !== null) return bwrapWorks;
  bwrapWorks = false;
  if (Deno.build.os !== "linux") return false;
  const bwrap = findOnPath("bwrap", Deno.env.get("PATH") ?? "");
  const sh = findOnPath("sh", "/bin:/usr/bin");
  if (bwrap === null || sh === null) return false;
  try {
    bwrapWorks = new Deno.Command(bwrap, {
      args: [
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        sh,
        "-c",
        "exit 0",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
      clearEnv: true,
    }).outputSync().code === 0;
  } catch {
    bwrapWorks = false;
  }
  return bwrapWorks;
}

/** The uid and gid a server drops to when verity runs as root ("nobody"). */
export const UNPRIVILEGED_ID = 65534;

/** When verity runs as root: setpriv and the unprivileged ids; otherwise null. */
function unprivilegedTarget(): NonNullable<HostFacts["dropTo"]> | null {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return null;
  const setpriv = findOnPath("setpriv", "/usr/bin:/bin:/usr/sbin:/sbin");
  if (setpriv === null) {
    throw new SandboxError(
      "verity runs as root and setpriv (util-linux) is missing: servers cannot drop to an unprivileged uid; install util-linux or run verity as a normal user",
    );
  }
  return { setpriv, uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID };
}

/** chown `dir` and everything under it (links themselves, never followed). */
function chownTree(dir: string, uid: number, gid: number): void {
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    Deno.chownSync(d, uid, gid);
    for (const e of Deno.readDirSync(d)) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) stack.push(p);
      else if (!e.isSymlink) Deno.chownSync(p, uid, gid);
    }
  }
}

/** This process's directory of overlay layers on a tmpfs (null: none here), made once. */
let layersRoot: string | null | undefined;
let layersMade = 0;

/**
 * Where a launch's overlay keeps its layers: on `/dev/shm` where it is a
 * tmpfs, else in the session's evidence directory. On ext4 every layer
 * directory made, and the overlay's mount and unmount, wait on the
 * journal of a busy disk (tens of ms per session under load); on a tmpfs
 * they take microseconds, and what a server writes outside its state
 * lives in memory, as bubblewrap's `--tmpfs /tmp` did before the overlay.
 * A launch's layers are removed once its evidence directory is (checked
 * at each launch), the rest when this process exits; those of a process
 * killed outright by the next `verity run` (`cleanScratch`).
 */
function overlayDir(evidenceDir: string, label: string): string {
  layersRoot ??= makeLayersRoot();
  if (layersRoot === null) return `${evidenceDir}/overlays/${label}`;
  for (const e of Deno.readDirSync(layersRoot)) {
    if (!e.isDirectory) continue;
    const dir = `${layersRoot}/${e.name}`;
    try {
      Deno.statSync(Deno.readTextFileSync(`${dir}/${LAYERS_OF}`));
    } catch {
      // Its session is over; a removal that fails is tried at the next launch.
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // still busy
      }
    }
  }
  const dir = `${layersRoot}/${++layersMade}`;
  Deno.mkdirSync(dir);
  Deno.writeTextFileSync(`${dir}/${LAYERS_OF}`, evidenceDir);
  return `${dir}/${label}`;
}

/** The file naming the evidence directory a launch's layers belong to. */
const LAYERS_OF = ".evidence";

function makeLayersRoot(): string | null {
  let tmpfs = false;
  try {
    tmpfs = Deno.readTextFileSync("/proc/self/mountinfo").split("\n").some(
      (l) => l.split(" ")[4] === "/dev/shm" && / - tmpfs /.test(l),
    );
  } catch {
    // no mountinfo: no tmpfs known
  }
  if (!tmpfs) return null;
  try {
    const dir = Deno.makeTempDirSync({
      dir: "/dev/shm",
      prefix: "verity-layers-",
    });
    Deno.writeTextFileSync(`${dir}/${SCRATCH_OWNER}`, ownerText(selfOwner()));
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // already gone
      }
    });
    return dir;
  } catch {
    return null;
  }
}

/** Why writes outside the state directory cannot be observed here (null: an overlay can be mounted), probed once. */
let overlayWhyNot: string | null | undefined;

let mounts: string[] | null = null;

/** The host's mount points (`/proc/self/mountinfo`, field 5, octal escapes decoded), read once. */
function hostMounts(): string[] {
  if (mounts !== null) return mounts;
  try {
    return mounts = Deno.readTextFileSync("/proc/self/mountinfo").split("\n")
      .map((l) => l.split(" ")[4] ?? "").filter((m) => m.startsWith("/"))
      .map((m) =>
        m.replace(
          /\\([0-7]{3})/g,
          (_, o) => String.fromCharCode(parseInt(o, 8)),
        )
      );
  } catch {
    return mounts = [];
  }
}

/**
 * Whether an overlay of `/` can be mounted here, as verity runs now: Linux,
 * root (in a user namespace the kernel refuses `/` as a lower layer: its
 * submounts are locked, "failed to clone lowerpath"), util-linux, overlayfs.
 * One mount in a throw-away namespace, once per process (a few ms).
 */
function overlayUnavailable(): string | null {
  if (overlayWhyNot !== undefined) return overlayWhyNot;
  overlayWhyNot = "overlays need Linux";
  if (Deno.build.os !== "linux") return overlayWhyNot;
  overlayWhyNot =
    "verity is not root: an overlay of / cannot be mounted in a user namespace (its submounts are locked)";
  if (Deno.uid() !== 0) return overlayWhyNot;
  const tools = overlayTools();
  overlayWhyNot = "util-linux's unshare or mount is missing";
  if (tools === null) return overlayWhyNot;
  const dir = Deno.makeTempDirSync({ prefix: "verity-overlay-probe-" });
  try {
    for (const d of ["upper", "work", "root"]) Deno.mkdirSync(`${dir}/${d}`);
    const out = new Deno.Command(tools.unshare, {
      args: [
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        `"$0" -t overlay -o "lowerdir=/,upperdir=$1/upper,workdir=$1/work,${OVERLAY_OPTIONS}" verity-overlay "$1/root"`,
        tools.mount,
        dir,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      clearEnv: true,
    }).outputSync();
    overlayWhyNot = out.code === 0
      ? null
      : `mount -t overlay fails here: ${
        new TextDecoder().decode(out.stderr).trim().split("\n").pop() ||
        `exit ${out.code}`
      }`;
  } catch (e) {
    overlayWhyNot = `overlay probe failed: ${(e as Error).message}`;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  return overlayWhyNot;
}

function overlayTools(): { unshare: string; mount: string } | null {
  const dirs = "/usr/bin:/bin:/usr/sbin:/sbin";
  const unshare = findOnPath("unshare", dirs);
  const mount = findOnPath("mount", dirs);
  return unshare && mount ? { unshare, mount } : null;
}

/**
 * Make an overlay launch's directories: the layers (a hidden `/tmp` with
 * its sticky mode), the work directory and mount point, and in the upper
 * layer the directories the server owns (its code), their ancestors as on
 * the host.
 */
function makeOverlayDirs(l: OverlayLayout, uid: number, gid: number): void {
  const root = l.work.slice(0, l.work.lastIndexOf("/"));
  try {
    Deno.removeSync(root, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  for (const d of [l.work, l.merged, ...l.layers.map((x) => x.upper)]) {
    Deno.mkdirSync(d, { recursive: true });
  }
  for (const x of l.layers) {
    if (x.at === "/tmp") Deno.chmodSync(x.upper, 0o1777);
  }
  const upper = l.layers[0]!.upper;
  // Directories only (a read path may be a file: a deno.json); the paths
  // are real paths, so each ancestor is a directory too.
  l.owned = l.owned.filter((p) => {
    try {
      return Deno.lstatSync(p).isDirectory;
    } catch {
      return false;
    }
  });
  for (const owned of l.owned) {
    let at = "";
    for (const part of owned.split("/").filter((p) => p !== "")) {
      at += `/${part}`;
      const st = Deno.lstatSync(at);
      try {
        Deno.mkdirSync(`${upper}${at}`);
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      }
      const mode = (st.mode ?? 0o755) & 0o7777;
      // A directory others cannot enter stays as it is (the server could
      // not read it before either).
      const mine = at === owned && (mode & 0o005) === 0o005;
      const [u, g] = mine ? [uid, gid] : [st.uid, st.gid];
      // Only what mkdir did not give already: on a busy disk each change
      // waits on the journal, a look does not.
      const now = Deno.lstatSync(`${upper}${at}`);
      if (((now.mode ?? 0) & 0o7777) !== mode) {
        Deno.chmodSync(`${upper}${at}`, mode);
      }
      if (now.uid !== u || now.gid !== g) Deno.chownSync(`${upper}${at}`, u, g);
    }
  }
}

/** Write the process-creation filter for this CPU into `dir`; its path, or null when unsupported. */
function ensureFilter(dir: string): string | null {
  const arch = seccompArch(Deno.build.arch);
  if (arch === null) return null;
  const path = `${dir}/verity-no-process-${arch}.bpf`;
  writeOnce(path, noProcessFilter(arch));
  return path;
}

/**
 * Prepare the launch of one server process: canonical paths, the evidence
 * directory (created when missing: Deno exits 1 when the audit log's
 * directory is absent), the bubblewrap seccomp filter, and the exact argv
 * and environment.
 *
 * Throws {@linkcode SandboxError} for anything that cannot be launched
 * safely: a missing state directory or read path, a deno backend asked to
 * run something other than `deno run`, bubblewrap missing, a permission flag
 * in a deno command, a declared `HOME` outside the state directory.
 *
 * Requires `--allow-env`, `--allow-read`, and `--allow-write` for the
 * evidence directory.
 *
 * @example
 * ```ts ignore
 * const launch = prepareLaunch({
 *   command: [resolveDeno(), "run", "server.ts"], env: {}, stateDir, definitionDir,
 *   readPaths: [], backend: "deno", evidenceDir, label: "once-1",
 * });
 * const session = await openSession(launch.spawn);
 * ```
 */
export function prepareLaunch(req: LaunchRequest): Launch {
  const stateDir = realPath("state directory", req.stateDir);
  const definitionDir = realPath("definition directory", req.definitionDir);
  const readPaths = req.readPaths.map((p) => realPath("read path", p));
  const programTrees: string[] = [];
  const cwd = req.cwd === undefined ? undefined : realPath("cwd", req.cwd);
  let evidenceDir = req.evidenceDir;
  if (req.backend !== "none") {
    try {
      Deno.mkdirSync(evidenceDir, { recursive: true });
    } catch (e) {
      throw new SandboxError(
        `evidence directory ${JSON.stringify(evidenceDir)}: ${
          (e as Error).message
        }`,
      );
    }
    evidenceDir = realPathOr(evidenceDir);
  }
  const path = Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
  const first = req.command[0] ?? "";
  const deno = first === "" ? "" : (() => {
    try {
      return resolveDeno();
    } catch {
      return "";
    }
  })();
  let program = first;
  if (req.backend === "bubblewrap" && first !== "") {
    const looked = first.includes("/")
      ? (first.startsWith("/") ? first : `${definitionDir}/${first}`)
      : findOnPath(first, req.env.PATH ?? path);
    if (looked === null) {
      throw new SandboxError(
        `bubblewrap backend: program ${
          JSON.stringify(first)
        } not found on PATH`,
      );
    }
    // A version manager's shim becomes the program it stands for; the trees
    // the program runs from (its virtualenv, its install) are bound, unless
    // one holds what the sandbox hides (the home, the run's other sessions).
    const resolved = resolveProgram(looked, cwd ?? definitionDir);
    program = resolved.program;
    const home = Deno.env.get("HOME");
    const hidden = [
      "/tmp",
      "/run",
      ...(home ? [realPathOr(home)] : []),
      ...(req.hide ?? []).map(realPathOr),
    ];
    programTrees.push(
      ...resolved.trees.filter((t) =>
        !readPaths.includes(t) && !hidden.some((h) => isWithin(h, t))
      ),
    );
    readPaths.push(...programTrees);
  } else if (req.backend === "deno" && first !== "" && !first.includes("/")) {
    program = findOnPath(first, req.env.PATH ?? path) ?? first;
  }
  const home = Deno.env.get("HOME");
  const run = req.allow?.run ?? [];
  const allowedPrograms = run.map((name) => {
    const found = findOnPath(name, req.env.PATH ?? path);
    if (found === null) {
      throw new SandboxError(
        `allow.run: program ${JSON.stringify(name)} not found on PATH`,
      );
    }
    return { name, path: found, real: realPath("allow.run program", found) };
  });
  const binDirs = run.length
    ? [
      ...new Set(
        BIN_DIRS.map((d) => {
          try {
            return Deno.statSync(d).isDirectory ? Deno.realPathSync(d) : null;
          } catch {
            return null;
          }
        }).filter((d): d is string => d !== null),
      ),
    ]
    : [];
  const confineDeno = req.backend === "deno" && bubblewrapWorksHere();
  const wantsBwrap = req.backend === "bubblewrap" ||
    (req.backend === "deno" && (run.length > 0 || confineDeno));
  const dropTo = wantsBwrap ? unprivilegedTarget() : null;
  if (dropTo !== null) {
    // The server runs as an unprivileged uid: hand it its directories.
    chownTree(stateDir, dropTo.uid, dropTo.gid);
    if (req.backend === "deno") chownTree(evidenceDir, dropTo.uid, dropTo.gid);
  }
  // As root the server runs as nobody: a directory it cannot enter on the
  // way to what it is shown (a 0700 home) is hidden, that alone bound back.
  const closed = dropTo === null ? [] : hiddenAncestors([
    definitionDir,
    ...readPaths,
    stateDir,
    realPathOr(program),
  ]);
  const graph = confineDeno
    ? packageModuleFiles(
      staticModuleFiles(
        req.command,
        cwd ?? definitionDir,
        realPathOr(req.denoDir ?? defaultDenoDir()),
        deno,
      ),
      {
        definitionDir,
        readPaths,
        home: home === undefined || home === "" ? null : realPathOr(home),
      },
    )
    : { bound: [], refused: [] };
  const host: HostFacts = {
    path,
    home: home === undefined || home === "" ? null : realPathOr(home),
    denoDir: realPathOr(req.denoDir ?? defaultDenoDir()),
    bwrap: wantsBwrap ? findOnPath("bwrap", path) : null,
    shell: "/bin/sh",
    mkfifo: req.backend === "bubblewrap" && (req.connect ?? []).length > 0
      ? findOnPath("mkfifo", "/usr/bin:/bin")
      : null,
    seccompFilter: wantsBwrap && run.length === 0
      ? ensureFilter(evidenceDir)
      : null,
    program,
    programReal: realPathOr(program),
    programIsDeno: first !== "" && isDenoProgram(first, deno),
    allowedPrograms,
    binDirs,
    confineDeno,
    dropTo,
    systemLinks: confineDeno ? systemLinks() : {},
    moduleFiles: graph.bound,
  };
  const overlayWhy = req.overlay === false
    ? "no overlay asked for"
    : req.backend === "none"
    ? "no sandbox"
    : !wantsBwrap
    ? "bubblewrap does not work here"
    : overlayUnavailable();
  const tools = overlayWhy === null ? overlayTools() : null;
  if (tools !== null && dropTo !== null && /^[\w.-]+$/.test(req.label)) {
    host.overlay = {
      ...tools,
      dir: overlayDir(evidenceDir, req.label),
      mounts: hostMounts(),
    };
  }
  // The runner may pass VERITY_STATE_DIR itself, spelled before symlinks were resolved.
  const env = { ...req.env };
  if (
    env.VERITY_STATE_DIR !== undefined &&
    realPathOr(env.VERITY_STATE_DIR) === stateDir
  ) {
    env.VERITY_STATE_DIR = stateDir;
  }
  if (env.HOME !== undefined) env.HOME = realPathOr(env.HOME);
  const launch = buildLaunch(
    {
      ...req,
      env,
      stateDir,
      definitionDir,
      readPaths,
      programTrees,
      evidenceDir,
      ...(cwd === undefined ? {} : { cwd }),
      ...(req.hide === undefined && closed.length === 0 ? {} : {
        hide: [
          ...(req.hide ?? []).map((p) => realPath("hidden directory", p)),
          ...closed,
        ],
      }),
    },
    host,
  );
  if (launch.writes?.observed && dropTo !== null) {
    makeOverlayDirs(launch.writes.layout, dropTo.uid, dropTo.gid);
  }
  launch.writes ??= {
    observed: false,
    why: overlayWhy ?? "no overlay for this launch",
  };
  launch.spawn.explain = (stderr) => {
    let log: string | null = null;
    try {
      // At start the log is short; a longer one is not read here.
      if (
        launch.auditLog !== null &&
        Deno.statSync(launch.auditLog).size < 1 << 20
      ) {
        log = Deno.readTextFileSync(launch.auditLog);
      }
    } catch {
      // no log
    }
    return sandboxCause(launch, stderr, log);
  };
  return launch;
}

/** Which backends work on this machine, and why one does not. */
export interface BackendProbe {
  bubblewrap: boolean;
  /** Why bubblewrap cannot be used here; null when it can. */
  reason: string | null;
}

let probed: Promise<BackendProbe> | null = null;

async function runProbe(
  launch: Launch,
): Promise<{ code: number; stderr: string }> {
  const [program, ...args] = launch.spawn.command;
  const child = new Deno.Command(program!, {
    args,
    env: launch.spawn.env,
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // gone
    }
  }, 10_000);
  const out = await child.output();
  clearTimeout(timer);
  return {
    code: out.code,
    stderr: new TextDecoder().decode(out.stderr).trim(),
  };
}

async function probe(): Promise<BackendProbe> {
  if (Deno.build.os !== "linux") {
    return { bubblewrap: false, reason: "bubblewrap needs Linux" };
  }
  const path = Deno.env.get("PATH") ?? "";
  if (findOnPath("bwrap", path) === null) {
    return {
      bubblewrap: false,
      reason: "bwrap is not installed (apt-get install -y bubblewrap)",
    };
  }
  if (seccompArch(Deno.build.arch) === null) {
    return {
      bubblewrap: false,
      reason: `no process-creation filter for ${Deno.build.arch}`,
    };
  }
  const sh = findOnPath("sh", "/bin:/usr/bin");
  if (sh === null) return { bubblewrap: false, reason: "no /bin/sh" };
  const dir = await Deno.makeTempDir({ prefix: "verity-probe-" });
  try {
    const state = `${dir}/state`;
    await Deno.mkdir(state);
    const base = {
      env: {},
      stateDir: state,
      definitionDir: dir,
      readPaths: [],
      backend: "bubblewrap" as const,
      evidenceDir: `${dir}/evidence`,
      label: "probe",
    };
    // 1. A program runs in the sandbox.
    const ok = await runProbe(
      prepareLaunch({ ...base, command: [sh, "-c", "exit 0"] }),
    );
    if (ok.code !== 0) {
      return {
        bubblewrap: false,
        reason: `bwrap fails here: ${
          ok.stderr.split("\n").pop() || `exit ${ok.code}`
        }`,
      };
    }
    // 2. It cannot start another one (dash must fork for the first of two external commands).
    const fork = await runProbe(
      prepareLaunch({ ...base, command: [sh, "-c", "/bin/true; /bin/true"] }),
    );
    if (fork.code === 0) {
      return {
        bubblewrap: false,
        reason:
          "the seccomp filter did not stop process creation on this kernel",
      };
    }
    return { bubblewrap: true, reason: null };
  } catch (e) {
    return {
      bubblewrap: false,
      reason: `bwrap probe failed: ${(e as Error).message}`,
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Find out, once per process, whether bubblewrap works here: installed,
 * able to create its namespaces, and its seccomp filter effective.
 *
 * Requires `--allow-run`, `--allow-env`, `--allow-read` and `--allow-write`
 * (a temporary directory).
 *
 * @example
 * ```ts ignore
 * const { bubblewrap, reason } = await probeBackends();
 * if (!bubblewrap) console.error(`bubblewrap unavailable: ${reason}`);
 * ```
 */
export function probeBackends(): Promise<BackendProbe> {
  probed ??= probe();
  return probed;
}

/**
 * The real Python interpreter for `{python}`: `python3` on PATH, a version
 * manager's shim resolved to the program it stands for (see `shims.ts`).
 *
 * Requires `--allow-read`, `--allow-run` (a shim's manager) and `--allow-env`.
 */
export function resolvePython(): Promise<string> {
  const found = findOnPath("python3", Deno.env.get("PATH") ?? "");
  if (found === null) {
    throw new SandboxError(
      "verity: python3 not found on PATH (needed for {python})",
    );
  }
  return Promise.resolve(resolveProgram(found, Deno.cwd()).program);
}

/**
 * Read what the sandbox saw of one finished process: its backend, exact
 * command and environment, and the refused attempts in its audit log (at
 * most {@linkcode MAX_AUDIT_LOG_BYTES} of it; `log` when the caller has
 * read it already).
 *
 * Requires `--allow-read` for the evidence directory.
 *
 * @example
 * ```ts ignore
 * await session.client.close();
 * const ev = await collectEvidence(launch);
 * for (const a of ev.attempts ?? []) console.log(a.permission, a.value);
 * ```
 */
export async function collectEvidence(
  launch: Launch,
  log?: Uint8Array | null,
): Promise<SandboxEvidence> {
  // The log as already read (`log`), else read here up to its budget.
  const bytes = log !== undefined
    ? log
    : launch.auditLog === null
    ? null
    : (await readAuditLogHead(launch.auditLog))?.bytes ?? null;
  return launchEvidence(
    launch,
    bytes === null ? null : new TextDecoder().decode(bytes),
  );
}

/**
 * The most of one process's Deno permission audit log verity reads: 64 MiB
 * (about 800,000 checks), the same as a session's byte budget on the wire.
 * A server past it is ended with a named reason (`auditLogOver`).
 */
export const MAX_AUDIT_LOG_BYTES = 64 * 1024 * 1024;

/**
 * The first `limit` bytes of an audit log, cut after its last whole line,
 * and the file's size; null when there is no log. Streams: never reads a
 * larger log whole. Requires `--allow-read`.
 *
 * @example
 * ```ts ignore
 * const head = await readAuditLogHead(launch.auditLog!);
 * if (head && head.size > MAX_AUDIT_LOG_BYTES) console.log(auditLogOver(head.size));
 * ```
 */
export async function readAuditLogHead(
  path: string,
  limit: number = MAX_AUDIT_LOG_BYTES,
): Promise<{ bytes: Uint8Array; size: number } | null> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(path);
  } catch {
    return null;
  }
  try {
    const size = (await f.stat()).size;
    const buf = new Uint8Array(Math.min(size, limit));
    let n = 0;
    while (n < buf.length) {
      const got = await f.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    let end = n;
    if (size > limit) end = buf.lastIndexOf(0x0a, n - 1) + 1;
    return { bytes: buf.subarray(0, end), size };
  } finally {
    f.close();
  }
}

/** The named reason a session ends with when its audit log passes the budget. */
export function auditLogOver(size: number): string {
  return `the server made more permission checks than verity reads: its Deno permission audit log passed ${MAX_AUDIT_LOG_BYTES} bytes (${size} bytes seen)`;
}
