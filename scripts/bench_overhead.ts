/**
 * Benchmark: the harness overhead curve and where each session's fixed
 * cost goes.
 *
 * For each definition size (default 5, 25 and 100 tools) it writes a
 * synthetic fixture (a Deno MCP SDK server over a small SQLite store: every
 * fifth tool an idempotent write that also gets concurrent attempts, the
 * others read-only) and runs `verity run` on it as a user would (a fresh
 * process, in a cpuacct cgroup of its own when one can be made), timing the
 * whole process. From the report and the `VERITY_PHASE_TIMES` files it
 * prints:
 *
 * - the curve: wall ratio = process wall / (sum of server lifetimes / jobs)
 *   (target at most 1.10 at every size); the harness's own time outside
 *   server lifetimes, split into per-run fixed costs and per-session costs;
 *   and, as load barely moves CPU time, a CPU ratio: the process tree's CPU
 *   over the servers' (the tree's less verity's own threads and its overlap
 *   timers'), with the load average per row;
 * - per session (medians over rounds of the run's sum / sessions): scratch
 *   directories, reset, launch (building the sandboxed launch), the overlap
 *   timer's own time, sandbox evidence, snapshot, and cleanup (off the
 *   session's path), beside the server lifetime;
 * - per run: Deno and modules, definition (load, seed check), launcher,
 *   runs recovery, git probes, verify-reset, assembly, writing, and the
 *   rest up to the process's exit; then the CPU of verity's process per
 *   part of the run.
 *
 * Run: deno run -A scripts/bench_overhead.ts [--sizes 5,25,100] [--rounds 3]
 *      [--jobs 1] [--concurrent-attempts 2] [--main main.ts]...
 *
 * `--main` (repeatable) runs another checkout's main.ts on the same
 * fixtures, interleaved, to compare before and after side by side in one
 * run. A checkout older than the phase times prints the curve only; one
 * older than verify-reset's own phase counts it per session.
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { join, resolve } from "node:path";
import { fixtureRoot } from "./_bench_shared.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    sizes: { type: "string", default: "5,25,100" },
    rounds: { type: "string", default: "3" },
    jobs: { type: "string", default: "1" },
    "concurrent-attempts": { type: "string", default: "2" },
    main: { type: "string", multiple: true },
  },
  strict: true,
});
const ROOT = new URL("..", import.meta.url).pathname;
const MAINS = (values.main?.length ? values.main : [join(ROOT, "main.ts")])
  .map((m) => resolve(m));
const SIZES = values.sizes.split(",").map(Number);
const ROUNDS = Number(values.rounds);
const JOBS = Number(values.jobs);
const ATTEMPTS = Number(values["concurrent-attempts"]);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const SERVER = `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { stateDb, text } from "../_shared/fixture_state.ts";

const n = Number(Deno.args[0]);
const server = new McpServer({ name: "overhead", version: "1.0.0" });
for (let i = 0; i < n; i++) {
  if (i % 5 === 4) {
    server.registerTool("set_" + i, {
      description: "Set item " + i + "'s name.",
      inputSchema: { name: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    }, ({ name }: { name: string }) => {
      stateDb().prepare("UPDATE items SET name = ? WHERE id = ?").run(name, i);
      return text("ok");
    });
  } else {
    server.registerTool("get_" + i, {
      description: "Read item " + i + ".",
      inputSchema: {},
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    }, () => {
      const row = stateDb().prepare("SELECT name FROM items WHERE id = ?").get(i) as { name: string } | undefined;
      return text(row?.name ?? "none");
    });
  }
}
await server.connect(new StdioServerTransport());
`;

/** A fixture of `n` tools under `root` (with the repo's import map and shared helpers). */
async function writeFixture(root: string, n: number): Promise<string> {
  const dir = join(root, `overhead-${n}`);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "server.ts"), SERVER);
  const rows = Array.from({ length: n }, (_, i) => `(${i}, 'item ${i}')`)
    .join(", ");
  await Deno.writeTextFile(
    join(dir, "seed.sql"),
    `CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\nINSERT INTO items VALUES ${rows};\n`,
  );
  const tools = Array.from(
    { length: n },
    (_, i) =>
      i % 5 === 4
        ? `[[tools]]\nname = "set_${i}"\narguments = { name = "fixed" }\n`
        : `[[tools]]\nname = "get_${i}"\narguments = {}\n`,
  ).join("\n");
  await Deno.writeTextFile(
    join(dir, "fixture.toml"),
    `[fixture]\nname = "overhead-${n}"\ncommand = ["{deno}", "run", "server.ts", "${n}"]\n\n[state]\nlocations = ["sqlite:state.db"]\n\n[[adapters]]\nkind = "sqlite"\nlabel = "state.db"\nseed = "seed.sql"\nbusiness = ["items"]\n\n${tools}`,
  );
  return dir;
}

