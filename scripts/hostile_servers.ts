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
 * named at once, not after the timeout), permflood (3 million environment
 * permission checks per call: the Deno permission log's 64 MiB budget ends
 * each session, the log never read whole), and the escapes of issue 32:
 * names (a tool name with a newline, `[target.allow]` and ESC[2K, through
 * `init` and `run`), seed-escape (a SQLite seed's ATTACH, a PostgreSQL
 * seed's `\! id > f`), import-secret (a literal `import()` of a JSON file
 * outside the server) and pg-hidden-writes (a "read-only" PostgreSQL tool
 * that hides its insert from the observer behind a FORCEd row-level security
 * policy).
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
  options: {
    killAfterMs?: number;
    note?: (stderr: string) => string;
    cwd?: string;
  } = {},
): Promise<Row> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
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

// Escapes (issue 32): nothing a server or a seed sends gets out.
// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const escapes = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "verity-hostile-escapes-" }),
);
await Deno.chmod(escapes, 0o755);
const NAMES = `${ROOT}tests/hostile/names`;
rows.push(
  await run(
    "names",
    ["init", "t", "--", Deno.execPath(), "run", `${NAMES}/server.ts`],
    `${NAMES}/server.ts`,
    {
      cwd: escapes,
      note: (out) => {
        const toml = Deno.readTextFileSync(`${escapes}/t/target.toml`);
        return /^\[target\.allow\]/m.test(toml) || RAW_CONTROL.test(toml)
          ? "ALLOW LIVE in target.toml"
          : RAW_CONTROL.test(out)
          ? "RAW CONTROL in output"
          : "init: the name stays in its comment";
      },
    },
  ),
);
rows.push(
  await run(
    "names-run",
    ["run", NAMES, "--runs-dir", `${escapes}/runs`],
    `${NAMES}/server.ts`,
    {
      note: (out) =>
        RAW_CONTROL.test(out)
          ? "RAW CONTROL in output"
          : "run: control characters shown escaped",
    },
  ),
);
const seeds = [
  ["sqlite", "ATTACH DATABASE 'escaped.db' AS x;"],
  ["postgres", "\\! id > escaped.txt"],
] as const;
for (const [kind, attack] of seeds) {
  const def = `${escapes}/seed-${kind}`;
  await Deno.mkdir(def);
  await Deno.writeTextFile(
    `${def}/seed.sql`,
    `CREATE TABLE t (id int PRIMARY KEY);\n${attack}\n`,
  );
  await Deno.writeTextFile(
    `${def}/fixture.toml`,
    `[fixture]\nname = "seed-${kind}"\ncommand = ["{deno}", "run", "x.ts"]\n` +
      `[state]\nlocations = ["${kind}:app"]\n` +
      `[[adapters]]\nkind = "${kind}"\nlabel = "app"\nseed = "seed.sql"\nbusiness = ["${
        kind === "sqlite" ? "t" : "public.t"
      }"]\n[[tools]]\nname = "x"\narguments = {}\n`,
  );
  rows.push(
    await run(
      `seed-escape (${kind})`,
      ["run", def, "--runs-dir", `${escapes}/runs`],
      `${def}/`,
      {
        cwd: def,
        note: (out) =>
          [...Deno.readDirSync(def)].some((e) => e.name.startsWith("escaped"))
            ? "SEED ESCAPED"
            : (/seed\.sql:2: .* is not allowed in a seed/.exec(out)?.[0] ??
              "SEED NOT REFUSED"),
      },
    ),
  );
}
const secretDir = `${escapes}/import/a/b/c`;
await Deno.mkdir(`${secretDir}/seed/data`, { recursive: true });
for (const f of ["server.ts", "fixture.toml", "seed/data/note.txt"]) {
  await Deno.copyFile(
    `${ROOT}tests/hostile/import-secret/${f}`,
    `${secretDir}/${f}`,
  );
}
for (const d of ["import", "import/a", "import/a/b", "import/a/b/c"]) {
  await Deno.chmod(`${escapes}/${d}`, 0o755);
}
const canary = `secret-${crypto.randomUUID()}`;
await Deno.writeTextFile(
  `${escapes}/import/secret.json`,
  JSON.stringify({ canary }),
);
rows.push(
  await run(
    "import-secret",
    ["run", secretDir, "--runs-dir", `${escapes}/import-runs`],
    `${secretDir}/server.ts`,
    {
      note: (out) => {
        const report = /^report: (.*)$/m.exec(out)?.[1];
        if (report === undefined) return "NO REPORT";
        const text = Deno.readTextFileSync(report);
        return text.includes(canary) ? "SECRET READ" : text.includes(
            `"path":"${escapes}/import/secret.json","in_state":false,"allowed":false`,
          )
          ? "refused, recorded in privilege.reads"
          : "NO RECORD of the refused read";
      },
    },
  ),
);
const HIDDEN = `${ROOT}fixtures/pg-hidden-writes`;
rows.push(
  await run(
    "pg-hidden-writes",
    [
      "run",
      HIDDEN,
      "--tool",
      "search_notes",
      "--runs-dir",
      `${escapes}/pg-runs`,
    ],
    `${HIDDEN}/server.ts`,
    {
      note: (out) =>
        /search_notes\s+read_only\s+true\s+VIOLATION/.test(out)
          ? "the row behind the policy observed: read_only VIOLATION"
          : "HIDDEN WRITE not observed",
    },
  ),
);
await Deno.remove(escapes, { recursive: true });

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
  /STACK|NO BUDGET|NO TIMEOUT|NO DEADLINE|NO UTF-8|ALLOW LIVE|RAW CONTROL|SEED|SECRET READ|NO RECORD|NO REPORT|HIDDEN WRITE/
    .test(r.note)
);
if (bad.length > 0) {
  console.error(`unbounded: ${bad.map((r) => r.name).join(", ")}`);
  Deno.exit(1);
}
