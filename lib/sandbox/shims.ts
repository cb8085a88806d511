/**
 * Programs behind launchers, resolved before a sandbox starts them.
 *
 * A version manager's shim (pyenv, rbenv, nodenv, asdf, mise, volta) is a
 * script or a binary that starts the real interpreter as a child: pyenv's
 * `python3` shim runs `pyenv exec`, which forks, and bubblewrap's
 * no-new-process filter stops it (`pyenv: fork: Operation not permitted`).
 * So the shim is asked which program it would run (`pyenv which python3`)
 * and that program is started instead. A virtualenv's `bin/python` stays
 * the program (Python finds its virtualenv from that path), and the trees
 * it runs from are bound read-only: the virtualenv, the interpreter's
 * install prefix, and for a script the same for the interpreter its `#!`
 * names. {@linkcode hiddenAncestors} finds what an unprivileged uid cannot
 * enter (a 0700 home), so the sandbox can hide it and bind only those
 * trees back.
 *
 * Effectful (reads files, runs the version manager); {@linkcode shimOf} is
 * the pure rule table.
 *
 * @module
 */
import { SandboxError } from "./errors.ts";
import { isWithin } from "../common/paths.ts";

/** How to ask a version manager which program its shim stands for. */
export interface Shim {
  /** The manager, e.g. `pyenv`. */
  manager: string;
  /** The command that prints the real program's path. */
  ask: string[];
  /** Environment the manager needs beyond the caller's (its root, as the shim sets it). */
  env: Record<string, string>;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/**
 * Whether a program found at `found` (real path `real`, first bytes
 * `head`) is a version manager's shim, and how to ask it. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const head = '#!/usr/bin/env bash\nexport PYENV_ROOT="/root/.pyenv"\nexec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"\n';
 * assert.deepEqual(shimOf("/root/.pyenv/shims/python3", "/root/.pyenv/shims/python3", head), {
 *   manager: "pyenv",
 *   ask: ["/root/.pyenv/libexec/pyenv", "which", "python3"],
 *   env: { PYENV_ROOT: "/root/.pyenv" },
 * });
 * assert.equal(shimOf("/usr/bin/python3", "/usr/bin/python3.11", "\x7fELF"), null);
 * ```
 */
export function shimOf(found: string, real: string, head: string): Shim | null {
  const name = basename(found);
  // pyenv, rbenv, nodenv, goenv...: `exec "<root>/libexec/<m>" exec "$program"`.
  const env = /exec "([^"]*\/libexec\/([a-z]+env))" exec /.exec(head);
  if (env) {
    const manager = env[2]!;
    const root = new RegExp(`export ${manager.toUpperCase()}_ROOT="([^"]*)"`)
      .exec(head);
    return {
      manager,
      ask: [env[1]!, "which", name],
      env: root ? { [`${manager.toUpperCase()}_ROOT`]: root[1]! } : {},
    };
  }
  // asdf: `exec <path>/asdf exec "<name>" "$@"` (bash shims, 0.15 and older)
  // or `exec asdf exec "<name>" "$@"` (0.16 and later).
  const asdf = /exec ("?)([^"\s]*asdf)\1 exec "/.exec(head);
  if (asdf) return { manager: "asdf", ask: [asdf[2]!, "which", name], env: {} };
  // mise and volta: shims are links to the manager's own binary.
  if (basename(real) === "mise" && name !== "mise") {
    return { manager: "mise", ask: [real, "which", name], env: {} };
  }
  if (basename(real) === "volta-shim") {
    return {
      manager: "volta",
      ask: [`${dirname(real)}/volta`, "which", name],
      env: {},
    };
  }
  return null;
}

/** A program as the sandbox starts it. */
export interface ResolvedProgram {
  /** The program to execute (absolute). */
  program: string;
  /** Directory trees it runs from, outside the system directories: bound read-only. */
  trees: string[];
}

const SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"];

function head(path: string): string {
  try {
    const f = Deno.openSync(path);
    try {
      const buf = new Uint8Array(1024);
      const n = f.readSync(buf) ?? 0;
      return new TextDecoder().decode(buf.subarray(0, n));
    } finally {
      f.close();
    }
  } catch {
    return "";
  }
}