interface Run {
  wallMs: number;
  /** CPU of verity's whole process tree (cpuacct), or null without a group. */
  treeCpuMs: number | null;
  /** The overlap timer processes' own CPU. */
  timerCpuMs: number;
  /** The 1-minute load average when the run ended. */
  load: number;
  serverMs: number;
  sessions: number;
  phases: Record<string, number>;
}

const CPUACCT = "/sys/fs/cgroup/cpuacct";
let groups = 0;

/** A new cpuacct cgroup (v1) for one run, or null when none can be made here. */
function cpuGroup(): string | null {
  const path = `${CPUACCT}/verity-bench-overhead-${Deno.pid}-${groups++}`;
  try {
    Deno.mkdirSync(path);
    return path;
  } catch {
    return null;
  }
}

async function runOnce(main: string, fixture: string): Promise<Run> {
  const runs = await Deno.makeTempDir({ prefix: "verity-bench-overhead-" });
  const phaseFile = join(runs, "phases.json");
  // The whole process tree in a cpuacct group of its own (when one can be
  // made): its CPU, whoever reaps whom inside the sandbox.
  const cg = cpuGroup();
  const t0 = performance.now();
  const out = await new Deno.Command("/bin/sh", {
    args: [
      "-c",
      `${cg === null ? "" : `echo $$ > ${cg}/cgroup.procs && `}exec "$@"`,
      "sh",
      Deno.execPath(),
      "run",
      "-A",
      "--unstable-worker-options",
      "--quiet",
      "--config",
      join(main, "..", "deno.json"),
      main,
      "run",
      fixture,
      "--jobs",
      String(JOBS),
      "--concurrent-attempts",
      String(ATTEMPTS),
      "--runs-dir",
      runs,
      "--quiet",
    ],
    env: { VERITY_PHASE_TIMES: phaseFile },
    stdout: "null",
    stderr: "piped",
  }).output();
  const wallMs = performance.now() - t0;
  let treeCpuMs: number | null = null;
  if (cg !== null) {
    treeCpuMs = Number(Deno.readTextFileSync(`${cg}/cpuacct.usage`).trim()) /
      1e6;
    Deno.removeSync(cg);
  }
  const dir = [...Deno.readDirSync(runs)].find((e) => e.isDirectory);
  if (!dir) {
    throw new Error(
      `no report: ${new TextDecoder().decode(out.stderr).slice(-400)}`,
    );
  }
  const report = JSON.parse(
    await Deno.readTextFile(join(runs, dir.name, "report.json")),
  ) as { sessions: { serverMs: number }[] };
  let phases: Record<string, number> = {};
  try {
    phases = JSON.parse(await Deno.readTextFile(phaseFile));
  } catch {
    // an older checkout: no phase times
  }
  // The overlap timers' own CPU (harness), one file per timer process.
  let timerCpuMs = 0;
  for (const e of Deno.readDirSync(runs)) {
    if (e.name.startsWith("phases.json.timer-")) {
      timerCpuMs += JSON.parse(Deno.readTextFileSync(join(runs, e.name)))
        .cpu_self;
    }
  }
  await Deno.remove(runs, { recursive: true });
  return {
    treeCpuMs,
    timerCpuMs,
    wallMs,
    load: Deno.loadavg()[0]!,
    serverMs: report.sessions.reduce((a, s) => a + s.serverMs, 0),
    sessions: report.sessions.length,
    phases,
  };
}

const root = await fixtureRoot(ROOT, "verity-overhead-fx-");

