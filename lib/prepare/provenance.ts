/**
 * Provenance of what was audited, as reports record it: the git state of
 * the definition's directory and the target's pin with what `verity
 * prepare` verified, and the short phrases every format shows for them.
 * Pure (the git state itself is gathered by `definition_git.ts`).
 *
 * @module
 */
import type { PreparedTarget } from "./prepared.ts";

/**
 * The git state of the directory holding the definition, as the command
 * found it: the commit checked out and whether anything under the
 * directory differs from it (uncommitted or untracked files, or the
 * definition file itself not tracked). Unknown (both null) when git is not
 * installed or the directory is not a checkout; `detail` says which.
 */
export interface DefinitionGit {
  /** The checked-out commit (40 hex digits), or null. */
  commit: string | null;
  /** Whether the definition's directory differs from that commit, or null. */
  dirty: boolean | null;
  /** The `origin` remote's URL (credentials removed), or null. */
  repository: string | null;
  /** Why commit or dirty is unknown, or what made it dirty; null when clean and known. */
  detail: string | null;
}

/**
 * What the audited server is: a pinned npm package, run only from the
 * cache `verity prepare` fetched and checked against its integrity, or a
 * local command with no pin.
 */
export type TargetProvenance =
  | {
    pinned: true;
    package: string;
    version: string;
    /** The `[source]` integrity (`sha512-…`), the registry's `dist.integrity`. */
    integrity: string;
    /** The `[source]` repository and commit (provenance only, not checked). */
    git: string | null;
    commit: string | null;
    /** Every session ran from the prepared, integrity-checked cache (the launcher refuses otherwise). */
    preparedCache: true;
    /** How it ran: `deno` from the prepared Deno cache, `node` from its npm install. */
    runtime: "deno" | "node";
    /** What `verity prepare` checked: the lockfile's integrity for the package, the tarball it hashed. */
    lockIntegrity: string;
    tarball: { integrity: string; sha256: string } | null;
    preparedAt: string;
  }
  | {
    pinned: false;
    /** Why there is no pin (a local command: fixture or target without `[source]`). */
    detail: string;
  };

/**
 * The target's pin as a report records it: the `[source]` pin (already
 * checked by the launcher) and what `verity prepare` verified (the run
 * used that cache: the launcher refuses a pinned target otherwise), or no
 * pin for a local command.
 *
 * @example
 * ```ts
 * targetProvenance({ source: null, kind: "fixture" }, null);
 * // { pinned: false, detail: "a local command (a fixture), run as found on disk" }
 * ```
 */
export function targetProvenance(
  def: { source: Record<string, unknown> | null; kind: string },
  prepared: PreparedTarget | null,
): TargetProvenance {
  const s = def.source;
  const str = (k: string) => typeof s?.[k] === "string" ? s[k] as string : null;
  const pkg = str("package");
  const version = str("version");
  const integrity = str("integrity");
  if (
    s === null || prepared === null || pkg === null || version === null ||
    integrity === null
  ) {
    return {
      pinned: false,
      detail: `a local command (${
        def.kind === "fixture" ? "a fixture" : "the target has no [source]"
      }), run as found on disk`,
    };
  }
  return {
    pinned: true,
    package: pkg,
    version,
    integrity,
    git: str("git"),
    commit: str("commit"),
    preparedCache: true,
    runtime: prepared.runtime ?? "deno",
    lockIntegrity: prepared.lockIntegrity,
    tarball: prepared.tarball
      ? {
        integrity: prepared.tarball.integrity,
        sha256: prepared.tarball.sha256,
      }
      : null,
    preparedAt: prepared.preparedAt,
  };
}

/** What older reports say for a field they do not carry. */
export const NOT_RECORDED = "not recorded (report written before 2026-12-01)";

/** `commit e45e836dd0f0…, clean` / `…, DIRTY (why)` / `unknown: not a git checkout`. */
export function definitionGitText(g: DefinitionGit | undefined): string {
  if (g === undefined) return NOT_RECORDED;
  if (g.commit === null && g.dirty === null) return g.detail ?? "unknown";
  const commit = g.commit === null ? "no commit" : `commit ${g.commit}`;
  const state = g.dirty === null
    ? `dirty unknown${g.detail ? ` (${g.detail})` : ""}`
    : g.dirty
    ? `DIRTY${g.detail ? ` (${g.detail})` : ""}`
    : "clean";
  return `${commit}, ${state}${g.repository ? `, ${g.repository}` : ""}`;
}

/** `pkg@1.2.3 sha512-…, run from the prepared, integrity-checked Deno cache …` or `no pin: …`. */
export function targetText(t: TargetProvenance | undefined): string {
  if (t === undefined) return NOT_RECORDED;
  if (!t.pinned) return `no pin: ${t.detail}`;
  return `${t.package}@${t.version} ${t.integrity}, run from the prepared, integrity-checked ${
    t.runtime === "node" ? "npm install" : "Deno cache"
  } (prepared ${t.preparedAt})${
    t.git ? `; source ${t.git}${t.commit ? ` at ${t.commit}` : ""}` : ""
  }`;
}