function realOr(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

function isFile(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}

/** The trees `program` runs from: its virtualenv, the real interpreter's prefix. */
function treesOf(program: string): string[] {
  const out: string[] = [];
  const add = (dir: string) => {
    if (dir !== "/" && !SYSTEM.some((s) => isWithin(dir, s))) out.push(dir);
  };
  const venv = dirname(dirname(program));
  if (isFile(`${venv}/pyvenv.cfg`)) {
    add(realOr(venv));
    // `home = /root/.pyenv/versions/3.11.7/bin`: the base interpreter.
    const home = /^home\s*=\s*(\S.*?)\s*$/m.exec(head(`${venv}/pyvenv.cfg`));
    if (home) add(dirname(realOr(home[1]!)));
  }
  // `<prefix>/bin/python3.11`: the install prefix; elsewhere its directory.
  const dir = dirname(realOr(program));
  add(basename(dir) === "bin" ? dirname(dir) : dir);
  return out;
}

const cache = new Map<string, ResolvedProgram>();

/**
 * Resolve the program a sandbox is about to start (absolute, as found on
 * PATH): a version manager's shim becomes the program it stands for
 * (asked in `cwd`, where a `.python-version` may choose), and the trees
 * the program runs from are listed. Cached per program and directory.
 * Throws {@linkcode SandboxError} when a shim cannot say (e.g. pyenv has no
 * such version), naming the shim and its answer.
 *
 * Requires `--allow-read`, `--allow-run` (the manager) and `--allow-env`.
 *
 * @example
 * ```ts ignore
 * resolveProgram("/root/.pyenv/shims/python3", "/work");
 * // { program: "/root/.pyenv/versions/3.11.7/bin/python3", trees: ["/root/.pyenv/versions/3.11.7"] }
 * ```
 */
export function resolveProgram(found: string, cwd: string): ResolvedProgram {
  const key = `${found}\u0000${cwd}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const shim = shimOf(found, realOr(found), head(found));
  const program = shim === null ? found : askShim(found, shim, cwd);
  const trees = treesOf(program);
  // A script's interpreter (`#!/home/me/.venv/bin/python`) runs from its trees too.
  const bang = /^#!\s*(\/\S+)/.exec(head(program));
  if (bang && !/\/env$/.test(bang[1]!)) trees.push(...treesOf(bang[1]!));
  const out = { program, trees: [...new Set(trees)] };
  cache.set(key, out);
  return out;
}

function askShim(found: string, shim: Shim, cwd: string): string {
  const [cmd, ...args] = shim.ask;
  const timeout = isFile("/usr/bin/timeout") ? "/usr/bin/timeout" : null;
  let code = -1;
  let stdout = "";
  let stderr = "";
  try {
    const out = new Deno.Command(timeout ?? cmd!, {
      args: timeout ? ["10", cmd!, ...args] : args,
      cwd,
      env: shim.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    code = out.code;
    stdout = new TextDecoder().decode(out.stdout).trim();
    stderr = new TextDecoder().decode(out.stderr).trim();
  } catch (e) {
    stderr = (e as Error).message;
  }
  const answer = stdout.split("\n").pop() ?? "";
  if (code === 0 && answer.startsWith("/") && isFile(answer)) return answer;
  throw new SandboxError(
    `${found} is a ${shim.manager} shim (a launcher the sandbox cannot run: it starts another program), and \`${shim.manager} which ${
      basename(found)
    }\` did not name the real program: ${
      (stderr.split("\n").pop() || stdout || `exit ${code}`).slice(0, 300)
    }; give the interpreter's path instead`,
  );
}

/**
 * The directories an unprivileged uid cannot enter on the way to `paths`
 * (no search bit for others, e.g. a 0700 home), topmost first and each
 * once. A sandbox dropping to such a uid hides them and binds back only
 * what it must show; nothing else of them opens.
 *
 * Requires `--allow-read`.
 *
 * @example
 * ```ts ignore
 * hiddenAncestors(["/root/.pyenv/versions/3.11.7"]); // ["/root"]
 * ```
 */
export function hiddenAncestors(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let cur = "";
    for (const part of p.split("/").filter((x) => x !== "").slice(0, -1)) {
      cur += `/${part}`;
      if (out.some((o) => isWithin(cur, o))) break;
      let mode: number | null = null;
      try {
        mode = Deno.statSync(cur).mode;
      } catch {
        break;
      }
      if (mode !== null && (mode & 0o001) === 0) {
        out.push(cur);
        break;
      }
    }
  }
  return out;
}