const results = new Map<string, Run[]>();
for (let r = 0; r < ROUNDS; r++) {
  for (const n of SIZES) {
    const fx = await writeFixture(root, n);
    // Interleaved: every checkout once per size per round.
    for (const main of MAINS) {
      const run = await runOnce(main, fx);
      const key = `${main}\u0000${n}`;
      results.set(key, [...(results.get(key) ?? []), run]);
      console.log(
        `round ${r + 1} ${n} tools ${
          MAINS.length > 1 ? main + " " : ""
        }: wall ${(run.wallMs / 1000).toFixed(1)} s, server lifetimes ${
          (run.serverMs / 1000).toFixed(1)
        } s over ${run.sessions} sessions, overhead ${
          (run.wallMs / (run.serverMs / JOBS)).toFixed(3)
        }`,
      );
    }
  }
}

// Per-session phases, in the order a session runs them (cleanup runs off
// the session's path: shown, not counted in "outside").
const ORDER = [
  "dirs",
  "reset",
  "launch",
  "timer",
  "evidence",
  "snapshot",
  "cleanup",
];
const ON_PATH = ORDER.filter((k) => k !== "cleanup");
const ms = (x: number) => x.toFixed(0);
/** Per-run fixed costs of one run: before the first session, verify-reset and after the battery. */
function perRun(x: Run): number {
  const after = x.wallMs - (x.phases.before_battery ?? 0) -
    (x.phases.battery ?? 0);
  return (x.phases.before_battery ?? 0) + (x.phases.verify_reset ?? 0) +
    after;
}
for (const main of MAINS) {
  if (MAINS.length > 1) console.log(`\n${main}`);
  const phased = (rs: Run[]) => Object.keys(rs[0]!.phases).length > 0;
  console.log(
    `\nharness overhead, --jobs ${JOBS}, medians of ${ROUNDS}; target <= 1.10:
  wall ratio = process wall / (server lifetimes / jobs);
  outside    = wall - server lifetimes / jobs: the harness's own time, split into
               per run (start, verify-reset, after the battery) and per session (the rest / sessions);
  tree cpu   = verity's whole process tree's CPU (cpuacct): compare it between checkouts;
  cpu ratio  = the process tree's CPU / the servers' CPU (the tree's, from a cpuacct group, less
               the harness's: verity's own threads and its overlap timers): CPU is barely moved
               by load; stricter than the wall ratio, since the harness's client side while a
               server runs counts as harness (a server's lifetime is mostly waiting for it)`,
  );
  console.log(
    "  tools sessions   wall s servers s  wall ratio   outside ms  per run ms  per session ms  harness cpu s servers cpu s cpu ratio  tree cpu s  load",
  );
  for (const n of SIZES) {
    const rs = results.get(`${main}\u0000${n}`)!;
    const o = median(rs.map((x) => x.wallMs / (x.serverMs / JOBS)));
    const outside = rs.map((x) => x.wallMs - x.serverMs / JOBS);
    const cpu = phased(rs) && rs[0]!.phases.cpu_self !== undefined &&
      rs[0]!.treeCpuMs !== null;
    // Harness CPU: verity's own (every thread) and its overlap timers'.
    const harness = (x: Run) => x.phases.cpu_self! + x.timerCpuMs;
    const cells = [
      String(n).padStart(7),
      String(rs[0]!.sessions).padStart(8),
      (median(rs.map((x) => x.wallMs)) / 1000).toFixed(1).padStart(8),
      (median(rs.map((x) => x.serverMs)) / 1000).toFixed(1).padStart(9),
      `${o.toFixed(3)} ${o <= 1.10 ? "met" : "NOT"}`.padStart(11),
      ms(median(outside)).padStart(12),
      (phased(rs) ? ms(median(rs.map(perRun))) : "-").padStart(11),
      (phased(rs)
        ? median(rs.map((x) =>
          (x.wallMs - x.serverMs / JOBS - perRun(x)) /
          x.sessions
        )).toFixed(1)
        : median(outside.map((v, i) => v / rs[i]!.sessions)).toFixed(1))
        .padStart(15),
      (cpu ? (median(rs.map(harness)) / 1000).toFixed(2) : "-").padStart(
        11,
      ),
      (cpu
        ? (median(rs.map((x) => x.treeCpuMs! - harness(x))) / 1000).toFixed(2)
        : "-").padStart(10),
      (cpu
        ? median(rs.map((x) => x.treeCpuMs! / (x.treeCpuMs! - harness(x))))
          .toFixed(3)
        : "-").padStart(10),
      (rs[0]!.treeCpuMs === null
        ? "-"
        : (median(rs.map((x) => x.treeCpuMs!)) / 1000).toFixed(2)).padStart(
          11,
        ),
      median(rs.map((x) => x.load)).toFixed(1).padStart(5),
    ];
    console.log(cells.join(" "));
  }
  console.log(
    "\nper session (ms, median over rounds of run total / sessions; cleanup is off the session's path):",
  );
  console.log(
    "  tools  " + ORDER.map((k) => k.padStart(9)).join("") +
      "   on path   server",
  );
  for (const n of SIZES) {
    const rs = results.get(`${main}\u0000${n}`)!;
    if (!phased(rs)) continue;
    const cell = (k: string) =>
      median(rs.map((x) => (x.phases[k] ?? 0) / x.sessions));
    const onPath = median(
      rs.map((x) =>
        ON_PATH.reduce((a, k) => a + (x.phases[k] ?? 0), 0) / x.sessions
      ),
    );
    console.log(
      `  ${String(n).padStart(5)}  ${
        ORDER.map((k) => cell(k).toFixed(1).padStart(9)).join("")
      }  ${onPath.toFixed(1).padStart(8)} ${
        cell("server").toFixed(1).padStart(8)
      }`,
    );
  }
  console.log(
    "\nper run (ms, medians): start = process start to the first session (Deno and modules, definition: load + seed check, launcher, scratch recovery, runs recovery, git probes started); verify-reset = two resets and snapshots; after = the battery's end to process exit (assemble, write: stored form, file and ledger; text and exit)",
  );
  for (const n of SIZES) {
    const rs = results.get(`${main}\u0000${n}`)!;
    if (!phased(rs)) continue;
    const m = (k: string) => median(rs.map((x) => x.phases[k] ?? 0));
    const after = median(
      rs.map((x) =>
        x.wallMs - (x.phases.before_battery ?? 0) - (x.phases.battery ?? 0)
      ),
    );
    const seedCheck = median(
      rs.map((x) =>
        x.phases.definition_load === undefined
          ? NaN
          : x.phases.definition! - x.phases.definition_load
      ),
    );
    console.log(
      `  ${String(n).padStart(3)} tools: in all ${
        ms(median(rs.map(perRun)))
      } = start ${ms(m("before_battery"))} (Deno and modules ${
        ms(m("process_to_command"))
      }, definition ${ms(m("definition"))}${
        Number.isNaN(seedCheck) ? "" : ` of which seed check ${ms(seedCheck)}`
      }, launcher ${ms(m("launcher"))}, scratch ${
        rs[0]!.phases.scratch === undefined ? "-" : ms(m("scratch"))
      }, recover ${ms(m("recover"))}, git ${ms(m("git"))}) + verify-reset ${
        rs[0]!.phases.verify_reset === undefined ? "-" : ms(m("verify_reset"))
      } + after ${ms(after)} (assemble ${ms(m("assemble"))}, write ${
        ms(m("write"))
      })`,
    );
    if (rs[0]!.phases.cpu_setup !== undefined) {
      console.log(
        `      CPU of verity's process (ms): Deno and modules ${
          ms(m("cpu_process_to_command"))
        }, setup to the battery ${ms(m("cpu_setup"))}, battery ${
          ms(m("cpu_battery"))
        } (${
          median(rs.map((x) => x.phases.cpu_battery! / x.sessions)).toFixed(1)
        } per session, client side included), after the battery ${
          ms(m("cpu_after"))
        }; overlap timers ${ms(median(rs.map((x) => x.timerCpuMs)))}`,
      );
    }
  }
}
console.log(
  `\nload average at the end: ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  } on ${navigator.hardwareConcurrency} cores`,
);
await Deno.remove(root, { recursive: true });
