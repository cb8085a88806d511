/**
 * A package that a command line starts by npx (or `npm exec`, `pnpm dlx`,
 * `bunx`), made ready the way a prepared target is: pinned to an exact
 * version and its registry integrity, fetched once into verity's cache
 * (`.verity/`, one printed networked step, every copy checked against the
 * integrity), then run by Deno from that cache with a frozen lockfile,
 * offline. A package some `verity prepare` already fetched at that version
 * runs from there.
 *
 * Requires `--allow-run` (npm, deno), `--allow-read`, `--allow-write`
 * (`.verity/`) and `--allow-env`.
 *
 * @module
 */
import { join, relative, resolve } from "node:path";
import { PrepareError } from "../errors.ts";
import {
  cacheLayout,
  packageCached,
  preparedKey,
  readPrepared,
  savePreparedTarget,
} from "./local.ts";
import { fetchPinned, pinFromRegistry } from "./fetch.ts";
import {
  isExactVersion,
  npmSpecifier,
  type PackageRun,
  sha256Of,
  type SourcePin,
} from "./source.ts";
import type { PreparedFile, PreparedTarget } from "./prepared.ts";
import type { PreparedRun } from "./local.ts";

/** A package run ready to start offline. */
export interface ReadyPackage {
  /** `deno` arguments after the binary: `run --no-config --frozen --lock=<lock> npm:<pkg>@<version>[/<bin>] <args>`. */
  args: string[];
  /** The lockfile's directory (the server must be able to read the lock). */
  lockDir: string;
  /** What was verified (the pin, the lock, `{source}`, the Deno cache it runs from). */
  prepared: PreparedRun;
}

/** Options of {@linkcode readyPackageRun}. */
export interface ReadyOptions {
  /** Refuse anything that needs the network, naming what is missing. */
  offline: boolean;
  /** The one line each networked step prints. */
  say: (line: string) => void;
}

/** A prepared entry for `pkg@version` that can run offline, or null. */
async function usableEntry(
  file: PreparedFile,
  keys: string[],
  pin: Pick<SourcePin, "package" | "version"> & { integrity: string | null },
  denoDir: string,
): Promise<PreparedTarget | null> {
  for (const key of keys) {
    const e = file.targets[key];
    if (
      e === undefined || (e.runtime ?? "deno") !== "deno" ||
      e.package !== pin.package || e.version !== pin.version ||
      (pin.integrity !== null && e.integrity !== pin.integrity)
    ) continue;
    const lock = await Deno.readFile(e.lock.file).catch(() => null);
    if (lock !== null && sha256Of(lock) === e.lock.sha256) {
      if (await packageCached(denoDir, pin.package, pin.version) !== null) {
        return e;
      }
    }
  }
  return null;
}

/**
 * Pin, fetch (once) and describe how to run `run` offline. An unpinned
 * spec is pinned with the registry and the pin printed; a package not yet
 * in the cache is fetched, printing `fetching <pkg>@<version>
 * (<integrity>)`. With `offline`, either is refused with one line naming
 * what is missing. Throws {@linkcode PrepareError} (exit 2).
 *
 * @example
 * ```ts ignore
 * const ready = await readyPackageRun(parsePackageRun(["npx", "-y", "@modelcontextprotocol/server-memory"])!, {
 *   offline: false, say: console.error,
 * });
 * // ready.args: ["run", "--no-config", "--frozen", "--lock=/p/.verity/npx/@modelcontextprotocol/server-memory@2026.8.31/deno.lock", "npm:@modelcontextprotocol/server-memory@2026.8.31"]
 * ```
 */
export async function readyPackageRun(
  run: PackageRun,
  options: ReadyOptions,
): Promise<ReadyPackage> {
  const layout = cacheLayout();
  const file = await readPrepared(layout);
  const shown = relative(Deno.cwd(), layout.root) || layout.root;
  const asked = `${run.package}@${run.range}`;
  let version = run.range;
  let integrity: string | null = null;
  if (!isExactVersion(run.range)) {
    if (options.offline) {
      const cached = [
        ...new Set(
          Object.values(file.targets).filter((e) => e.package === run.package)
            .map((e) => e.version),
        ),
      ];
      throw new PrepareError(
        `--offline: ${asked} names no exact version, and pinning one asks the registry; name it (${
          cached.length ? `in the cache: ${cached.join(", ")}` : "none cached"
        })`,
      );
    }
    ({ version, integrity } = await pinFromRegistry(run.package, run.range));
    options.say(
      `pinned ${asked} to ${run.package}@${version} (the registry's answer today; name the version to skip this lookup)`,
    );
  }
  const dir = join(layout.root, "npx", `${run.package}@${version}`);
  const own = preparedKey(layout, dir);
  const pinned = { package: run.package, version, integrity };
  let entry = await usableEntry(
    file,
    [own, ...Object.keys(file.targets).filter((k) => k !== own)],
    pinned,
    layout.denoDir,
  );
  if (entry === null) {
    if (options.offline) {
      throw new PrepareError(
        `--offline: ${run.package}@${version} is not in verity's cache (${shown}); run once without --offline to fetch it, or verity prepare a target that pins it`,
      );
    }
    integrity ??= (await pinFromRegistry(run.package, version)).integrity;
    await Deno.mkdir(layout.root, { recursive: true }).catch((e) => {
      throw new PrepareError(
        `cannot make verity's cache ${layout.root}: ${
          (e as Error).message
        } (run from a directory you can write)`,
      );
    });
    options.say(
      `fetching ${run.package}@${version} (${integrity}) into ${shown}`,
    );
    entry = (await fetchPinned(
      { package: run.package, version, integrity, git: null, commit: null },
      {
        layout,
        name: `${run.package}@${version}`,
        targetDir: dir,
        definitionFile: `${run.runner} ${run.package}@${version}`,
        updateLock: true,
        say: () => {},
      },
    )).entry;
    await savePreparedTarget(layout, dir, entry);
  }
  const lock = entry.lock.file;
  return {
    args: [
      "run",
      "--no-config",
      "--frozen",
      `--lock=${lock}`,
      `${npmSpecifier({ package: run.package, version })}${
        run.bin === null ? "" : `/${run.bin}`
      }`,
      ...run.args,
    ],
    lockDir: lock.slice(0, lock.lastIndexOf("/")),
    prepared: {
      source: resolve(layout.root, entry.source),
      denoDir: resolve(layout.root, entry.denoDir),
      nodeModules: null,
      entry,
    },
  };
}
