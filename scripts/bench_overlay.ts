/**
 * The cost of observing writes anywhere: one session's time (launch, spawn,
 * handshake, one call, close, and observing the state it left) on the same
 * fixture and tool, today's way (declared adapters only: a snapshot of the
 * state directory) against the overlay's (the same, plus the overlay
 * mounted under the server and its changeset read and decoded after), for
 * a tool that writes nothing under both backends and for one that writes
 * outside its state (whose writes then succeed, into the overlay). The
 * two arms alternate session by session (which goes first alternates
 * too), so machine drift hits both alike; medians, and the median of each
 * pair's ratio (the two sessions of a pair run back to back, so it is the
 * figure drift moves least). Then where each arm's time goes, phase by
 * phase (medians): the launch prepared (with the overlay, its directories
 * made), spawn to the tool listing (the launch line: with the overlay,
 * `unshare` and `mount` before bubblewrap), the call, close to exit (with
 * the overlay, its mount namespace torn down), the snapshot, the changeset
 * read. Target: at most 1.10x for the tool that writes nothing (the
 * instrument's own cost).
 *
 * Requires root on Linux (where the overlay can be had), and `verity prepare
 * memory` once for the published server's case.
 *
 * Usage: deno run --allow-all scripts/bench_overlay.ts [--sessions N]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { loadDefinition } from "../lib/definition/load.ts";
import {
  type DefinitionLauncher,
  openLauncher,
} from "../lib/launcher/launcher.ts";
import type { Definition } from "../lib/definition/types.ts";
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

/** The cases: a fixture, a tool and its arguments. */
const CASES = [
  {
    fixture: "fixtures/attempts-bubblewrap",
    tool: "count_notes",
    args: {},
    what: "bubblewrap, a tool that writes nothing",
  },
  {
    fixture: "fixtures/attempts-deno",
    tool: "count_notes",
    args: {},
    what: "deno backend (inside bubblewrap), a tool that writes nothing",
  },
  {
    fixture: "fixtures/writes-anywhere",
    tool: "lookup_note",
    args: { id: "n1" },
    what:
      "bubblewrap, a tool that writes under /tmp and beside its code (refused without the overlay, kept with it)",
  },
  {
    // A published server as audits run it (needs `verity prepare memory`).
    fixture: "targets/memory",
    tool: "read_graph",
    args: {},
    what:
      "@modelcontextprotocol/server-memory 2026.8.31 (deno backend, from the prepared cache), a tool that writes nothing",
  },
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const work = await Deno.makeTempDir({ prefix: "verity-bench-overlay-" });
await Deno.chmod(work, 0o755);

/** The phases of one session, in order (ms each). */
const PHASES = [
  "prepare",
  "spawn to listed",
  "call",
  "close to exit",
  "snapshot",
  "changeset",
] as const;

/** One session: ms for each phase, and the paths its changeset holds. */
async function session(
  c: (typeof CASES)[number],
  launcher: DefinitionLauncher,
  def: Definition,
  i: number,
  overlay: boolean,
): Promise<{ phases: number[]; paths: number }> {
  const root = `${work}/s${i}-${overlay ? "o" : "d"}`;
  const dirs = { state: `${root}/state`, evidence: `${root}/evidence` };
  await Deno.mkdir(dirs.evidence, { recursive: true });
  await launcher.reset(dirs.state);
  const t = [performance.now()];
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
  t.push(performance.now());
  const s = await openSession(launch.spawn, { timeoutMs: 30_000 });
  if (s.failure !== null) throw new Error(`open: ${s.failure.message}`);
  t.push(performance.now());
  const r = await s.client.request("tools/call", {
    name: c.tool,
    arguments: c.args,
  }, 30_000);
  if (r.status !== "ok") throw new Error(`call: ${JSON.stringify(r)}`);
  t.push(performance.now());
  await s.client.close();
  t.push(performance.now());
  await takeSnapshot(def, dirs.state);
  t.push(performance.now());
  let paths = 0;
  if (launch.writes?.observed) {
    paths = readChangeset(launch.writes.layout).changes.length;
  }
  t.push(performance.now());
  await Deno.remove(root, { recursive: true });
  return { phases: t.slice(1).map((x, k) => x - t[k]!), paths };
}

const total = (phases: number[]) => phases.reduce((a, b) => a + b, 0);
const breakdown: string[] = [];

console.log(
  `bench_overlay: ${n} sessions per arm and case, interleaved one by one; medians (load ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  })`,
);
console.log(
  "| case | declared adapters only (ms) | overlay + changeset (ms) | reading the changeset (ms) | paths | ratio of medians | median pair ratio |",
);
console.log("|---|---|---|---|---|---|---|");
try {
  for (const c of CASES) {
    const def = await loadDefinition(
      new URL(`../${c.fixture}`, import.meta.url).pathname,
    );
    const launcher = await openLauncher(def);
    try {
      // One of each first, untimed: caches, the probes, the module graph.
      await session(c, launcher, def, -1, false);
      await session(c, launcher, def, -2, true);
      const declared: number[][] = [];
      const overlaid: number[][] = [];
      let paths = 0;
      for (let i = 0; i < n; i++) {
        const first = i % 2 === 0;
        const a = await session(c, launcher, def, i, !first);
        const b = await session(c, launcher, def, i, first);
        const [d, o] = first ? [a, b] : [b, a];
        declared.push(d.phases);
        overlaid.push(o.phases);
        paths = o.paths;
      }
      const a = median(declared.map(total));
      const b = median(overlaid.map(total));
      const pairs = median(
        overlaid.map((o, i) => total(o) / total(declared[i]!)),
      );
      console.log(
        `| ${c.fixture} \`${c.tool}\`: ${c.what} | ${a.toFixed(1)} | ${
          b.toFixed(1)
        } | ${
          median(overlaid.map((o) => o[PHASES.length - 1]!)).toFixed(1)
        } | ${paths} | ${(b / a).toFixed(3)}x | ${pairs.toFixed(3)}x |`,
      );
      const cell = (arm: number[][], k: number) =>
        median(arm.map((p) => p[k]!));
      breakdown.push(
        `| ${c.fixture} | ${
          PHASES.map((_, k) =>
            `${cell(declared, k).toFixed(1)} / ${cell(overlaid, k).toFixed(1)}`
          ).join(" | ")
        } |`,
      );
    } finally {
      await launcher.close();
    }
  }
  console.log("target: at most 1.10x for a tool that writes nothing");
  console.log("\nwhere the time goes, declared / overlay (ms, medians):");
  console.log(`| case | ${PHASES.join(" | ")} |`);
  console.log(`|---|${PHASES.map(() => "---|").join("")}`);
  for (const row of breakdown) console.log(row);
} finally {
  await Deno.remove(work, { recursive: true }).catch(() => {});
}
