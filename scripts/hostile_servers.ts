/**
 * Hostile servers against verity, end to end: flood (1 MB notifications,
 * never answers), pages (endless 15 MB tools/list pages), drip (pages just
 * inside the per-answer timeout), deep (a 100,000-level serverInfo), orphan
 * (a setsid() grandchild, then verity itself is SIGKILLed) and sparse (a
 * 3 GiB sparse file left in the state directory during an audit battery),
 * overlap-slow (a server slow only inside concurrent attempts: they pass
 * their deadline) and reality-drip (`verity reality` on 20 tools each
 * answered just inside the per-answer timeout: the shared session's
 * deadline ends it), badutf8 (an `initialize` answer that is not UTF-8:
 * named at once, not after the timeout) and permflood (3 million
 * environment permission checks per call: the Deno permission log's 64 MiB
 * budget ends each session, the log never read whole).
 *
 * For each case it prints verity's peak RSS (VmHWM, sampled from /proc),
 * wall time, exit code and the processes left behind. Every figure must be
 * bounded and "survivors" must be 0; the script exits 1 otherwise.
 *
 *   deno run --allow-all scripts/hostile_servers.ts
 *
 * Linux only (reads /proc).
 *
 * @module
 */
const ROOT = new URL("../", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;
const SERVER = `${ROOT}tests/hostile/server.ts`;
const dec = new TextDecoder();

interface Row {
  name: string;
  peakMiB: number;
  wallS: number;
  exit: string;
  survivors: number;
  note: string;
}

function peakKiB(pid: number): number | null {
  try {
    const s = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /VmHWM:\s+(\d+) kB/.exec(s);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function survivors(marker: string): Promise<number> {
  const out = await new Deno.Command("pgrep", {
    args: ["-f", marker],
    stdout: "piped",
  }).output();
  const pids = dec.decode(out.stdout).split("\n").filter((l) => l.trim());
  // Not this script, not pgrep.
  return pids.filter((p) => Number(p) !== Deno.pid).length;
}

async function run(
  name: string,
  args: string[],
  marker: string,
  options: { killAfterMs?: number; note?: (stderr: string) => string } = {},
): Promise<Row> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let peak = 0;
  const sampler = setInterval(() => {
    const k = peakKiB(child.pid);
    if (k !== null && k > peak) peak = k;
  }, 50);
  if (options.killAfterMs !== undefined) {
    setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // gone
      }
    }, options.killAfterMs);
  }
  const stdoutP = new Response(child.stdout).text();
  const stderrP = new Response(child.stderr).text();
  const status = await child.status;
  clearInterval(sampler);
  const stderr = await stderrP;
  const stdout = await stdoutP;
  const wallS = (performance.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 500));
  return {
    name,
    peakMiB: peak / 1024,
    wallS,
    exit: status.signal ? status.signal : String(status.code),
    survivors: await survivors(marker),
    note: options.note?.(stdout + stderr) ??
      (stderr.trim().split("\n").pop() ?? "").replace(/^.*?: [^:]*: /, "")
        .slice(0, 90),
  };
}

