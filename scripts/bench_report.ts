/**
 * Benchmark: report size and the memory of writing it.
 *
 * 1. Size without repetitions: every published report under results/
 *    (`verity.report/1`, as written: snapshots whole, frames inline, one
 *    space of indentation) against the same evidence in the stored form
 *    verity writes now (`verity.report/2`: the seed once, other snapshots
 *    as patches, frames once by digest, no indentation), uncompressed and
 *    gzip'd; both must re-derive the same verdicts (verifyReport finds no
 *    problem in either).
 * 2. A large store: a SQLite fixture whose seed holds `--rows` rows
 *    (default 1,000,000, 27 MB; a comma list runs each size; a seed
 *    over 128 MiB, about 5M rows, is refused) and whose one tool renames
 *    one row, run by `verity run` of
 *    each checkout given with `--main` (default this one), under
 *    /usr/bin/time: the report's size and schema, the process's peak RSS
 *    and wall time, side by side, and each later checkout's ratios to the
 *    first (the previous form). Then `verity report verify` of each
 *    report by the checkout that wrote it (a `verity.report/3` report
 *    rebuilds its seed from the fixture, `--definition`): exit, peak RSS,
 *    wall.
 *
 * Run: deno run -A scripts/bench_report.ts [--rows 1000000[,10000000]]
 *      [--concurrent-attempts 2] [--main old/main.ts --main main.ts]
 *      [--skip-audit] [--skip-published]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { join, resolve } from "node:path";
import { readEvidenceText } from "../lib/evidence/files.ts";
import { packReport, reportText } from "../lib/report/pack.ts";
import { verifyReport } from "../lib/report/verify.ts";
import { fixtureRoot } from "./_bench_shared.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "1000000" },
    "concurrent-attempts": { type: "string", default: "2" },
    main: { type: "string", multiple: true },
    "skip-audit": { type: "boolean", default: false },
    "skip-published": { type: "boolean", default: false },
  },
  strict: true,
});
const ROOT = new URL("..", import.meta.url).pathname;
const MAINS = (values.main?.length ? values.main : [join(ROOT, "main.ts")])
  .map((m) => resolve(m));

async function gzipSize(bytes: Uint8Array): Promise<number> {
  const s = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return (await new Response(s).arrayBuffer()).byteLength;
}

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;

if (!values["skip-published"]) await published();

async function published() {
  console.log(
    "1. published reports: verity.report/1 as written vs the stored form (verity.report/2)",
  );
  console.log(
    "   report                                   tools   /1 bytes   /2 bytes  ratio   /1 gz    /2 gz  verify /1 /2",
  );
  const ratios: number[] = [];
  for (
    const e of [...Deno.readDirSync(join(ROOT, "results"))].sort((a, b) =>
      a.name.localeCompare(b.name)
    )
  ) {
    const path = join(ROOT, "results", e.name, "report.json.gz");
    let text: string;
    try {
      text = (await readEvidenceText(path)).text;
    } catch {
      continue;
    }
    const v1 = JSON.parse(text);
    const packed = packReport(v1);
    const v2text = reportText(packed);
    const v1bytes = new TextEncoder().encode(text);
    const v2bytes = new TextEncoder().encode(v2text);
    const p1 = verifyReport(v1).length;
    const p2 = verifyReport(JSON.parse(v2text)).length;
    const ratio = v1bytes.length / v2bytes.length;
    ratios.push(ratio);
    console.log(
      `   ${e.name.padEnd(40)} ${
        String(v1.observations.tools.length).padStart(5)
      } ${mb(v1bytes.length).padStart(10)} ${mb(v2bytes.length).padStart(10)} ${
        ratio.toFixed(2).padStart(5)
      }x ${mb(await gzipSize(v1bytes)).padStart(8)} ${
        mb(await gzipSize(v2bytes)).padStart(8)
      }  ${p1 === 0 ? "ok" : p1} ${p2 === 0 ? "ok" : p2}`,
    );
  }
  ratios.sort((a, b) => a - b);
  console.log(
    `   median ratio /1 : /2 = ${
      ratios[Math.floor(ratios.length / 2)]!.toFixed(2)
    }x`,
  );
}

/** One whole process under /usr/bin/time: exit, wall s, peak RSS KiB, stderr. */
async function timed(
  main: string,
  args: string[],
): Promise<{ code: number; wall: number; kb: number; err: string[] }> {
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "%e %M",
      Deno.execPath(),
      "run",
      "-A",
      "--unstable-worker-options",
      "--quiet",
      "--config",
      join(main, "..", "deno.json"),
      main,
      ...args,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  const [wall, kb] = err.at(-1)!.split(" ").map(Number);
  return { code: out.code, wall: wall!, kb: kb!, err };
}

