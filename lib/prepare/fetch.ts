/**
 * Fetching a pinned npm package for an audit: the networked edge behind
 * `verity prepare` (and `verity init` on an npm server). Runs `npm` and
 * `deno`, writes `.verity/` and the target's lockfile.
 *
 * Every copy is checked against the pinned `sha512` integrity: the tarball
 * `npm pack` fetched (hashed here) and the integrity Deno recorded in the
 * lockfile (Deno checks each download against the registry's integrity).
 * Any mismatch refuses, and nothing is recorded.
 *
 * Requires `--allow-run` (npm, deno), `--allow-read`, `--allow-write`,
 * `--allow-env`.
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { PrepareError } from "../errors.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { findOnPath, resolveDeno } from "../sandbox/sandbox.ts";
import {
  integrityOf,
  isExactVersion,
  isSha512Integrity,
  LOCK_FILE,
  NODE_LOCK_FILE,
  npmSpecifier,
  sha256Of,
  type SourcePin,
  summarizeLock,
  summarizeNpmLock,
} from "./source.ts";
import { readTarball } from "./tarball.ts";
import type { PreparedTarget } from "./prepared.ts";
import {
  type CacheLayout,
  packageCached,
  preparedKey,
  storeName,
} from "./local.ts";
import { exists } from "../common/exists.ts";

const decoder = new TextDecoder();

interface ProgramRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a helper program with a time limit; a program that cannot start is a PrepareError. */
async function runProgram(
  program: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<ProgramRun> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: options.cwd,
      env: options.env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    throw new PrepareError(`cannot start ${program}: ${(e as Error).message}`);
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // gone
    }
  }, options.timeoutMs);
  const out = await child.output();
  clearTimeout(timer);
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

function lastLines(text: string, n = 3): string {
  // deno-lint-ignore no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  return plain.trim().split("\n").filter((l) => l.trim() !== "").slice(-n)
    .join(" | ");
}

function npmPath(): string | null {
  return findOnPath("npm", Deno.env.get("PATH") ?? "");
}

/**
 * Pin an npm package for a new target: the exact version a range (or
 * `latest`) resolves to today, and its registry integrity, read with
 * `npm view`. Networked; needs npm.
 *
 * @example
 * ```ts ignore
 * await pinFromRegistry("@modelcontextprotocol/server-memory", "latest");
 * // { version: "2026.8.31", integrity: "sha512-ljj…" }
 * ```
 */
