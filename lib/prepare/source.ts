/**
 * Pinned sources of audit targets: the `[source]` table of a `target.toml`,
 * the command that must run exactly that package, npm integrity strings and
 * Deno lockfiles. Pure: no `Deno.*`, no disk, no clock.
 *
 * A target pins one npm package at an exact version together with the
 * registry's `dist.integrity` (`sha512-<base64>`). `verity prepare` fetches
 * it and refuses when any copy it sees hashes differently; `verity run`
 * then runs it from the prepared cache with the target's lockfile frozen.
 *
 * @module
 */
import { sha256Hex } from "../evidence/canonical.ts";
import { createHash } from "node:crypto";
import { DefinitionError } from "../errors.ts";

/** What a target's `[source]` pins. */
export interface SourcePin {
  /** npm package name, e.g. `@modelcontextprotocol/server-memory`. */
  package: string;
  /** Exact version, e.g. `2026.8.31`. */
  version: string;
  /** The registry's `dist.integrity`, `sha512-<base64>`. */
  integrity: string;
  /** Repository URL, for provenance only. */
  git: string | null;
  /** Full 40-hex commit of `git`, for provenance only. */
  commit: string | null;
}

/** The lockfile a target runs from, relative to its own directory. */
export const LOCK_FILE = "deno.lock";

/** The flags a target's command must carry so it runs exactly the prepared tree. */
export const REQUIRED_FLAGS: readonly string[] = [
  "--no-config",
  "--frozen",
  `--lock={target}/${LOCK_FILE}`,
];

const NPM_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
const EXACT_VERSION =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const SHA512 = /^sha512-[A-Za-z0-9+/]{86}==$/;

/** Whether `name` is a valid npm package name (lower case, optional scope). */
export function isNpmName(name: string): boolean {
  return name.length <= 214 && NPM_NAME.test(name);
}

/** Whether `v` is an exact semver version (no range, no tag). */
export function isExactVersion(v: string): boolean {
  return EXACT_VERSION.test(v);
}

/** Whether `s` is an npm `sha512-<base64>` integrity string. */
export function isSha512Integrity(s: string): boolean {
  return SHA512.test(s);
}

/**
 * The npm integrity string of some bytes (`sha512-<base64>`), as the
 * registry writes it in `dist.integrity`.
 *
 * @example
 * ```ts
 * integrityOf(new Uint8Array()); // "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
 * ```
 */
export function integrityOf(bytes: Uint8Array): string {
  return "sha512-" + createHash("sha512").update(bytes).digest("base64");
}

/** `sha256:<hex>` of some bytes or text. */
export function sha256Of(data: Uint8Array | string): string {
  return `sha256:${sha256Hex(data)}`;
}

/** The `npm:` specifier of a pin, e.g. `npm:@scope/pkg@1.2.3`. */
export function npmSpecifier(
  pin: Pick<SourcePin, "package" | "version">,
): string {
  return `npm:${pin.package}@${pin.version}`;
}

/**
 * Read and check a target's `[source]` table (kept raw by the definition
 * loader). Throws {@linkcode DefinitionError} naming `source.<key>`.
 *
 * @example
 * ```ts
 * const pin = parseSourcePin({
 *   package: "@modelcontextprotocol/server-memory",
 *   version: "2026.8.31",
 *   integrity: "sha512-ljj/3S4aGjxdNSQWw6gucKKGnTLdBPWxzapyY/MT2tOVyZwvxChvevXSLPwx59nKJAlVpUVW+cOlnVRXRwiqMQ==",
 * }, "targets/memory/target.toml");
 * ```
 */
