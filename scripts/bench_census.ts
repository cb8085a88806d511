/**
 * Benchmark: census throughput and memory, the figures of docs/scale.md.
 *
 * Runs `verity census <list>` (already prepared) with `--jobs 1` and with
 * `--jobs J` side by side (the order alternates between rounds), each into a
 * fresh directory, and measures per run:
 * - wall seconds, and servers per wall hour;
 * - CPU seconds of the whole process tree (verity, the sandboxes and every
 *   server it started), read from a cgroup v1 `cpuacct` group the run is
 *   put in (as root; otherwise bash's `times` for the waited-for children,
 *   a lower bound), and servers per CPU-core hour;
 * - peak RSS of the whole process tree (verity and every live descendant,
 *   summed, sampled every 100 ms from /proc).
 *
 * Prints the medians per side and the median per-round ratio jobs-J/jobs-1.
 * Linux only (reads /proc).
 *
 * Run: deno run -A scripts/bench_census.ts [--list census/example.toml] [--jobs 2] [--rounds 3]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    list: { type: "string", default: "census/example.toml" },
    jobs: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
  },
  strict: true,
});
const jobs = Number(values.jobs);
const rounds = Number(values.rounds);
if (
  !Number.isInteger(jobs) || jobs < 2 || !Number.isInteger(rounds) || rounds < 1
) {
  console.error("bench_census: --jobs expects an integer >= 2, --rounds >= 1");
  Deno.exit(2);
}
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const PAGE = 4096;

/** Every live pid whose parent chain reaches `root`, with `root`. */
function tree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(e.name), Number(after[1]));
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    let p: number | undefined = pid;
    for (let i = 0; i < 64 && p !== undefined && p > 1; i++) {
      if (p === root) {
        out.push(pid);
        break;
      }
      p = parent.get(p);
    }
  }
  return out;
}

function rssBytes(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    try {
      const f = Deno.readTextFileSync(`/proc/${pid}/statm`).split(" ");
      sum += Number(f[1]) * PAGE;
    } catch {
      // gone
    }
  }
  return sum;
}

const CPUACCT = "/sys/fs/cgroup/cpuacct";
let groups = 0;

/** A new cpuacct cgroup (v1) for one run, or null when none can be made here. */
function cpuGroup(): string | null {
  const path = `${CPUACCT}/verity-bench-census-${Deno.pid}-${groups++}`;
  try {
    Deno.mkdirSync(path);
    return path;
  } catch {
    return null;
  }
}

interface Measure {
  wallS: number;
  cpuS: number;
  peakMiB: number;
  servers: number;
}

async function once(j: number): Promise<Measure> {
  const out = await Deno.makeTempDir({ prefix: "verity-bench-census-" });
  await Deno.remove(out);
  const cmd = [
    Deno.execPath(),
    "run",
    "-A",
    MAIN,
    "census",
    values.list!,
    "--out",
    out,
    "--jobs",
    String(j),
  ]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const cg = cpuGroup();
  const enter = cg === null ? "" : `echo $$ > ${cg}/cgroup.procs; `;
  const t0 = performance.now();
  const child = new Deno.Command("bash", {
    args: ["-c", `${enter}${cmd} >/dev/null 2>&1; code=$?; times; exit $code`],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(tree(child.pid)));
  }, 100);
  const r = await child.output();
  clearInterval(timer);
  const wallS = (performance.now() - t0) / 1000;
  if (r.code !== 0) throw new Error(`census exited ${r.code}`);
  // `times`: the shell's own user/sys, then its children's.
  const lines = new TextDecoder().decode(r.stdout).trim().split("\n");
  const secs = (s: string) => {
    const m = /(\d+)m([\d.]+)s/.exec(s);
    return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
  };
  const [u, s] = (lines[lines.length - 1] ?? "").split(/\s+/);
  let cpuS = secs(u ?? "") + secs(s ?? "");
  if (cg !== null) {
    cpuS = Number(Deno.readTextFileSync(`${cg}/cpuacct.usage`).trim()) / 1e9;
    Deno.removeSync(cg);
  }
  const doc = JSON.parse(await Deno.readTextFile(`${out}/census.json`));
  await Deno.remove(out, { recursive: true });
  return {
    wallS,
    cpuS,
    peakMiB: peak / 1024 / 1024,
    servers: doc.servers.length,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const one: Measure[] = [];
const many: Measure[] = [];
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? [1, jobs] : [jobs, 1];
  for (const j of order) {
    const m = await once(j);
    (j === 1 ? one : many).push(m);
    console.error(
      `round ${r + 1} jobs ${j}: ${m.servers} servers, ${
        m.wallS.toFixed(1)
      } s wall, ${m.cpuS.toFixed(1)} s CPU, peak ${m.peakMiB.toFixed(0)} MiB`,
    );
  }
}

function row(label: string, ms: Measure[]): string {
  const wall = median(ms.map((m) => m.wallS));
  const cpu = median(ms.map((m) => m.cpuS));
  const n = ms[0]!.servers;
  return `${label.padEnd(8)} wall ${wall.toFixed(1)} s (${
    (n * 3600 / wall).toFixed(0)
  } servers/h)  CPU ${cpu.toFixed(1)} s (${(cpu / n).toFixed(2)} s/server, ${
    (n * 3600 / cpu).toFixed(0)
  } servers per CPU-core hour)  peak RSS ${
    median(ms.map((m) => m.peakMiB)).toFixed(0)
  } MiB`;
}
console.log(
  `census of ${values.list} (${
    one[0]!.servers
  } servers), ${rounds} round(s), medians, ${navigator.hardwareConcurrency} cores here`,
);
console.log(row("jobs 1", one));
console.log(row(`jobs ${jobs}`, many));
const ratio = (f: (m: Measure) => number) =>
  median(one.map((m, i) => f(many[i]!) / f(m))).toFixed(2);
console.log(
  `jobs ${jobs} / jobs 1: wall ${ratio((m) => m.wallS)}x, CPU ${
    ratio((m) => m.cpuS)
  }x, peak RSS ${ratio((m) => m.peakMiB)}x`,
);
