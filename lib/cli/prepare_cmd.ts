/**
 * `verity prepare <target>`: the only networked step of an audit. Fetches
 * the target's pinned npm package into the project-local Deno cache
 * (`.verity/deno_dir`), checks every copy against the pinned integrity,
 * writes or checks the target's lockfile, extracts `{source}` and records
 * it all in `.verity/prepared.json`. Afterwards `verity run <target>
 * --audit` runs with no network.
 *
 * Requires `--allow-all` (runs `deno` and `npm`, writes `.verity/`).
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { loadDefinition } from "../definition/definition.ts";
import { findOnPath, resolveDeno } from "../sandbox/sandbox.ts";
import {
  checkCommandRunsPin,
  integrityOf,
  LOCK_FILE,
  npmSpecifier,
  parseSourcePin,
  sha256Of,
  type SourcePin,
  summarizeLock,
} from "../audit/source.ts";
import { readTarball } from "../audit/tarball.ts";
import type { PreparedTarget } from "../audit/prepared.ts";
import {
  cacheLayout,
  packageCached,
  savePreparedTarget,
} from "../audit/local.ts";

export const HELP = `verity prepare <target> [--update-lock]

Fetch an audit target's pinned npm package (the only step that needs the
network) and make it runnable offline:

  1. npm pack <package>@<version>: the tarball's sha512 must equal
     [source].integrity (skipped, with a note, when npm is not installed);
  2. deno cache into .verity/deno_dir with the target's lockfile
     (<target>/deno.lock, frozen; written on the first prepare): the
     integrity the lock records for the package must equal it too;
  3. the tarball is extracted to .verity/sources/<target>/package ({source});
  4. .verity/prepared.json records versions, hashes and every locked package.

<target> is a target name (looked up under targets/) or a path.

Options:
  --update-lock   re-resolve dependencies and rewrite <target>/deno.lock
  -h, --help      show this help

Exit codes: 0 prepared; 2 invalid target, integrity mismatch, or a fetch
that failed (the message says which).`;

const decoder = new TextDecoder();

interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a helper program with a time limit; a missing program is a UsageError. */
async function runProgram(
  program: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<ToolRun> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: options.cwd,
      env: options.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    throw new UsageError(
      `verity prepare: cannot start ${program}: ${(e as Error).message}`,
    );
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
  // deno prints ANSI colours even with NO_COLOR in some paths; strip them.
  // deno-lint-ignore no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  return plain.trim().split("\n").filter((l) => l.trim() !== "").slice(-n).join(
    " | ",
  );
}

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.stat(p);
    return true;
  } catch {
    return false;
  }
}

/** Fetch the tarball with npm and check its hash. Null when npm is not installed. */
async function packAndVerify(
  pin: SourcePin,
  work: string,
  env: Record<string, string>,
): Promise<{ path: string; bytes: Uint8Array; npmVersion: string } | null> {
  const npm = findOnPath("npm", env.PATH ?? "");
  if (npm === null) return null;
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
    throw new UsageError(
      `verity prepare: npm pack ${pin.package}@${pin.version} failed (exit ${r.code}): ${
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
    throw new UsageError(`verity prepare: npm pack left no tarball in ${dest}`);
  }
  const path = join(dest, filename);
  const bytes = await Deno.readFile(path);
  const got = integrityOf(bytes);
  if (got !== pin.integrity) {
    throw new UsageError(
      `verity prepare: integrity mismatch for ${pin.package}@${pin.version}: [source].integrity is ${pin.integrity}, the registry's tarball hashes to ${got}; refusing to prepare`,
    );
  }
  return { path, bytes, npmVersion: ver.stdout.trim() };
}

/** Cache the package with Deno under the target's lockfile; returns the lock text to install (null when the existing lock was used). */
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
    const why = lastLines(r.stderr);
    if (useExisting && /lockfile is out of date/i.test(r.stderr)) {
      throw new UsageError(
        `verity prepare: ${lockPath} does not lock ${
          npmSpecifier(pin)
        }; rerun with --update-lock to re-resolve it (${why.slice(0, 200)})`,
      );
    }
    throw new UsageError(
      `verity prepare: deno cache ${
        npmSpecifier(pin)
      } failed (exit ${r.code}): ${why}`,
    );
  }
  return { lockText: await Deno.readTextFile(lockArg), newLock: !useExisting };
}