export async function pinFromRegistry(
  pkg: string,
  range: string,
): Promise<{ version: string; integrity: string }> {
  const npm = npmPath();
  if (npm === null) {
    throw new PrepareError(
      `verity: npm is needed to pin ${pkg}@${range} (its exact version and integrity); install Node/npm, or write the [source] by hand`,
    );
  }
  const cwd = await Deno.makeTempDir({ prefix: "verity-npm-" });
  try {
    const env = Deno.env.toObject();
    const view = async (spec: string, field: string): Promise<unknown> => {
      const r = await runProgram(npm, ["view", spec, field, "--json"], {
        cwd,
        env,
        timeoutMs: 120_000,
      });
      if (r.code !== 0 || r.stdout.trim() === "") {
        throw new PrepareError(
          `verity: npm view ${spec} ${field} failed (exit ${r.code}): ${
            lastLines(r.stderr) || "no such version"
          }`,
        );
      }
      return JSON.parse(r.stdout);
    };
    const versions = await view(`${pkg}@${range}`, "version");
    const list = Array.isArray(versions) ? versions : [versions];
    const version = String(list[list.length - 1]);
    if (!isExactVersion(version)) {
      throw new PrepareError(
        `verity: npm view ${pkg}@${range} gave no exact version (${version})`,
      );
    }
    const integrity = String(await view(`${pkg}@${version}`, "dist.integrity"));
    if (!isSha512Integrity(integrity)) {
      throw new PrepareError(
        `verity: ${pkg}@${version} has no sha512 integrity in the registry (${integrity})`,
      );
    }
    return { version, integrity };
  } finally {
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
}

/** Fetch the tarball with npm and check its hash. Null when npm is not installed. */
async function packAndVerify(
  pin: SourcePin,
  work: string,
): Promise<{ path: string; bytes: Uint8Array; npmVersion: string } | null> {
  const npm = npmPath();
  if (npm === null) return null;
  const env = Deno.env.toObject();
  const ver = await runProgram(npm, ["--version"], {
    cwd: work,
    env,
    timeoutMs: 60_000,
  });
  const dest = join(work, "pack");
  await Deno.mkdir(dest, { recursive: true });
  const r = await runProgram(
    npm,
    [
      "pack",
      `${pin.package}@${pin.version}`,
      "--pack-destination",
      dest,
      "--json",
      "--ignore-scripts",
    ],
    { cwd: work, env, timeoutMs: 300_000 },
  );
  if (r.code !== 0) {
    throw new PrepareError(
      `verity: npm pack ${pin.package}@${pin.version} failed (exit ${r.code}): ${
        lastLines(r.stderr)
      }`,
    );
  }
  let filename: string | null = null;
  try {
    const parsed = JSON.parse(r.stdout) as { filename?: unknown }[];
    if (typeof parsed[0]?.filename === "string") filename = parsed[0].filename;
  } catch {
    // fall back to the one file in dest
  }
  if (filename === null) {
    for await (const e of Deno.readDir(dest)) {
      if (e.isFile && e.name.endsWith(".tgz")) filename = e.name;
    }
  }
  if (filename === null) {
    throw new PrepareError(`verity: npm pack left no tarball in ${dest}`);
  }
  const path = join(dest, filename);
  const bytes = await Deno.readFile(path);
  const got = integrityOf(bytes);
  if (got !== pin.integrity) {
    throw new PrepareError(
      `verity: integrity mismatch for ${pin.package}@${pin.version}: [source].integrity is ${pin.integrity}, the registry's tarball hashes to ${got}; refusing to prepare`,
    );
  }
  return { path, bytes, npmVersion: ver.stdout.trim() };
}

/** Cache the package with Deno under the target's lockfile. */
async function denoCache(
  pin: SourcePin,
  lockPath: string,
  work: string,
  denoDir: string,
  updateLock: boolean,
): Promise<{ lockText: string; newLock: boolean }> {
  const deno = resolveDeno();
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    DENO_DIR: denoDir,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  };
  const useExisting = !updateLock && await exists(lockPath);
  const lockArg = useExisting ? lockPath : join(work, LOCK_FILE);
  const args = [
    "cache",
    "--no-config",
    `--lock=${lockArg}`,
    ...(useExisting ? ["--frozen"] : []),
    npmSpecifier(pin),
  ];
  const r = await runProgram(deno, args, {
    cwd: work,
    env,
    timeoutMs: 600_000,
  });
  if (r.code !== 0) {
    if (useExisting && /lockfile is out of date/i.test(r.stderr)) {
      throw new PrepareError(
        `verity: ${lockPath} does not lock ${
          npmSpecifier(pin)
        }; rerun verity prepare with --update-lock to re-resolve it`,
      );
    }
    throw new PrepareError(
      `verity: deno cache ${npmSpecifier(pin)} failed (exit ${r.code}): ${
        lastLines(r.stderr)
      }`,
    );
  }
  return { lockText: await Deno.readTextFile(lockArg), newLock: !useExisting };
}

/** Write tarball entries under `dir`. */
async function extract(bytes: Uint8Array, dir: string): Promise<number> {
  let entries;
  try {
    entries = readTarball(bytes);
  } catch (e) {
    throw new PrepareError(
      `verity: cannot read the package tarball: ${(e as Error).message}`,
    );
  }
  await Deno.mkdir(dir, { recursive: true });
  let files = 0;
  for (const e of entries) {
    const p = join(dir, e.path);
    if (e.type === "dir") {
      await Deno.mkdir(p, { recursive: true });
      continue;
    }
    await Deno.mkdir(dirname(p), { recursive: true });
    await Deno.writeFile(p, e.data, { mode: (e.mode & 0o755) | 0o644 });
    files++;
  }
  return files;
}

/** Copy a package directory from the Deno cache (when npm is not installed). */
async function copyTree(from: string, to: string): Promise<number> {
  await Deno.mkdir(to, { recursive: true });
  let n = 0;
  for await (const e of Deno.readDir(from)) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) n += await copyTree(a, b);
    else if (e.isFile) {
      await Deno.copyFile(a, b);
      n++;
    }
  }
  return n;
}