if (!values["skip-audit"]) {
  for (const rows of values.rows.split(",").map(Number)) await audit(rows);
}

async function audit(rows: number) {
  console.log(
    `\n2. a ${
      rows.toLocaleString("en")
    }-row SQLite store, each call renames one row (--concurrent-attempts ${
      values["concurrent-attempts"]
    }, --jobs 1)`,
  );
  const root = await fixtureRoot(ROOT, "verity-bench-report-");
  const fx = join(root, "fx");
  await Deno.mkdir(fx);
  await Deno.copyFile(
    join(ROOT, "fixtures", "liar-destructive", "server.ts"),
    join(fx, "server.ts"),
  );
  await Deno.writeTextFile(
    join(fx, "seed.sql"),
    `CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows})
INSERT INTO items (id, name) SELECT x, 'item number ' || x FROM c;
`,
  );
  await Deno.writeTextFile(
    join(fx, "fixture.toml"),
    (await Deno.readTextFile(
      join(ROOT, "fixtures", "liar-destructive", "fixture.toml"),
    )).replace('name = "liar-destructive"', 'name = "scale"'),
  );
  const written: { main: string; size: number; kb: number; wall: number }[] =
    [];
  for (const main of MAINS) {
    const runs = join(root, `runs-${MAINS.indexOf(main)}`);
    const r = await timed(main, [
      "run",
      fx,
      "--jobs",
      "1",
      "--concurrent-attempts",
      values["concurrent-attempts"],
      "--runs-dir",
      runs,
      "--quiet",
    ]);
    let size = 0;
    let schema = "?";
    let path: string | null = null;
    try {
      const dir = [...Deno.readDirSync(runs)].find((d) => d.isDirectory)!;
      path = join(runs, dir.name, "report.json");
      size = (await Deno.stat(path)).size;
      const f = await Deno.open(path);
      const head = new Uint8Array(200);
      const n = await f.read(head) ?? 0;
      f.close();
      schema = /"schema":"([^"]+)"/.exec(
        new TextDecoder().decode(head.subarray(0, n)),
      )?.[1] ?? "?";
    } catch {
      console.log(`   ${main}: no report: ${r.err.slice(-3).join(" | ")}`);
    }
    const base = written[0];
    written.push({ main, size, kb: r.kb, wall: r.wall });
    console.log(
      `   ${main}: exit ${r.code}, ${schema}, report ${mb(size)}, peak RSS ${
        (r.kb / 1024).toFixed(0)
      } MiB, wall ${r.wall.toFixed(1)} s${
        base && size > 0
          ? ` (vs the first: report ${
            (base.size / size).toFixed(1)
          }x smaller, peak ${(base.kb / r.kb).toFixed(2)}x lower, wall ${
            (base.wall / r.wall).toFixed(2)
          }x faster)`
          : ""
      }`,
    );
    if (path !== null) {
      const v = await timed(main, [
        "report",
        "verify",
        path,
        ...(schema === "verity.report/3" ? ["--definition", fx] : []),
      ]);
      console.log(
        `     report verify: exit ${v.code}, peak RSS ${
          (v.kb / 1024).toFixed(0)
        } MiB, wall ${v.wall.toFixed(1)} s`,
      );
    }
  }
  await Deno.remove(root, { recursive: true });
}