/** Write tarball entries under `dir` (which must not exist yet). */
async function extract(bytes: Uint8Array, dir: string): Promise<number> {
  let entries;
  try {
    entries = readTarball(bytes);
  } catch (e) {
    throw new UsageError(
      `verity prepare: cannot read the package tarball: ${
        (e as Error).message
      }`,
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

/** Copy a package directory from the Deno cache (used when npm is not installed). */
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

async function findCachedPackage(
  denoDir: string,
  pin: SourcePin,
): Promise<string | null> {
  for await (const reg of Deno.readDir(join(denoDir, "npm"))) {
    const p = join(denoDir, "npm", reg.name, pin.package, pin.version);
    if (reg.isDirectory && await exists(p)) return p;
  }
  return null;
}

/** Run `verity prepare`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("prepare", argv, {
    "update-lock": { type: "boolean" },
  });
  if (p.values.help) {
    console.log(HELP);
    return 0;
  }
  if (p.positionals.length !== 1) {
    throw new UsageError(
      "verity prepare: expected one target (a name under targets/ or a path)",
    );
  }
  const def = await loadDefinition(p.positionals[0]!);
  if (def.kind !== "target") {
    throw new UsageError(
      `verity prepare: ${def.file} is a fixture; only targets are prepared`,
    );
  }
  if (def.source === null) {
    throw new UsageError(
      `verity prepare: ${def.file} has no [source]; there is nothing to fetch (its command runs as given)`,
    );
  }
  const pin = parseSourcePin(def.source, def.file);
  checkCommandRunsPin(def.command, pin, def.file);
  const layout = cacheLayout();
  await Deno.mkdir(layout.denoDir, { recursive: true });
  await Deno.mkdir(layout.sourcesDir, { recursive: true });
  const work = await Deno.makeTempDir({
    dir: layout.root,
    prefix: `.prepare-${def.name}-`,
  });
  const say = (s: string) => console.error(`verity: ${s}`);
  try {
    const env = Deno.env.toObject();
    say(`fetching ${pin.package}@${pin.version} with npm pack`);
    const packed = await packAndVerify(pin, work, env);
    if (packed === null) {
      say(
        "npm is not installed: the tarball is not hashed separately (Deno's lock check still applies)",
      );
    }
    const lockPath = join(def.dir, LOCK_FILE);
    say(
      `caching it with deno into ${
        relative(Deno.cwd(), layout.denoDir) || "."
      }`,
    );
    const cached = await denoCache(
      pin,
      lockPath,
      work,
      layout.denoDir,
      p.values["update-lock"] === true,
    );
    let lock;
    try {
      lock = summarizeLock(cached.lockText, pin);
    } catch (e) {
      throw new UsageError(
        `verity prepare: ${lockPath}: ${(e as Error).message}`,
      );
    }
    if (lock.rootIntegrity === null) {
      throw new UsageError(
        `verity prepare: the lockfile does not record ${
          npmSpecifier(pin)
        }; rerun with --update-lock`,
      );
    }
    if (lock.rootIntegrity !== pin.integrity) {
      throw new UsageError(
        `verity prepare: integrity mismatch for ${pin.package}@${pin.version}: [source].integrity is ${pin.integrity}, the lockfile (what Deno downloaded and checked) records ${lock.rootIntegrity}; refusing to prepare`,
      );
    }
    if (!await packageCached(layout.denoDir, pin.package, pin.version)) {
      throw new UsageError(
        `verity prepare: deno cache succeeded but ${pin.package}@${pin.version} is not in ${layout.denoDir}`,
      );
    }
    // {source}: the verified package, extracted.
    const staged = join(work, "source");
    let files: number;
    if (packed) {
      files = await extract(packed.bytes, staged);
      await Deno.copyFile(packed.path, join(staged, "package.tgz"));
    } else {
      const from = await findCachedPackage(layout.denoDir, pin);
      files = from === null ? 0 : await copyTree(from, join(staged, "package"));
    }
    const sourceDir = join(layout.sourcesDir, def.name);
    await Deno.remove(sourceDir, { recursive: true }).catch(() => {});
    await Deno.rename(staged, sourceDir);
    if (cached.newLock) {
      const tmp = `${lockPath}.${crypto.randomUUID()}.tmp`;
      await Deno.writeTextFile(tmp, cached.lockText);
      await Deno.rename(tmp, lockPath);
    }
    const entry: PreparedTarget = {
      definition: def.file,
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
    await savePreparedTarget(layout, def.name, entry);
    const rel = (x: string) => relative(Deno.cwd(), x) || ".";
    console.log(`prepared ${def.name}: ${pin.package}@${pin.version}`);
    console.log(
      `  integrity  ${pin.integrity.slice(0, 23)}… pinned = ${
        packed ? "npm tarball = " : ""
      }${rel(lockPath)} (${cached.newLock ? "written" : "frozen, unchanged"})`,
    );
    console.log(`  packages   ${lock.packages.length} npm packages locked`);
    console.log(`  cache      ${rel(layout.denoDir)}`);
    console.log(`  source     ${rel(sourceDir)} (${files} files)`);
    console.log(`  recorded   ${rel(layout.preparedFile)}`);
    console.log(`verity run ${def.name} --audit now runs without the network.`);
    return 0;
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}