/** Options of {@linkcode fetchPinned}. */
export interface FetchOptions {
  /** The `.verity` cache. */
  layout: CacheLayout;
  /** The target's name (for messages and a Node install's package name). */
  name: string;
  /** The target's directory: its lockfile lives there, and its key in prepared.json. */
  targetDir: string;
  /** The target's definition file (absolute), recorded for provenance. */
  definitionFile: string;
  /**
   * Re-resolve dependencies and rewrite the lockfile.
   * @default false
   */
  updateLock?: boolean;
  /** Progress lines. */
  say: (line: string) => void;
}

/** What {@linkcode fetchPinned} did. */
export interface FetchResult {
  entry: PreparedTarget;
  /** Whether the lockfile was written (first prepare, or --update-lock). */
  newLock: boolean;
  /** Files in `{source}/package`. */
  files: number;
  lockPath: string;
  sourceDir: string;
}

/**
 * Fetch, verify and cache one pinned package; install the lockfile and
 * `{source}`. The caller records the returned entry in prepared.json.
 * Nothing outside a temporary directory changes until every check passed.
 */
export async function fetchPinned(
  pin: SourcePin,
  options: FetchOptions,
): Promise<FetchResult> {
  const { layout, say } = options;
  await Deno.mkdir(layout.denoDir, { recursive: true });
  await Deno.mkdir(layout.sourcesDir, { recursive: true });
  const store = storeName(preparedKey(layout, options.targetDir));
  const work = await Deno.makeTempDir({
    dir: layout.root,
    prefix: `.prepare-${store}-`,
  });
  try {
    say(`fetching ${pin.package}@${pin.version} with npm pack`);
    const packed = await packAndVerify(pin, work);
    if (packed === null) {
      say(
        "npm is not installed: the tarball is not hashed separately (the lockfile check still applies)",
      );
    }
    const lockPath = join(options.targetDir, LOCK_FILE);
    say(`caching it with deno into ${layout.denoDir}`);
    const cached = await denoCache(
      pin,
      lockPath,
      work,
      layout.denoDir,
      options.updateLock === true,
    );
    let lock;
    try {
      lock = summarizeLock(cached.lockText, pin);
    } catch (e) {
      throw new PrepareError(`verity: ${lockPath}: ${(e as Error).message}`);
    }
    if (lock.rootIntegrity === null) {
      throw new PrepareError(
        `verity: the lockfile does not record ${
          npmSpecifier(pin)
        }; rerun verity prepare with --update-lock`,
      );
    }
    if (lock.rootIntegrity !== pin.integrity) {
      throw new PrepareError(
        `verity: integrity mismatch for ${pin.package}@${pin.version}: [source].integrity is ${pin.integrity}, the lockfile (what Deno downloaded and checked) records ${lock.rootIntegrity}; refusing to prepare`,
      );
    }
    const cachedDir = await packageCached(
      layout.denoDir,
      pin.package,
      pin.version,
    );
    if (cachedDir === null) {
      throw new PrepareError(
        `verity: deno cache succeeded but ${pin.package}@${pin.version} is not in ${layout.denoDir}`,
      );
    }
    const staged = join(work, "source");
    let files: number;
    if (packed) {
      files = await extract(packed.bytes, staged);
      await Deno.copyFile(packed.path, join(staged, "package.tgz"));
    } else {
      files = await copyTree(cachedDir, join(staged, "package"));
    }
    const sourceDir = join(layout.sourcesDir, store);
    await Deno.remove(sourceDir, { recursive: true }).catch(() => {});
    await Deno.rename(staged, sourceDir);
    if (cached.newLock) {
      await Deno.mkdir(options.targetDir, { recursive: true });
      await writeTextFileAtomic(lockPath, cached.lockText);
    }
    const entry: PreparedTarget = {
      definition: options.definitionFile,
      package: pin.package,
      version: pin.version,
      integrity: pin.integrity,
      git: pin.git,
      commit: pin.commit,
      tarball: packed
        ? {
          file: relative(layout.root, join(sourceDir, "package.tgz")),
          integrity: integrityOf(packed.bytes),
          sha256: sha256Of(packed.bytes),
        }
        : null,
      lockIntegrity: lock.rootIntegrity,
      lock: { file: lockPath, sha256: sha256Of(cached.lockText) },
      source: relative(layout.root, sourceDir),
      denoDir: relative(layout.root, layout.denoDir),
      packages: lock.packages,
      tools: { deno: Deno.version.deno, npm: packed?.npmVersion ?? null },
      preparedAt: new Date().toISOString(),
    };
    return { entry, newLock: cached.newLock, files, lockPath, sourceDir };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

/** The Node.js binary on PATH (symlinks resolved), or null. */
function nodePath(): string | null {
  const p = findOnPath("node", Deno.env.get("PATH") ?? "");
  if (p === null) return null;
  try {
    return Deno.realPathSync(p);
  } catch {
    return null;
  }
}

/**
 * Run the install scripts of an npm tree (native addons such as
 * better-sqlite3 compile here) inside bubblewrap: no network, only `dir`
 * writable, the auditor's home and /tmp hidden. node-gyp builds against
 * the headers installed beside node (`<prefix>/include/node`), so nothing
 * is downloaded. Throws `PrepareError` when bubblewrap is missing or a script
 * fails.
 *
 * Requires `--allow-run` (bwrap, npm), `--allow-read`, `--allow-write`
 * (`dir`) and `--allow-env`.
 */
export async function rebuildSandboxed(
  dir: string,
  npm: string,
  node: string,
): Promise<void> {
  const bwrap = findOnPath("bwrap", Deno.env.get("PATH") ?? "");
  if (bwrap === null) {
    throw new PrepareError(
      "verity: a Node target's install scripts run under bubblewrap, which is not installed (apt-get install -y bubblewrap)",
    );
  }
  const prefix = dirname(dirname(node));
  const home = Deno.env.get("HOME");
  const hidden = ["/tmp", "/run", ...(home && home !== "/" ? [home] : [])];
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: join(dir, ".home"),
    npm_config_cache: join(dir, ".npm-cache"),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_nodedir: prefix,
  };
  const args = [
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--die-with-parent",
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    ...hidden.flatMap((h) => ["--tmpfs", h]),
    "--bind",
    dir,
    dir,
    "--chdir",
    dir,
    "--clearenv",
    ...Object.entries(env).flatMap(([k, v]) => ["--setenv", k, v]),
    "--",
    npm,
    "rebuild",
    "--foreground-scripts",
  ];
  const r = await runProgram(bwrap, args, {
    cwd: dir,
    env: {},
    timeoutMs: 900_000,
  });
  await Deno.remove(join(dir, ".home"), { recursive: true }).catch(() => {});
  await Deno.remove(join(dir, ".npm-cache"), { recursive: true }).catch(
    () => {},
  );
  if (r.code !== 0) {
    throw new PrepareError(
      `verity: npm rebuild (install scripts, sandboxed, offline) failed (exit ${r.code}): ${
        lastLines(r.stdout + "\n" + r.stderr)
      }`,
    );
  }
}

/**
 * Prepare a Node target: `npm pack` checks the tarball against the pinned
 * integrity; `npm ci` installs exactly the tree of the target's
 * `package-lock.json` (written on the first prepare, then frozen; npm
 * checks every tarball against the integrity it records) with install
 * scripts off; the lock must record the pinned integrity for the package;
 * the install scripts then run sandboxed and offline (`npm rebuild` under
 * bubblewrap). The result moves to `.verity/node/<target>` (`{node_modules}`
 * is its `node_modules`), and `{source}` is extracted as for Deno targets.
 */
export async function fetchPinnedNode(
  pin: SourcePin,
  options: FetchOptions,
): Promise<FetchResult> {
  const { layout, say } = options;
  const npm = npmPath();
  const node = nodePath();
  if (npm === null || node === null) {
    throw new PrepareError(
      "verity: a Node target needs node and npm on PATH to be prepared",
    );
  }
  await Deno.mkdir(layout.nodeDir, { recursive: true });
  await Deno.mkdir(layout.sourcesDir, { recursive: true });
  const store = storeName(preparedKey(layout, options.targetDir));
  const work = await Deno.makeTempDir({
    dir: layout.root,
    prefix: `.prepare-${store}-`,
  });
  try {
    say(`fetching ${pin.package}@${pin.version} with npm pack`);
    const packed = await packAndVerify(pin, work);
    if (packed === null) throw new PrepareError("verity: npm is not installed");
    const lockPath = join(options.targetDir, NODE_LOCK_FILE);
    const useExisting = options.updateLock !== true && await exists(lockPath);
    const stage = join(work, "node");
    await Deno.mkdir(stage);
    await Deno.writeTextFile(
      join(stage, "package.json"),
      JSON.stringify(
        {
          name: `verity-target-${options.name.replace(/[^a-z0-9._-]/g, "-")}`,
          private: true,
          dependencies: { [pin.package]: pin.version },
        },
        null,
        2,
      ) + "\n",
    );
    if (useExisting) await Deno.copyFile(lockPath, join(stage, NODE_LOCK_FILE));
    const env = {
      ...Deno.env.toObject(),
      npm_config_update_notifier: "false",
      NO_COLOR: "1",
    };
    const npmArgs = [
      useExisting ? "ci" : "install",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--omit=dev",
    ];
    say(
      `installing it with npm ${npmArgs[0]} into ${
        relative(Deno.cwd(), layout.nodeDir) || "."
      } (${useExisting ? "frozen lock" : "writing the lock"})`,
    );
    const r = await runProgram(npm, npmArgs, {
      cwd: stage,
      env,
      timeoutMs: 900_000,
    });
    if (r.code !== 0) {
      throw new PrepareError(
        `verity: npm ${
          npmArgs[0]
        } ${pin.package}@${pin.version} failed (exit ${r.code}): ${
          lastLines(r.stderr)
        }${
          useExisting
            ? "; if the lock no longer matches, rerun verity prepare with --update-lock"
            : ""
        }`,
      );
    }
    const lockText = await Deno.readTextFile(join(stage, NODE_LOCK_FILE));
    let lock;
    try {
      lock = summarizeNpmLock(lockText, pin);
    } catch (e) {
      throw new PrepareError(`verity: ${lockPath}: ${(e as Error).message}`);
    }
    if (lock.rootIntegrity !== pin.integrity) {
      throw new PrepareError(
        `verity: integrity mismatch for ${pin.package}@${pin.version}: [source].integrity is ${pin.integrity}, the npm lockfile records ${
          lock.rootIntegrity ?? "nothing"
        }; refusing to prepare`,
      );
    }
    say("running install scripts sandboxed and offline (npm rebuild)");
    await rebuildSandboxed(stage, npm, node);
    const installed = join(stage, "node_modules", pin.package, "package.json");
    const version = (JSON.parse(await Deno.readTextFile(installed)) as {
      version?: unknown;
    }).version;
    if (version !== pin.version) {
      throw new PrepareError(
        `verity: npm installed ${pin.package}@${
          String(version)
        }, not ${pin.version}`,
      );
    }
    const staged = join(work, "source");
    const files = await extract(packed.bytes, staged);
    await Deno.copyFile(packed.path, join(staged, "package.tgz"));
    const sourceDir = join(layout.sourcesDir, store);
    const nodeDir = join(layout.nodeDir, store);
    await Deno.remove(sourceDir, { recursive: true }).catch(() => {});
    await Deno.rename(staged, sourceDir);
    await Deno.remove(nodeDir, { recursive: true }).catch(() => {});
    await Deno.rename(stage, nodeDir);
    if (!useExisting) {
      await Deno.mkdir(options.targetDir, { recursive: true });
      await writeTextFileAtomic(lockPath, lockText);
    }
    const nodeVersion = await runProgram(node, ["--version"], {
      cwd: work,
      env,
      timeoutMs: 60_000,
    });
    const entry: PreparedTarget = {
      definition: options.definitionFile,
      package: pin.package,
      version: pin.version,
      integrity: pin.integrity,
      git: pin.git,
      commit: pin.commit,
      tarball: {
        file: relative(layout.root, join(sourceDir, "package.tgz")),
        integrity: integrityOf(packed.bytes),
        sha256: sha256Of(packed.bytes),
      },
      lockIntegrity: lock.rootIntegrity,
      lock: { file: lockPath, sha256: sha256Of(lockText) },
      source: relative(layout.root, sourceDir),
      denoDir: relative(layout.root, layout.denoDir),
      packages: lock.packages,
      tools: {
        deno: Deno.version.deno,
        npm: packed.npmVersion,
        node: nodeVersion.stdout.trim(),
      },
      runtime: "node",
      nodeModules: relative(layout.root, join(nodeDir, "node_modules")),
      preparedAt: new Date().toISOString(),
    };
    return { entry, newLock: !useExisting, files, lockPath, sourceDir };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}
