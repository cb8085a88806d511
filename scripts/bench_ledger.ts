/**
 * Benchmark: verify a 100,000-block ledger against raw SHA-256 over the
 * same bytes, side by side in one run.
 *
 * - verify: `verifyLedgerFile`, what `verity ledger verify` does: read the
 *   file a line at a time, parse each block line with the project's
 *   reader, check it is the block's canonical line, hash it, check index,
 *   prev_hash, hash and the head;
 * - raw: one SHA-256 per block (node:crypto) over exactly the bytes the
 *   chain hashes (`prev_hash + body`, UTF-8, each block's bytes ready in a
 *   node Buffer): the floor for any chain verifier.
 *
 * The two alternate within each round; the ratio is taken per round (the
 * load of a shared machine changes between rounds more than within one)
 * and its median printed, with the medians of each; the same for the CPU
 * time the process spent (all its threads, so the collector's helpers
 * count against verify), which a loaded machine changes less than wall
 * time. Peak memory: the peak
 * resident set (VmHWM) of a child process that verifies the ledger once,
 * beside that of a child that only starts (the runtime itself).
 *
 * Records: `--records synthetic` (the default) gives every block a
 * report-digest record of its own, all of type `report`;
 * `--records published` cycles through the blocks of the ledgers published
 * under `results/`.
 *
 * Run: deno run -A scripts/bench_ledger.ts [--blocks N] [--rounds R] [--records synthetic|published]
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import process from "node:process";
import { parseArgs } from "./_args.ts";
import { blockBody, type Entry } from "../lib/evidence/chain.ts";
import { parsePythonJson } from "../lib/evidence/canonical.ts";
import { appendBlocks, verifyLedgerFile } from "../lib/evidence/ledger.ts";
import { ledgerRecord } from "./_bench_shared.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    blocks: { type: "string", default: "100000" },
    rounds: { type: "string", default: "7" },
    records: { type: "string", default: "synthetic" },
    // Internal: run one verify (or nothing) and print the peak RSS.
    child: { type: "string" },
    ledger: { type: "string" },
    head: { type: "string" },
  },
  strict: true,
});

/** The peak resident set of this process, in MiB (VmHWM), or NaN. */
function peakMiB(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(
      Deno.readTextFileSync("/proc/self/status"),
    );
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

if (values.child !== undefined) {
  if (values.child === "verify") {
    const v = await verifyLedgerFile(values.ledger!, values.head!);
    if (!v.ok) throw new Error("verify refused the ledger");
  }
  console.log(peakMiB().toFixed(1));
  Deno.exit(0);
}

const N = Number(values.blocks);
const ROUNDS = Number(values.rounds);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The blocks of every ledger published under results/ (type and record). */
function publishedEntries(): Entry[] {
  const root = new URL("../results/", import.meta.url);
  const out: Entry[] = [];
  for (
    const e of [...Deno.readDirSync(root)].sort((a, b) =>
      a.name < b.name ? -1 : 1
    )
  ) {
    let text: string;
    try {
      text = Deno.readTextFileSync(new URL(`${e.name}/ledger.json`, root));
    } catch {
      continue;
    }
    const doc = parsePythonJson(text) as { blocks: Entry[] };
    for (const b of doc.blocks) out.push({ type: b.type, record: b.record });
  }
  return out;
}

if (values.records !== "synthetic" && values.records !== "published") {
  console.error(
    `bench_ledger.ts: --records must be synthetic or published, not ${
      JSON.stringify(values.records)
    }`,
  );
  Deno.exit(2);
}
const published = values.records === "published" ? publishedEntries() : [];
const entries: Entry[] = Array.from(
  { length: N },
  (_, i) =>
    values.records === "published"
      ? published[i % published.length]!
      : { type: "report", record: ledgerRecord(i) },
);
const dir = await Deno.makeTempDir({ prefix: "verity-bench-ledger-" });
const path = `${dir}/ledger.json`;
const { head } = await appendBlocks(path, entries);
const bytes = (await Deno.stat(path)).size;

// Exactly the bytes the chain hashes, one input per block.
const doc = parsePythonJson(await Deno.readTextFile(path)) as {
  blocks: { prev_hash: string; type: string; record: unknown }[];
};
const inputs = doc.blocks.map((b) =>
  Buffer.from(b.prev_hash + blockBody(b.type, b.record), "utf8")
);
const hashed = inputs.reduce((n, b) => n + b.length, 0);

/** CPU time this process has spent, in ms (user and system, all threads). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const verifyMs: number[] = [];
const rawMs: number[] = [];
const ratios: number[] = [];
const cpu = {
  verify: [] as number[],
  raw: [] as number[],
  ratios: [] as number[],
};
let sink = 0;
for (let r = 0; r < ROUNDS; r++) {
  let t = performance.now();
  let c = cpuMs();
  const v = await verifyLedgerFile(path, head);
  const verify = performance.now() - t;
  const verifyCpu = cpuMs() - c;
  if (!v.ok || v.blocks !== N) {
    throw new Error(`verify failed: ${JSON.stringify(v.problems[0])}`);
  }
  const seed = createHash("sha256");
  t = performance.now();
  c = cpuMs();
  for (const s of inputs) {
    sink ^= seed.copy().update(s).digest("hex").charCodeAt(0);
  }
  const raw = performance.now() - t;
  const rawCpu = cpuMs() - c;
  verifyMs.push(verify);
  rawMs.push(raw);
  ratios.push(verify / raw);
  cpu.verify.push(verifyCpu);
  cpu.raw.push(rawCpu);
  cpu.ratios.push(verifyCpu / rawCpu);
}
if (sink === -1) console.log("");

/** Peak RSS (MiB) of a child running this script with `--child <what>`. */
async function childPeak(what: "verify" | "idle"): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL(import.meta.url).pathname,
      "--child",
      what,
      "--ledger",
      path,
      "--head",
      head,
    ],
    stdout: "piped",
  }).output();
  if (!out.success) throw new Error(`the ${what} child failed`);
  return new TextDecoder().decode(out.stdout).trim();
}
const peakVerify = await childPeak("verify");
const peakIdle = await childPeak("idle");

const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
console.log(
  `ledger bench: ${N} blocks (${values.records} records), ${
    (bytes / 1e6).toFixed(1)
  } MB file, ${(hashed / 1e6).toFixed(1)} MB hashed, ${ROUNDS} rounds, medians`,
);
console.log(
  `verify (verifyLedgerFile)        ${median(verifyMs).toFixed(0)} ms  ${
    Math.round(N / (median(verifyMs) / 1000)).toLocaleString("en")
  } blocks/s`,
);
console.log(
  `raw SHA-256, one hash per block  ${median(rawMs).toFixed(0)} ms`,
);
console.log(
  `ratio verify / raw: ${median(ratios).toFixed(2)}x [${
    list(ratios)
  }] (goal <= 3x)`,
);
console.log(
  `CPU time: verify ${median(cpu.verify).toFixed(0)} ms, raw ${
    median(cpu.raw).toFixed(0)
  } ms, ratio ${median(cpu.ratios).toFixed(2)}x [${list(cpu.ratios)}]`,
);
console.log(
  `peak RSS: verify ${peakVerify} MiB, the runtime alone ${peakIdle} MiB (file ${
    (bytes / 2 ** 20).toFixed(1)
  } MiB)`,
);
await Deno.remove(dir, { recursive: true });
