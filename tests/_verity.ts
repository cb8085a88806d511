/**
 * Running verity as a user would, in a process of its own: `deno run -A`
 * on the checkout's main.ts with its deno.json, colour off. One copy for
 * every end-to-end suite. Test-only.
 *
 * @module
 */
const ROOT = new URL("..", import.meta.url).pathname;

/** What a verity process did. */
export interface VerityRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time of the process, in milliseconds. */
  ms: number;
}

/** Options of {@linkcode runVerity}. */
export interface VerityOptions {
  /** Working directory. @default the test process's */
  cwd?: string;
  /** Environment added to the inherited one (`NO_COLOR=1` always). @default {} */
  env?: Record<string, string>;
  /** Flags for `deno run` before main.ts (`--v8-flags=...`). @default [] */
  denoFlags?: string[];
}

/** Run `verity <args>` and wait for it. */
export async function runVerity(
  args: readonly string[],
  options: VerityOptions = {},
): Promise<VerityRun> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "--config",
      `${ROOT}deno.json`,
      ...(options.denoFlags ?? []),
      `${ROOT}main.ts`,
      ...args,
    ],
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    env: { NO_COLOR: "1", ...(options.env ?? {}) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    ms: performance.now() - t0,
  };
}

/** Whether the npm registry answers (the npx commands need it once). */
export async function registryReachable(): Promise<boolean> {
  try {
    const child = new Deno.Command("npm", {
      args: ["view", "@modelcontextprotocol/server-memory", "version"],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const ok = (await child.status).success;
    clearTimeout(timer);
    return ok;
  } catch {
    return false;
  }
}
