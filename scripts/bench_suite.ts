/**
 * Benchmark: the whole fixture suite at `--jobs 1` and `--jobs 2`, side by
 * side in one run.
 *
 * Prints, per jobs setting, the suite's wall time, the sum of server process
 * lifetimes (from the reports), and the harness overhead:
 * wall / (sum of server lifetimes / jobs). Then the ratio of the two wall
 * times (target at most 0.65 on 2 cores) and whether each overhead is within
 * 1.25.
 *
 * Usage: deno run -A scripts/bench_suite.ts [--rounds N] [--fixtures a,b]
 *        [--concurrent-attempts N]
 */
import { parseArgs } from "./_args.ts";
import { join } from "node:path";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "1" },
    fixtures: { type: "string" },
    "concurrent-attempts": { type: "string", default: "20" },
  },
  strict: true,
});
const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = join(ROOT, "main.ts");
const rounds = Number(values.rounds);

function battery(): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(join(ROOT, "fixtures"))) {
    try {
      const t = Deno.readTextFileSync(
        join(ROOT, "fixtures", e.name, "fixture.toml"),
      );
      if (t.includes("[tools.expected.")) out.push(e.name);
    } catch {
      // not a battery fixture
    }
  }
  return out.sort();
}

const fixtures = values.fixtures ? values.fixtures.split(",") : battery();

interface Measure {
  wallMs: number;
  serverMs: number;
  sessions: number;
}

async function suite(jobs: number): Promise<Measure> {
  const runsDir = await Deno.makeTempDir({ prefix: "verity-bench-suite-" });
  const t0 = performance.now();
  let serverMs = 0;
  let sessions = 0;
  for (const f of fixtures) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--unstable-worker-options",
        MAIN,
        "run",
        f,
        "--json",
        "--jobs",
        String(jobs),
        "--concurrent-attempts",
        String(values["concurrent-attempts"]),
        "--runs-dir",
        runsDir,
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    if (report.expectations.matched !== report.expectations.total) {
      console.error(
        `warning: ${f} at --jobs ${jobs}: ${report.expectations.matched}/${report.expectations.total} matched`,
      );
    }
    for (const s of report.sessions) {
      serverMs += s.serverMs;
      sessions++;
    }
  }
  const wallMs = performance.now() - t0;
  await Deno.remove(runsDir, { recursive: true });
  return { wallMs, serverMs, sessions };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

console.log(`fixtures: ${fixtures.join(", ")}`);
console.log(
  `rounds: ${rounds}, concurrent attempts per mode: ${
    values["concurrent-attempts"]
  }, cores: ${navigator.hardwareConcurrency}`,
);
const results: Record<number, Measure[]> = { 1: [], 2: [] };
for (let r = 0; r < rounds; r++) {
  for (const jobs of [1, 2]) {
    const m = await suite(jobs);
    results[jobs]!.push(m);
    console.log(
      `round ${r + 1} --jobs ${jobs}: wall ${
        (m.wallMs / 1000).toFixed(1)
      } s, server lifetimes ${
        (m.serverMs / 1000).toFixed(1)
      } s over ${m.sessions} sessions`,
    );
  }
}
const wall1 = median(results[1]!.map((m) => m.wallMs));
const wall2 = median(results[2]!.map((m) => m.wallMs));
const over = (jobs: number) => {
  const ms = results[jobs]!;
  return median(ms.map((m) => m.wallMs / (m.serverMs / jobs)));
};
console.log("");
console.log(`median wall --jobs 1: ${(wall1 / 1000).toFixed(1)} s`);
console.log(`median wall --jobs 2: ${(wall2 / 1000).toFixed(1)} s`);
console.log(
  `ratio jobs2/jobs1: ${(wall2 / wall1).toFixed(3)} (target <= 0.65): ${
    wall2 / wall1 <= 0.65 ? "met" : "NOT met"
  }`,
);
for (const jobs of [1, 2]) {
  const o = over(jobs);
  console.log(
    `harness overhead --jobs ${jobs}: ${
      o.toFixed(3)
    } (wall / (sum of server lifetimes / jobs); target <= 1.25): ${
      o <= 1.25 ? "met" : "NOT met"
    }`,
  );
}
