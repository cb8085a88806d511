/**
 * Which sandbox a server runs under: the policy. Pure.
 *
 * Audits refuse to run a server unsandboxed unless `--no-sandbox` is given.
 * A definition may name its backend; otherwise `deno run` commands get the
 * deno backend and anything else bubblewrap.
 *
 * @module
 */
import { SandboxError } from "./errors.ts";
import { isDenoProgram } from "./build_launch.ts";
import type { SandboxBackend } from "./types.ts";

/** Options for {@linkcode chooseBackend}. */
export interface ChooseBackendOptions {
  /**
   * The backend the definition names; undefined picks one from the command.
   * @default {undefined}
   */
  declared?: SandboxBackend | undefined;
  /** The server command after placeholder substitution. */
  command: readonly string[];
  /**
   * `--no-sandbox` was given: run unsandboxed (recorded in the report).
   * @default {false}
   */
  noSandbox?: boolean;
  /**
   * An audit of a third-party target (true) or a fixture run (false).
   * A fixture may declare `sandbox = "none"`; an audit may not.
   * @default {true}
   */
  audit?: boolean;
  /** Whether bubblewrap works here, and why not (from `probeBackends`). */
  bubblewrap: { available: boolean; reason: string | null };
  /** The resolved `{deno}` binary, to recognise Deno commands. */
  deno: string;
  /**
   * Where the choice came from, for messages (e.g. the definition file).
   * @default {"server"}
   */
  source?: string;
}

/** The chosen backend and why, for the report. */
export interface BackendChoice {
  backend: SandboxBackend;
  why: string;
}

/** Whether `command` is `deno run …` (by the resolved `{deno}` or a program named deno). */
export function isDenoRun(command: readonly string[], deno: string): boolean {
  const first = command[0];
  return first !== undefined && isDenoProgram(first, deno) &&
    command[1] === "run";
}

/**
 * Pick the backend for one server, or throw {@linkcode SandboxError} when
 * the policy forbids running it.
 *
 * @example
 * ```ts
 * const c = chooseBackend({
 *   command: ["/usr/bin/python3", "server.py"], deno: "/usr/bin/deno",
 *   bubblewrap: { available: true, reason: null },
 * });
 * console.assert(c.backend === "bubblewrap");
 * ```
 */
export function chooseBackend(opts: ChooseBackendOptions): BackendChoice {
  const source = opts.source ?? "server";
  const audit = opts.audit ?? true;
  const bw = opts.bubblewrap;
  const refuse = (why: string): never => {
    throw new SandboxError(
      `${source}: ${why}; pass --no-sandbox to run it unsandboxed`,
    );
  };
  if (opts.noSandbox) return { backend: "none", why: "--no-sandbox" };
  const isDeno = isDenoRun(opts.command, opts.deno);
  switch (opts.declared) {
    case "none":
      if (audit) {
        refuse('sandbox = "none": audits refuse to run a server unsandboxed');
      }
      return { backend: "none", why: 'the fixture declares sandbox = "none"' };
    case "deno":
      if (!isDeno) {
        throw new SandboxError(
          `${source}: sandbox = "deno" needs a "{deno} run …" command, got ${
            JSON.stringify(opts.command.join(" "))
          }`,
        );
      }
      return { backend: "deno", why: 'declared sandbox = "deno"' };
    case "bubblewrap":
      if (!bw.available) {
        refuse(
          `sandbox = "bubblewrap" but bubblewrap is unavailable: ${
            bw.reason ?? "unknown reason"
          }`,
        );
      }
      return { backend: "bubblewrap", why: 'declared sandbox = "bubblewrap"' };
    case undefined:
      if (isDeno) return { backend: "deno", why: "a deno run command" };
      if (bw.available) {
        return { backend: "bubblewrap", why: "not a deno run command" };
      }
      return refuse(
        `no sandbox for a non-Deno command: bubblewrap is unavailable (${
          bw.reason ?? "unknown reason"
        })`,
      );
  }
}
