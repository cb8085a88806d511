/**
 * The latency `verity guard` adds to each tool call: the TypeScript SDK's
 * client calls the same server (`tests/data/guard/server.ts`, its `echo`
 * tool) over a direct connection and through the guard, in one process,
 * one call on each connection per round (their order alternating), after a
 * warm-up. Prints each connection's median and p99 and, for the guard, the
 * added latency: its median and p99 minus the direct connection's. The
 * guard runs twice: sandboxed (its default; the server under Deno's
 * permissions and audit log) and with --no-sandbox (the proxy alone).
 *
 * Usage: deno run --allow-all scripts/bench_guard.ts [--calls N] [--warmup N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    calls: { type: "string", default: "500" },
    warmup: { type: "string", default: "50" },
  },
  strict: true,
});
const calls = Number(values.calls);
const warmup = Number(values.warmup);
for (const [k, v] of [["calls", calls], ["warmup", warmup]] as const) {
  if (!Number.isInteger(v) || v < (k === "calls" ? 10 : 0)) {
    console.error(`bench_guard: --${k} expects an integer, got ${v}`);
    Deno.exit(2);
  }
}

const ROOT = new URL("..", import.meta.url).pathname;
const SERVER = [Deno.execPath(), "run", `${ROOT}tests/data/guard/server.ts`];
const dir = await Deno.makeTempDir({ prefix: "verity-bench-guard-" });
const manifest = `${dir}/manifest.json`;
const cap = await new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    `${ROOT}main.ts`,
    "capture",
    "--out",
    manifest,
    "--",
    ...SERVER,
  ],
  stdout: "null",
  stderr: "inherit",
}).output();
if (!cap.success) Deno.exit(1);

function guard(extra: string[], ledger: string): string[] {
  return [
    Deno.execPath(),
    "run",
    "-A",
    "--quiet",
    `${ROOT}main.ts`,
    "guard",
    "--manifest",
    manifest,
    "--ledger",
    `${dir}/${ledger}`,
    ...extra,
    "--",
    ...SERVER,
  ];
}

const configs = [
  { label: "direct", command: SERVER },
  { label: "guard, sandboxed", command: guard([], "a.json") },
  { label: "guard, --no-sandbox", command: guard(["--no-sandbox"], "b.json") },
];

const env: Record<string, string> = {};
for (const k of ["PATH", "HOME", "DENO_DIR"]) {
  const v = Deno.env.get(k);
  if (v !== undefined) env[k] = v;
}
const clients: Client[] = [];
for (const c of configs) {
  const client = new Client({ name: "bench-guard", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: c.command[0]!,
      args: c.command.slice(1),
      env,
      cwd: ROOT,
      stderr: "ignore",
    }),
  );
  await client.listTools();
  clients.push(client);
}

const times: number[][] = configs.map(() => []);
for (let round = 0; round < warmup + calls; round++) {
  const order = configs.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (const i of order) {
    const t0 = performance.now();
    await clients[i]!.callTool({ name: "echo", arguments: { text: "bench" } });
    if (round >= warmup) times[i]!.push(performance.now() - t0);
  }
}
for (const c of clients) await c.close();

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
const ms = (x: number) => `${x.toFixed(3)} ms`;
const [load] = Deno.loadavg();
console.log(
  `${calls} calls per connection after ${warmup} warm-up, interleaved; load ${
    load?.toFixed(1)
  }`,
);
const base = {
  median: quantile(times[0]!, 0.5),
  p99: quantile(times[0]!, 0.99),
};
configs.forEach((c, i) => {
  const median = quantile(times[i]!, 0.5);
  const p99 = quantile(times[i]!, 0.99);
  console.log(
    `${c.label.padEnd(20)} median ${ms(median)}  p99 ${ms(p99)}${
      i === 0
        ? ""
        : `  added: median ${ms(median - base.median)}, p99 ${
          ms(p99 - base.p99)
        }`
    }`,
  );
});
await Deno.remove(dir, { recursive: true });
