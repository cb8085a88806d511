/**
 * The prepared-state file, `.verity/prepared.json`: which targets
 * `verity prepare` fetched, at which versions, and what was verified.
 * Pure: parse, render, and decide whether a target is ready to run.
 *
 * Paths inside the file are relative to the `.verity` directory, so the
 * directory can be moved (or copied to an air-gapped machine) as a whole.
 *
 * @module
 */
import { type LockedPackage, parseJsonText, type SourcePin } from "./source.ts";

/** The schema tag of the file (2: entries keyed by the target's directory, 1 keyed them by name). */
export const PREPARED_SCHEMA = "verity.prepared/2";

/** What `verity prepare` recorded for one target. */
export interface PreparedTarget {
  /** The definition file, as given to prepare (absolute). */
  definition: string;
  package: string;
  version: string;
  /** The pinned `dist.integrity` every copy was checked against. */
  integrity: string;
  git: string | null;
  commit: string | null;
  /** The tarball `npm pack` fetched, hashed by verity (null when npm was not available). */
  tarball: { file: string; integrity: string; sha256: string } | null;
  /** The integrity the target's lockfile records for the package (Deno checked the download against it). */
  lockIntegrity: string;
  /** The target's lockfile (absolute) and its hash when prepared. */
  lock: { file: string; sha256: string };
  /** `{source}`: the extracted package, relative to `.verity`. */
  source: string;
  /** The Deno cache the target runs from, relative to `.verity`. */
  denoDir: string;
  /** Every npm package version the lock resolves. */
  packages: LockedPackage[];
  /** Tool versions used to prepare. */
  tools: { deno: string; npm: string | null; node?: string };
  /**
   * How the target runs: `deno` (from the Deno cache, the default) or
   * `node` (from an npm install). @default {"deno"}
   */
  runtime?: "deno" | "node";
  /** Node targets: `{node_modules}`, relative to `.verity`. */
  nodeModules?: string;
  preparedAt: string;
}

/** The whole file. */
export interface PreparedFile {
  schema: typeof PREPARED_SCHEMA;
  /** Keyed by the target's directory (`preparedKey` in `local.ts`). */
  targets: Record<string, PreparedTarget>;
}

/** An empty prepared-state file. */
export function emptyPrepared(): PreparedFile {
  return { schema: PREPARED_SCHEMA, targets: {} };
}

/**
 * Parse `.verity/prepared.json`. Throws `SyntaxError` naming what is wrong;
 * the caller turns it into a message naming the file.
 */
export function parsePrepared(text: string): PreparedFile {
  const raw = parseJsonText(text);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new SyntaxError("expected an object");
  }
  const o = raw as Record<string, unknown>;
  if (o.schema !== PREPARED_SCHEMA) {
    throw new SyntaxError(
      `schema ${JSON.stringify(o.schema)} is not ${PREPARED_SCHEMA}`,
    );
  }
  const targets = o.targets;
  if (
    targets === null || typeof targets !== "object" || Array.isArray(targets)
  ) {
    throw new SyntaxError("targets: expected an object");
  }
  for (const [name, t] of Object.entries(targets)) {
    if (t === null || typeof t !== "object") {
      throw new SyntaxError(`targets.${name}: expected an object`);
    }
    const e = t as Record<string, unknown>;
    for (
      const k of [
        "definition",
        "package",
        "version",
        "integrity",
        "lockIntegrity",
        "source",
        "denoDir",
        "preparedAt",
      ]
    ) {
      if (typeof e[k] !== "string") {
        throw new SyntaxError(`targets.${name}.${k}: expected a string`);
      }
    }
    const lock = e.lock as Record<string, unknown> | undefined;
    if (
      !lock || typeof lock.file !== "string" || typeof lock.sha256 !== "string"
    ) {
      throw new SyntaxError(`targets.${name}.lock: expected {file, sha256}`);
    }
    if (!Array.isArray(e.packages)) {
      throw new SyntaxError(`targets.${name}.packages: expected an array`);
    }
  }
  return raw as PreparedFile;
}

/** Render the file: stable key order, one trailing newline. */
export function renderPrepared(p: PreparedFile): string {
  const targets: Record<string, PreparedTarget> = {};
  for (const name of Object.keys(p.targets).sort()) {
    targets[name] = p.targets[name]!;
  }
  return JSON.stringify({ schema: p.schema, targets }, null, 2) + "\n";
}

/** Facts about the disk that {@linkcode checkPrepared} needs, gathered by the caller. */
export interface PreparedFacts {
  /** `sha256:` of the target's lockfile now, or null when it is missing. */
  lockSha256: string | null;
  /** Whether the package's directory exists in the prepared Deno cache. */
  packageCached: boolean;
  /**
   * What to pass to `verity prepare` for this definition: its name when
   * that name finds it from here, else its directory (a target outside
   * `targets/`).
   * @default {the target's name}
   */
  prepareArg?: string;
}

/**
 * Decide whether a target can run offline from what was prepared: null when
 * it can, else the reason (one line, ending in what to do).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { SourcePin } from "./source.ts";
 * const pin: SourcePin = {
 *   package: "@modelcontextprotocol/server-memory",
 *   version: "2026.8.31",
 *   integrity: "sha512-x",
 *   git: null,
 *   commit: null,
 * };
 *
 * assert.equal(
 *   checkPrepared("memory", pin, null, { lockSha256: null, packageCached: false }),
 *   "target memory is not prepared: run `verity prepare memory` (the only step that needs the network)",
 * );
 * ```
 */
export function checkPrepared(
  name: string,
  pin: SourcePin,
  entry: PreparedTarget | null,
  facts: PreparedFacts,
): string | null {
  const again = `run \`verity prepare ${facts.prepareArg ?? name}\``;
  if (entry === null) {
    return `target ${name} is not prepared: ${again} (the only step that needs the network)`;
  }
  if (entry.package !== pin.package || entry.version !== pin.version) {
    return `target ${name} was prepared for ${entry.package}@${entry.version}, but its [source] now pins ${pin.package}@${pin.version}: ${again}`;
  }
  if (entry.integrity !== pin.integrity) {
    return `target ${name}: [source].integrity changed since it was prepared (${entry.integrity} then, ${pin.integrity} now): ${again}`;
  }
  if (facts.lockSha256 === null) {
    return `target ${name}: its lockfile ${entry.lock.file} is missing: ${again}`;
  }
  if (facts.lockSha256 !== entry.lock.sha256) {
    return `target ${name}: its lockfile ${entry.lock.file} changed since it was prepared: ${again}`;
  }
  if (!facts.packageCached) {
    return `target ${name}: ${pin.package}@${pin.version} is missing from the prepared ${
      entry.runtime === "node" ? "npm install" : "Deno cache"
    }: ${again}`;
  }
  return null;
}
