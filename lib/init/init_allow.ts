/**
 * Which extra read-only paths a command needs under the sandbox, decided
 * from facts `verity init` gathers about the host: the interpreter's install
 * prefix, a Python virtualenv, the `node_modules` a Node script resolves its
 * packages from. bubblewrap hides /tmp, /run and the auditor's home (where
 * most people's servers and their environments live), so anything needed
 * from there must be declared, or the server cannot start. Pure.
 *
 * @module
 */
import { isWithin } from "../common/paths.ts";

/** What `verity init` found out about the command's program and script. */
export interface AllowanceFacts {
  /** The program (command[0]) as found on PATH, absolute; null when not found. */
  program: string | null;
  /** The program with symlinks resolved; null when not found. */
  programReal: string | null;
  /** The virtualenv the program belongs to (`<venv>/bin/python` beside `<venv>/pyvenv.cfg`), or null. */
  venv: string | null;
  /** The nearest `node_modules` directory above the server's script, or null. */
  nodeModules: string | null;
  /** Directories the sandbox hides (/tmp, /run, the auditor's home). */
  hidden: string[];
}

/** The paths to declare, each with why. */
export interface DetectedAllowance {
  path: string;
  why: string;
}

function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/**
 * The read allowances a command needs: each path that lies in a hidden
 * directory and is not already readable (`read`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const found = detectReadAllowances({
 *   program: "/home/me/proj/.venv/bin/python", programReal: "/home/me/.pyenv/versions/3.11.7/bin/python3.11",
 *   venv: "/home/me/proj/.venv", nodeModules: null, hidden: ["/tmp", "/run", "/home/me"],
 * }, ["/home/me/proj"]);
 * assert.deepEqual(found.map((f) => f.path), ["/home/me/.pyenv/versions/3.11.7"]);
 * ```
 */
export function detectReadAllowances(
  facts: AllowanceFacts,
  read: readonly string[],
): DetectedAllowance[] {
  const out: DetectedAllowance[] = [];
  const hidden = (p: string) => facts.hidden.some((h) => isWithin(p, h));
  const covered = (p: string) =>
    read.some((r) => isWithin(p, r)) || out.some((o) => isWithin(p, o.path));
  const add = (path: string, why: string) => {
    if (hidden(path) && !covered(path)) out.push({ path, why });
  };
  if (facts.programReal !== null) {
    const prefix = dirname(dirname(facts.programReal));
    add(
      prefix === "/" ? dirname(facts.programReal) : prefix,
      `the interpreter ${facts.programReal} is installed there`,
    );
  }
  if (facts.venv !== null) {
    add(facts.venv, "the virtualenv the program runs in (its site-packages)");
  }
  if (facts.nodeModules !== null) {
    add(facts.nodeModules, "the packages the script imports");
  }
  return out;
}
