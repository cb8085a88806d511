/**
 * The cost of the sandbox: median time from spawn to the `tools/list`
 * response (spawn, initialize, initialized, tools/list), with and without
 * each backend, for a Deno SDK server (fixtures/honest-closedworld) and a
 * native Python server (fixtures/native-python). Configurations are
 * interleaved round-robin so machine drift hits them all alike; state is
 * seeded outside the timed part.
 *
 * Usage: deno run --allow-all scripts/bench_sandbox.ts [--runs N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { DatabaseSync } from "node:sqlite";
import {
  prepareLaunch,
  probeBackends,
  resolveDeno,
  resolvePython,
} from "../lib/sandbox/sandbox.ts";
import type { SandboxBackend } from "../lib/sandbox/types.ts";
import { openSession } from "../lib/wire/session.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "15" } },
  strict: true,
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 3) {
  console.error(
    `bench_sandbox: --runs expects an integer >= 3, got ${
      JSON.stringify(values.runs)
    }`,
  );
  Deno.exit(2);
}

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const deno = resolveDeno();
const python = await resolvePython();
const probe = await probeBackends();

interface Config {
  server: string;
  fixture: string;
  command: string[];
  backend: SandboxBackend;
}

const configs: Config[] = [];
for (const backend of ["none", "deno", "bubblewrap"] as const) {
  if (backend === "bubblewrap" && !probe.bubblewrap) continue;
  configs.push({
    server: "deno SDK",
    fixture: "honest-closedworld",
    command: [deno, "run", "server.ts"],
    backend,
  });
}
for (const backend of ["none", "bubblewrap"] as const) {
  if (backend === "bubblewrap" && !probe.bubblewrap) continue;
  configs.push({
    server: "python raw",
    fixture: "native-python",
    command: [python, "server.py"],
    backend,
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function once(
  c: Config,
  work: string,
  i: number,
): Promise<{ prepareMs: number; openMs: number }> {
  const dir = `${work}/${c.fixture}-${c.backend}-${i}`;
  const state = `${dir}/state`;
  await Deno.mkdir(state, { recursive: true });
  const db = new DatabaseSync(`${state}/state.db`);
  db.exec(await Deno.readTextFile(`${ROOT}/fixtures/${c.fixture}/seed.sql`));
  db.close();
  const t0 = performance.now();
  const launch = prepareLaunch({
    command: c.command,
    env: {},
    stateDir: state,
    definitionDir: `${ROOT}/fixtures/${c.fixture}`,
    readPaths: [],
    backend: c.backend,
    evidenceDir: `${dir}/evidence`,
    label: "bench",
  });
  const t1 = performance.now();
  const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
  const t2 = performance.now();
  await s.client.close(1000);
  if (s.failure) {
    throw new Error(`${c.server} ${c.backend}: ${s.failure.message}`);
  }
  return { prepareMs: t1 - t0, openMs: t2 - t1 };
}

const work = await Deno.makeTempDir({ prefix: "verity-bench-sandbox-" });
const results = new Map<Config, { prepare: number[]; open: number[] }>();
for (const c of configs) results.set(c, { prepare: [], open: [] });
try {
  // One warm-up round (Deno's code cache, the page cache), not counted.
  for (const c of configs) await once(c, work, -1);
  for (let i = 0; i < runs; i++) {
    for (const c of configs) {
      const r = await once(c, work, i);
      results.get(c)!.prepare.push(r.prepareMs);
      results.get(c)!.open.push(r.openMs);
    }
  }
} finally {
  await Deno.remove(work, { recursive: true }).catch(() => {});
}

console.log(
  `spawn -> tools/list response, median of ${runs} runs (interleaved), ${navigator.hardwareConcurrency} cores`,
);
console.log(
  `bubblewrap: ${
    probe.bubblewrap ? "available" : `unavailable (${probe.reason})`
  }\n`,
);
console.log(
  [
    "server",
    "backend",
    "median ms",
    "min ms",
    "max ms",
    "vs none",
    "prepare ms",
  ].map((h, i) => i < 2 ? h.padEnd(12) : h.padStart(i === 5 ? 20 : 11)).join(
    "  ",
  ),
);
for (const c of configs) {
  const r = results.get(c)!;
  const base = configs.find((x) =>
    x.server === c.server && x.backend === "none"
  )!;
  const baseMedian = median(results.get(base)!.open);
  const m = median(r.open);
  console.log(
    [
      c.server.padEnd(12),
      c.backend.padEnd(12),
      m.toFixed(1).padStart(11),
      Math.min(...r.open).toFixed(1).padStart(11),
      Math.max(...r.open).toFixed(1).padStart(11),
      `${(m / baseMedian).toFixed(2)}x (${m - baseMedian >= 0 ? "+" : ""}${
        (m - baseMedian).toFixed(1)
      } ms)`.padStart(20),
      median(r.prepare).toFixed(2).padStart(11),
    ].join("  "),
  );
}