export function parseSourcePin(
  raw: Record<string, unknown>,
  file: string,
): SourcePin {
  const str = (k: string): string | null => {
    const v = raw[k];
    if (v === undefined) return null;
    if (typeof v !== "string") {
      throw new DefinitionError(file, `source.${k}`, "expected a string");
    }
    return v;
  };
  /** `source.<k>`, present and passing `ok`, else the message for missing or bad. */
  const need = (
    k: string,
    ok: (v: string) => boolean,
    missing: () => string,
    bad: (v: string) => string,
  ): string => {
    const v = str(k);
    if (v === null || !ok(v)) {
      throw new DefinitionError(
        file,
        `source.${k}`,
        v === null ? missing() : bad(v),
      );
    }
    return v;
  };
  const pkg = need(
    "package",
    isNpmName,
    () =>
      'missing: verity prepare fetches npm packages (e.g. package = "@modelcontextprotocol/server-memory")',
    (v) => `not a valid npm package name: ${JSON.stringify(v)}`,
  );
  const version = need(
    "version",
    isExactVersion,
    () => 'missing (an exact version such as "1.2.3")',
    (v) => `must be an exact version, not a range or tag: ${JSON.stringify(v)}`,
  );
  const integrity = need(
    "integrity",
    isSha512Integrity,
    () =>
      `missing: the registry's dist.integrity (npm view ${pkg}@${version} dist.integrity)`,
    (v) =>
      `expected "sha512-<base64>" as npm prints it, got ${JSON.stringify(v)}`,
  );
  const git = str("git");
  const commit = str("commit");
  if (commit !== null) {
    if (git === null) {
      throw new DefinitionError(
        file,
        "source.commit",
        "a commit needs source.git (the repository it belongs to)",
      );
    }
    if (!/^[0-9a-f]{40}$/.test(commit)) {
      throw new DefinitionError(
        file,
        "source.commit",
        `expected a full 40-character lower-case hex commit, got ${
          JSON.stringify(commit)
        }`,
      );
    }
  }
  return { package: pkg, version, integrity, git, commit };
}

/**
 * Check that a target's command runs exactly the pinned package from its
 * frozen lockfile: `{deno} run --no-config --frozen
 * --lock={target}/deno.lock npm:<package>@<version> ...`. Anything else
 * would run code that `verity prepare` did not verify.
 */
export function checkCommandRunsPin(
  command: readonly string[],
  pin: SourcePin,
  file: string,
): void {
  const spec = npmSpecifier(pin);
  if (isNodeCommand(command)) {
    const prefix = `{node_modules}/${pin.package}/`;
    if (!(command[1] ?? "").startsWith(prefix)) {
      throw new DefinitionError(
        file,
        "target.command",
        `a Node target runs a script of the prepared package: expected ["{node}", "${prefix}<script>", ...], got ${
          JSON.stringify(command.slice(0, 2))
        }`,
      );
    }
    return;
  }
  const suggestion = JSON.stringify(["{deno}", "run", ...REQUIRED_FLAGS, spec]);
  if (command[0] !== "{deno}" || command[1] !== "run") {
    throw new DefinitionError(
      file,
      "target.command",
      `a target with [source] runs under Deno from the prepared cache: use ${suggestion}`,
    );
  }
  const rest = command.slice(2);
  const scriptAt = rest.findIndex((a) => !a.startsWith("-"));
  const script = scriptAt === -1 ? undefined : rest[scriptAt];
  if (script !== spec && !(script ?? "").startsWith(`${spec}/`)) {
    throw new DefinitionError(
      file,
      "target.command",
      `must run the pinned package ${spec}, got ${
        JSON.stringify(script ?? null)
      } (expected ${suggestion})`,
    );
  }
  const flags = scriptAt === -1 ? rest : rest.slice(0, scriptAt);
  for (const f of REQUIRED_FLAGS) {
    if (!flags.includes(f)) {
      throw new DefinitionError(
        file,
        "target.command",
        `missing ${f} before ${spec}: without it the server could resolve dependencies the lockfile does not pin (expected ${suggestion})`,
      );
    }
  }
}

/** The npm lockfile of a Node target (`targets/<name>/package-lock.json`). */
export const NODE_LOCK_FILE = "package-lock.json";

/** Whether a target's command runs under Node from the prepared install (`{node} {node_modules}/...`). */
export function isNodeCommand(command: readonly string[]): boolean {
  return command[0] === "{node}";
}

/**
 * Read an npm lockfile (`lockfileVersion` 2 or 3) and find the pinned
 * package installed at `node_modules/<package>`. Throws `SyntaxError` when
 * the text is not such a lockfile.
 *
 * @example
 * ```ts
 * const s = summarizeNpmLock('{"lockfileVersion":3,"packages":{"":{},"node_modules/a":{"version":"1.0.0","integrity":"sha512-x"}}}', { package: "a", version: "1.0.0" });
 * s.rootIntegrity; // "sha512-x"
 * ```
 */