const rows: Row[] = [];
const tools = (mode: string, ...rest: string[]) => [
  "tools",
  "--timeout",
  "10",
  "--",
  Deno.execPath(),
  "run",
  SERVER,
  mode,
  ...rest,
];
rows.push(await run("flood", tools("flood"), `${SERVER} flood`));
rows.push(await run("pages", tools("pages", "15"), `${SERVER} pages`));
rows.push(await run("drip", tools("drip", "900"), `${SERVER} drip`));
rows.push(
  await run("badutf8", tools("badutf8"), `${SERVER} badutf8`, {
    note: (e) =>
      /answered with invalid UTF-8 at byte \d+/.test(e)
        ? "named at once: invalid UTF-8 at byte 118"
        : "NO UTF-8 REASON",
  }),
);
rows.push(
  await run("deep", [...tools("deep")], `${SERVER} deep`, {
    note: (e) => e.includes("Maximum call stack") ? "STACK OVERFLOW" : "listed",
  }),
);
rows.push(
  await run(
    "orphan",
    [
      "tools",
      "--no-sandbox",
      "--timeout",
      "60",
      "--",
      "sh",
      `${ROOT}tests/hostile/orphan.sh`,
    ],
    "verity-orphan-",
    { killAfterMs: 3000, note: () => "verity SIGKILLed after 3 s" },
  ),
);
const runs = await Deno.makeTempDir({ prefix: "verity-hostile-runs-" });
rows.push(
  await run(
    "sparse",
    ["run", `${ROOT}tests/hostile/sparse`, "--runs-dir", runs],
    `${ROOT}tests/hostile/sparse/server.ts`,
    {
      note: (out) =>
        out.includes("state budget exceeded")
          ? "sessions ended: state budget exceeded"
          : "NO BUDGET REASON",
    },
  ),
);
rows.push(
  await run(
    "overlap-slow",
    [
      "run",
      `${ROOT}tests/hostile/overlap-slow`,
      "--concurrent-attempts",
      "2",
      "--runs-dir",
      runs,
    ],
    `${ROOT}tests/hostile/overlap-slow/server.ts`,
    {
      note: (out) =>
        /concurrent_idempotence +true +INCONCLUSIVE:TIMED_OUT/.test(out)
          ? "attempts past their deadline: INCONCLUSIVE:TIMED_OUT"
          : "NO TIMEOUT REASON",
    },
  ),
);
// A definition of its own for the permission flood (the server may run as
// another user: the directory is world-readable).
const flood = await Deno.makeTempDir({ prefix: "verity-hostile-permflood-" });
await Deno.chmod(flood, 0o755);
await Deno.copyFile(SERVER, `${flood}/server.ts`);
await Deno.writeTextFile(
  `${flood}/target.toml`,
  `[target]
name = "permflood"
command = ["{deno}", "run", "server.ts", "permflood", "3"]
timeouts = { call = 120 }

[state]
locations = []

[[tools]]
name = "t"
arguments = {}
`,
);
rows.push(
  await run(
    "permflood",
    ["run", flood, "--audit", "--jobs", "2", "--runs-dir", runs],
    `${flood}/server.ts`,
    {
      note: (out) =>
        /audit log passed 67108864 bytes/.test(out)
          ? "sessions ended: permission log over 64 MiB"
          : "NO BUDGET REASON",
    },
  ),
);
await Deno.remove(flood, { recursive: true });
await Deno.remove(runs, { recursive: true });
rows.push(
  await run(
    "reality-drip",
    [
      "reality",
      "--timeout",
      "1",
      "--session-deadline",
      "5",
      "--",
      Deno.execPath(),
      "run",
      SERVER,
      "slowcalls",
      "900",
    ],
    `${SERVER} slowcalls`,
    {
      note: (out) =>
        /ENDED EARLY: deadline: /.test(out)
          ? "shared session ended at its deadline"
          : "NO DEADLINE REASON",
    },
  ),
);

const header = ["case", "peak RSS MiB", "wall s", "exit", "survivors", "note"];
const table = [
  header,
  ...rows.map((r) => [
    r.name,
    r.peakMiB.toFixed(0),
    r.wallS.toFixed(1),
    r.exit,
    String(r.survivors),
    r.note,
  ]),
];
const widths = header.map((_, i) =>
  Math.max(...table.map((row) => row[i]!.length))
);
for (const row of table) {
  console.log(row.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
}
// Bounds: 1 GiB of RSS, 60 s, nobody left behind.
const bad = rows.filter((r) =>
  r.peakMiB > 1024 || r.wallS > 60 || r.survivors > 0 ||
  /STACK|NO BUDGET|NO TIMEOUT|NO DEADLINE|NO UTF-8/.test(r.note)
);
if (bad.length > 0) {
  console.error(`unbounded: ${bad.map((r) => r.name).join(", ")}`);
  Deno.exit(1);
}
