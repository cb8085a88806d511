/**
 * The cost of `listen = "tcp"` under bubblewrap: median time of one session
 * of the same PostgreSQL server (`fixtures/pg-honest-readonly`, node-postgres
 * from `{postgres_url}`) reaching its database over the Unix socket (the
 * default) and over TCP, where under bubblewrap the server is held until
 * the relay into its network namespace listens (lib/wire/port_relay.ts).
 * Timed: spawn → initialize → `tools/call get_note` answered (its first
 * query opens the connection), then the close (the relay stops with it).
 * The deno backend (no relay: `--allow-net=127.0.0.1:<port>`) is measured
 * alongside for reference. Configurations are interleaved round-robin; the
 * session's reset (create from template) and drop are outside the timing.
 *
 * Usage: deno run --allow-all scripts/bench_pg_tcp.ts [--runs N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { join } from "node:path";
import { loadDefinition } from "../lib/definition/load.ts";
import type { Definition } from "../lib/definition/types.ts";
import {
  type DefinitionLauncher,
  openLauncher,
} from "../lib/launcher/launcher.ts";
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
    `bench_pg_tcp: --runs expects an integer >= 3, got ${
      JSON.stringify(values.runs)
    }`,
  );
  Deno.exit(2);
}

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const probe = await probeBackends();
if (!probe.bubblewrap) {
  console.error(`bench_pg_tcp: bubblewrap is unavailable: ${probe.reason}`);
  Deno.exit(2);
}
const base = await loadDefinition(join(ROOT, "fixtures/pg-honest-readonly"));

interface Config {
  label: string;
  backend: "deno" | "bubblewrap";
  listen: "socket" | "tcp";
}
const configs: Config[] = [];
for (const backend of ["bubblewrap", "deno"] as const) {
  for (const listen of ["socket", "tcp"] as const) {
    configs.push({ label: `${listen} / ${backend}`, backend, listen });
  }
}

function variant(c: Config): Definition {
  return {
    ...base,
    sandbox: c.backend,
    adapters: base.adapters.map((a) =>
      a.kind === "postgres" ? { ...a, listen: c.listen } : a
    ),
  };
}

const work = await Deno.makeTempDir({ prefix: "verity-bench-pg-tcp-" });
const answered = new Map<string, number[]>(configs.map((c) => [c.label, []]));
const closed = new Map<string, number[]>(configs.map((c) => [c.label, []]));
const launchers: DefinitionLauncher[] = [];
let n = 0;
try {
  for (const [i, c] of configs.entries()) {
    const l = await openLauncher(variant(c), { commandName: "bench_pg_tcp" });
    await l.startState(join(work, `cluster-${i}`));
    launchers.push(l);
  }
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
      const r = await s.client.request("tools/call", {
        name: "get_note",
        arguments: { id: 2 },
      }, 60_000);
      const t1 = performance.now();
      await s.client.close(1000);
      const t2 = performance.now();
      const text = r.status === "ok"
        ? JSON.stringify((r as { result: unknown }).result)
        : "";
      if (s.failure || !text.includes("nuts")) {
        console.error(
          `bench_pg_tcp: ${c.label}: ${
            s.failure?.message ?? JSON.stringify(r).slice(0, 300)
          }`,
        );
        Deno.exit(1);
      }
      answered.get(c.label)!.push(t1 - t0);
      closed.get(c.label)!.push(t2 - t1);
      await launcher.release(dirs.state);
      await Deno.remove(root, { recursive: true });
    }
  }
} finally {
  for (const l of launchers) await l.close().catch(() => {});
  await Deno.remove(work, { recursive: true }).catch(() => {});
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

console.log(
  `pg-honest-readonly: spawn to get_note answered, and close; median of ${runs} (ms)`,
);
console.log(
  "backend      socket     tcp   tcp/socket   close: socket     tcp",
);
for (const backend of ["bubblewrap", "deno"]) {
  const a = median(answered.get(`socket / ${backend}`)!);
  const b = median(answered.get(`tcp / ${backend}`)!);
  const ca = median(closed.get(`socket / ${backend}`)!);
  const cb = median(closed.get(`tcp / ${backend}`)!);
  console.log(
    `${backend.padEnd(11)} ${a.toFixed(0).padStart(7)} ${
      b.toFixed(0).padStart(7)
    }   ${(b / a).toFixed(2).padStart(10)}   ${ca.toFixed(0).padStart(13)} ${
      cb.toFixed(0).padStart(7)
    }`,
  );
}