export function summarizeNpmLock(
  text: string,
  pin: Pick<SourcePin, "package" | "version">,
): LockSummary {
  const raw = parseJsonText(text);
  const lock = raw as Record<string, unknown> | null;
  if (
    lock === null || typeof lock !== "object" ||
    (lock.lockfileVersion !== 2 && lock.lockfileVersion !== 3) ||
    typeof lock.packages !== "object" || lock.packages === null
  ) {
    throw new SyntaxError(
      "not an npm lockfile with lockfileVersion 2 or 3 and a packages table",
    );
  }
  const entries = lock.packages as Record<
    string,
    { version?: unknown; integrity?: unknown; name?: unknown }
  >;
  const found: LockedPackage[] = [];
  for (const [key, e] of Object.entries(entries)) {
    const at = key.lastIndexOf("node_modules/");
    if (at === -1 || typeof e?.version !== "string") continue;
    const name = typeof e.name === "string"
      ? e.name
      : key.slice(at + "node_modules/".length);
    const integrity = typeof e.integrity === "string" ? e.integrity : null;
    found.push({ name, version: e.version, integrity });
  }
  const packages = distinctSorted(found);
  const root = entries[`node_modules/${pin.package}`];
  const rootIntegrity = root && root.version === pin.version &&
      typeof root.integrity === "string"
    ? root.integrity
    : null;
  return { packages, rootIntegrity };
}

/** Parse JSON text; `SyntaxError` (`not JSON: …`) when it is not JSON. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`not JSON: ${(e as Error).message}`);
  }
}

/** The first of each name and version, sorted by name then version. */
function distinctSorted(found: readonly LockedPackage[]): LockedPackage[] {
  const seen = new Map<string, LockedPackage>();
  for (const p of found) {
    const k = `${p.name}\0${p.version}`;
    if (!seen.has(k)) seen.set(k, p);
  }
  const order = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0;
  return [...seen.values()].sort((a, b) =>
    order(a.name, b.name) || order(a.version, b.version)
  );
}

/** One npm package version a lockfile resolves. */
export interface LockedPackage {
  name: string;
  version: string;
  integrity: string | null;
}

/** What a Deno lockfile says about a pinned package. */
export interface LockSummary {
  /** Every npm package in the lock, sorted by name then version. */
  packages: LockedPackage[];
  /** The integrity the lock records for the pinned package itself, or null when it is absent. */
  rootIntegrity: string | null;
}

/** Split a lockfile npm key such as `@hono/node-server@2.1.9_hono@4.13.19` into name and version. */
export function splitLockKey(
  key: string,
): { name: string; version: string } | null {
  const at = key.indexOf("@", key.startsWith("@") ? 1 : 0);
  if (at <= 0) return null;
  const name = key.slice(0, at);
  const version = key.slice(at + 1).split("_")[0] ?? "";
  return version === "" ? null : { name, version };
}

/**
 * Read a Deno lockfile (version 4 or 5) and find the pinned package in it.
 * Throws `SyntaxError` when the text is not a lockfile.
 *
 * @example
 * ```ts
 * const s = summarizeLock('{"version":"5","specifiers":{"npm:a@1.0.0":"1.0.0"},"npm":{"a@1.0.0":{"integrity":"sha512-x"}}}', { package: "a", version: "1.0.0" });
 * s.rootIntegrity; // "sha512-x"
 * ```
 */
export function summarizeLock(
  text: string,
  pin: Pick<SourcePin, "package" | "version">,
): LockSummary {
  const raw = parseJsonText(text);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new SyntaxError("not a Deno lockfile (expected an object)");
  }
  const lock = raw as Record<string, unknown>;
  const version = String(lock.version ?? "");
  if (version !== "4" && version !== "5") {
    throw new SyntaxError(
      `unsupported Deno lockfile version ${
        JSON.stringify(lock.version)
      } (expected "4" or "5")`,
    );
  }
  const npm = (lock.npm ?? {}) as Record<string, { integrity?: unknown }>;
  const specifiers = (lock.specifiers ?? {}) as Record<string, unknown>;
  const found: LockedPackage[] = [];
  for (const [key, entry] of Object.entries(npm)) {
    const nv = splitLockKey(key);
    if (nv === null) continue;
    const integrity = entry && typeof entry.integrity === "string"
      ? entry.integrity
      : null;
    found.push({ ...nv, integrity });
  }
  const packages = distinctSorted(found);
  const resolved = specifiers[npmSpecifier(pin)];
  let rootIntegrity: string | null = null;
  if (typeof resolved === "string") {
    const entry = npm[`${pin.package}@${resolved}`];
    if (entry && typeof entry.integrity === "string") {
      rootIntegrity = entry.integrity;
    }
  }
  return { packages, rootIntegrity };
}

