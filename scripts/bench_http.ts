/**
 * The cost of speaking HTTP: median time from launch to the `tools/list`
 * response (start, initialize, initialized, tools/list) for the same
 * published server, `@modelcontextprotocol/server-everything`, over stdio
 * and over Streamable HTTP, under each sandbox backend. Over HTTP the time
 * includes picking a port, waiting until the server listens, and (bubblewrap)
 * starting the relay into its network namespace. Configurations are
 * interleaved round-robin so machine drift hits them all alike; the state
 * reset is outside the timed part.
 *
 * Usage: deno run --allow-all scripts/bench_http.ts [--runs N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { join } from "node:path";
import { loadDefinition } from "../lib/definition/load.ts";
import type { Definition } from "../lib/definition/types.ts";
import { openLauncher } from "../lib/launcher/launcher.ts";
import { probeBackends } from "../lib/sandbox/sandbox.ts";
import { openSession } from "../lib/wire/session.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "11" } },
  strict: true,
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 3) {
  console.error(
    `bench_http: --runs expects an integer >= 3, got ${
      JSON.stringify(values.runs)
    }`,
  );
  Deno.exit(2);
}

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const probe = await probeBackends();
const backends: ("deno" | "bubblewrap")[] = probe.bubblewrap
  ? ["deno", "bubblewrap"]
  : ["deno"];

interface Config {
  label: string;
  transport: "stdio" | "http";
  backend: "deno" | "bubblewrap";
  def: Definition;
}

const configs: Config[] = [];
for (const backend of backends) {
  for (const transport of ["stdio", "http"] as const) {
    const def = await loadDefinition(
      join(ROOT, "tests/data/http", `everything-${transport}`),
    );
    configs.push({
      label: `${transport} / ${backend}`,
      transport,
      backend,
      def: { ...def, sandbox: backend },
    });
  }
}

const work = await Deno.makeTempDir({ prefix: "verity-bench-http-" });
const times = new Map<string, number[]>(configs.map((c) => [c.label, []]));
const launchers = await Promise.all(
  configs.map((c) => openLauncher(c.def, { commandName: "bench_http" })),
);
let n = 0;
try {
  for (let round = 0; round < runs; round++) {
    for (const [i, c] of configs.entries()) {
      const launcher = launchers[i]!;
      const root = join(work, String(++n));
      const dirs = { state: join(root, "state"), evidence: join(root, "ev") };
      await Deno.mkdir(dirs.evidence, { recursive: true });
      await launcher.reset(dirs.state);
      const t0 = performance.now();
      const started = await launcher.start(dirs, "bench", 60_000);
      const s = await openSession(started.target, { timeoutMs: 60_000 });
      const t = performance.now() - t0;
      await s.client.close(1000);
      if (s.failure) {
        console.error(`bench_http: ${c.label}: ${s.failure.message}`);
        Deno.exit(1);
      }
      times.get(c.label)!.push(t);
      await Deno.remove(root, { recursive: true });
    }
  }
} finally {
  await Deno.remove(work, { recursive: true }).catch(() => {});
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

console.log(
  `spawn to tools/list, server-everything 2026.8.31, median of ${runs} (ms)`,
);
console.log("backend      stdio    http   http/stdio");
for (const backend of backends) {
  const a = median(times.get(`stdio / ${backend}`)!);
  const b = median(times.get(`http / ${backend}`)!);
  console.log(
    `${backend.padEnd(11)} ${a.toFixed(0).padStart(6)}  ${
      b.toFixed(0).padStart(6)
    }   ${(b / a).toFixed(2)}`,
  );
}
