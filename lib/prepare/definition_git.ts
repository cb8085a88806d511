/**
 * The git state of a definition's directory, found by running `git`: the
 * provenance every report records about the definition. Effectful.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import type { DefinitionGit } from "./provenance.ts";

async function runGit(
  program: string,
  dir: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command(program, {
    args: ["-C", dir, ...args],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    // Never ask for credentials or open an editor; read the repository as found.
    env: { GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" },
  }).output();
  const dec = new TextDecoder();
  return {
    code: r.code,
    out: dec.decode(r.stdout).trim(),
    err: dec.decode(r.stderr).trim(),
  };
}

/** A remote URL without credentials (`https://user:token@host/x` → `https://host/x`). */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1");
}

/**
 * The git state of a definition: the commit checked out in the repository
 * holding `file`, and whether the definition's directory differs from it
 * (`git status` lists anything under it, tracked or untracked, or the file
 * itself is not tracked). Never throws: without git, or outside a
 * checkout, commit and dirty are null and `detail` says why. Requires
 * `--allow-run=git`. `options.git` names another git program (tests).
 *
 * @example
 * ```ts ignore
 * await definitionGitState("targets/memory/target.toml");
 * // { commit: "e45e836…", dirty: false, repository: null, detail: null }
 * ```
 */
export async function definitionGitState(
  file: string,
  options: { git?: string } = {},
): Promise<DefinitionGit> {
  const dir = dirname(file);
  const git = (d: string, args: string[]) =>
    runGit(options.git ?? "git", d, args);
  const unknown = (detail: string): DefinitionGit => ({
    commit: null,
    dirty: null,
    repository: null,
    detail,
  });
  let top;
  try {
    top = await git(dir, ["rev-parse", "--show-toplevel"]);
  } catch (e) {
    return unknown(
      e instanceof Deno.errors.NotFound
        ? "unknown: git not installed"
        : `unknown: git did not run (${(e as Error).message})`,
    );
  }
  if (top.code !== 0) {
    return unknown(
      /not a git repository/i.test(top.err)
        ? "unknown: not a git checkout"
        : `unknown: ${top.err.split("\n")[0] || `git exited ${top.code}`}`,
    );
  }
  const head = await git(dir, ["rev-parse", "--verify", "--quiet", "HEAD"]);
  const remote = await git(dir, ["remote", "get-url", "origin"]);
  const repository = remote.code === 0 && remote.out !== ""
    ? withoutCredentials(remote.out)
    : null;
  if (head.code !== 0) {
    return {
      commit: null,
      dirty: true,
      repository,
      detail: "a git checkout with no commit yet",
    };
  }
  const status = await git(dir, [
    "status",
    "--porcelain",
    "--untracked-files=all",
    "--",
    ".",
  ]);
  if (status.code !== 0) {
    return {
      commit: head.out,
      dirty: null,
      repository,
      detail: `unknown: git status failed (${status.err.split("\n")[0]})`,
    };
  }
  const changed = status.out === "" ? [] : status.out.split("\n");
  const tracked = await git(dir, [
    "ls-files",
    "--error-unmatch",
    "--",
    basename(file),
  ]);
  const details: string[] = [];
  if (tracked.code !== 0) details.push("the definition file is not tracked");
  if (changed.length > 0) {
    details.push(
      `${changed.length} path(s) under its directory differ from the commit (${
        changed.slice(0, 3).map((l) => l.slice(3)).join(", ")
      }${changed.length > 3 ? ", …" : ""})`,
    );
  }
  return {
    commit: head.out,
    dirty: details.length > 0,
    repository,
    detail: details.length ? details.join("; ") : null,
  };
}