/** An npm package a package runner (`npx`, `npm exec`, `pnpm dlx`, `bunx`) would fetch and start. */
export interface PackageRun {
  /** The runner as typed, e.g. `npx` or `pnpm dlx`. */
  runner: string;
  package: string;
  /** The version, range or tag asked for (`latest` when none was given). */
  range: string;
  /** The bin to run (`npx -p <pkg> <bin>`), or null for the package's own. */
  bin: string | null;
  /** The server's arguments. */
  args: string[];
  /** Runner flags that do not reach the server (`-y`, `--quiet`, ...). */
  dropped: string[];
}

/**
 * Split `@scope/name@range`, `name@range`, `name` (or `npm:name@range`)
 * into package and range; null when the name is not an npm package name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitPackageSpec("@x/y@^1.2"), { package: "@x/y", range: "^1.2" });
 * assert.deepEqual(splitPackageSpec("left-pad"), { package: "left-pad", range: "latest" });
 * ```
 */
export function splitPackageSpec(
  spec: string,
): { package: string; range: string } | null {
  const s = spec.startsWith("npm:") ? spec.slice(4) : spec;
  const at = s.indexOf("@", s.startsWith("@") ? 1 : 0);
  const name = at === -1 ? s : s.slice(0, at);
  let range = at === -1 ? "latest" : s.slice(at + 1);
  // npm:pkg@1.2.3/sub/path: keep the version only.
  const slash = range.indexOf("/");
  if (slash !== -1) range = range.slice(0, slash);
  if (!isNpmName(name)) return null;
  return { package: name, range: range === "" ? "latest" : range };
}

/** Runner flags that take the next word as their value. */
const RUNNER_VALUE_FLAGS = new Set(["-p", "--package", "-c", "--call"]);

/**
 * Read a package runner's command line: `npx [flags] <pkg>[@<version>]
 * [args]`, `npm exec|x`, `pnpm dlx`, `pnpx`, `yarn dlx`, `bunx`, `bun x`,
 * with `-p`/`--package <pkg> <bin>`. Null for any other command (and for
 * `-c`/`--call`, a shell line). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const r = parsePackageRun(["npx", "-y", "@modelcontextprotocol/server-filesystem@2026.1.14", "/data"]);
 * assert.deepEqual(r, {
 *   runner: "npx", package: "@modelcontextprotocol/server-filesystem", range: "2026.1.14",
 *   bin: null, args: ["/data"], dropped: ["-y"],
 * });
 * assert.equal(parsePackageRun(["node", "index.js"]), null);
 * ```
 */
export function parsePackageRun(command: readonly string[]): PackageRun | null {
  const [program = "", ...rest] = command;
  const base = program.slice(program.lastIndexOf("/") + 1);
  const sub = rest[0] ?? "";
  const two: Record<string, string[]> = {
    npm: ["exec", "x"],
    pnpm: ["dlx"],
    yarn: ["dlx"],
    bun: ["x"],
  };
  let runner: string;
  let args: string[];
  if (["npx", "pnpx", "bunx"].includes(base)) {
    runner = base;
    args = rest;
  } else if (two[base]?.includes(sub)) {
    runner = `${base} ${sub}`;
    args = rest.slice(1);
  } else return null;
  const dropped: string[] = [];
  let pkg: string | null = null;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-")) break;
    const [flag, value] = a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, null];
    if (flag === "-c" || flag === "--call") return null;
    const v = value ?? (RUNNER_VALUE_FLAGS.has(flag) ? args[++i] ?? "" : null);
    if (flag === "-p" || flag === "--package") pkg = v;
    else dropped.push(v === null || value !== null ? a : `${a} ${v}`);
  }
  const first = args[i];
  if (first === undefined) return null;
  const req = splitPackageSpec(pkg ?? first);
  if (req === null) return null;
  return {
    runner,
    ...req,
    bin: pkg === null ? null : first,
    args: args.slice(i + 1),
    dropped,
  };
}
