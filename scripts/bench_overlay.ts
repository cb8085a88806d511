/**
 * The cost of observing writes anywhere: one session's time (launch, spawn,
 * handshake, one call, close, and observing the state it left) on the same
 * fixture (fixtures/writes-anywhere, bubblewrap, `lookup_note`), today's
 * way (declared adapters only: a snapshot of the state directory) against
 * the overlay's (the same, plus the overlay mounted under the server and
 * its changeset read and decoded after). The two are interleaved, one
 * session each in turn, so machine drift hits both alike; medians.
 * Target: at most 1.10x.
 *
 * Requires root on Linux (where the overlay can be had).
 *
 * Usage: deno run --allow-all scripts/bench_overlay.ts [--sessions N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { loadDefinition } from "../lib/definition/load.ts";
import { openLauncher } from "../lib/launcher/launcher.ts";
import { prepareLaunch } from "../lib/sandbox/sandbox.ts";
import { openSession } from "../lib/wire/session.ts";
import { takeSnapshot } from "../lib/state_io/snapshot.ts";
import { readChangeset } from "../lib/state_io/changeset.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { sessions: { type: "string", default: "25" } },
  strict: true,
});
const n = Number(values.sessions);
if (!Number.isInteger(n) || n < 3) {
  console.error(
    `bench_overlay: --sessions expects an integer >= 3, got ${
      JSON.stringify(values.sessions)
    }`,
  );
  Deno.exit(2);
}

const def = await loadDefinition(
  new URL("../fixtures/writes-anywhere", import.meta.url).pathname,
);
const launcher = await openLauncher(def);
const work = await Deno.makeTempDir({ prefix: "verity-bench-overlay-" });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One session; ms for the whole of it and for reading the changeset. */
async function session(
  i: number,
  overlay: boolean,
): Promise<{ ms: number; changesetMs: number; paths: number }> {
  const root = `${work}/s${i}-${overlay ? "o" : "d"}`;
  const dirs = { state: `${root}/state`, evidence: `${root}/evidence` };
  await Deno.mkdir(dirs.evidence, { recursive: true });
  await launcher.reset(dirs.state);
  const t0 = performance.now();
  const launch = prepareLaunch({
    ...launcher.request(dirs, "once-1"),
    overlay,
  });
  if (overlay !== launch.writes?.observed) {
    throw new Error(
      `overlay ${overlay ? "wanted" : "not wanted"}, got ${
        JSON.stringify(launch.writes)
      }`,
    );
  }
  const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
  const r = await s.client.request("tools/call", {
    name: "lookup_note",
    arguments: { id: "n1" },
  }, 30_000);
  if (r.status !== "ok") throw new Error(`call: ${JSON.stringify(r)}`);
  await s.client.close();
  await takeSnapshot(def, dirs.state);
  const t1 = performance.now();
  let paths = 0;
  if (launch.writes?.observed) {
    paths = (await readChangeset(launch.writes.layout)).changes.length;
  }
  const t2 = performance.now();
  await Deno.remove(root, { recursive: true });
  return { ms: t2 - t0, changesetMs: t2 - t1, paths };
}

try {
  // One of each first, untimed: caches, the probes, the module graph.
  await session(-1, false);
  await session(-2, true);
  const declared: number[] = [];
  const overlaid: number[] = [];
  const reading: number[] = [];
  let paths = 0;
  for (let i = 0; i < n; i++) {
    declared.push((await session(i, false)).ms);
    const o = await session(i, true);
    overlaid.push(o.ms);
    reading.push(o.changesetMs);
    paths = o.paths;
  }
  const a = median(declared);
  const b = median(overlaid);
  console.log(
    `bench_overlay: ${n} sessions each, interleaved (fixtures/writes-anywhere, lookup_note, bubblewrap)`,
  );
  console.log(`  declared adapters only     median ${a.toFixed(1)} ms`);
  console.log(
    `  overlay + changeset        median ${
      b.toFixed(1)
    } ms (reading the changeset: ${
      median(reading).toFixed(1)
    } ms, ${paths} paths)`,
  );
  console.log(
    `  ratio ${(b / a).toFixed(3)}x (target at most 1.10x)  load ${
      Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
    }`,
  );
} finally {
  await launcher.close();
  await Deno.remove(work, { recursive: true }).catch(() => {});
}
