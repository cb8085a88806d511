/**
 * Benchmark: ledgers larger than V8's string limit, verified end to end
 * with bounded memory.
 *
 * For each size (by default 1/4, 1/2 and all of `--blocks`, 1,100,000: past
 * the ~1.02M blocks at which holding the ledger as one string fails with
 * "Invalid string length"):
 * - write: a child process (this script with `--write`) writes the ledger
 *   in verity's own layout a batch of blocks at a time (`chainBlocks`), from
 *   records made as it goes (verity's `appendBlocks` holds a ledger whole:
 *   the ledgers it writes are 0.4-30 KB);
 * - verify: `verity ledger verify --ledger L --expected-head H`, the real
 *   CLI command (main.ts under `deno run -A`, as `./verity` runs it), must
 *   exit 0 and report every block.
 *
 * Prints, per size: blocks, bytes, wall time and peak RSS (under
 * /usr/bin/time) of the writer and of the verifier. Peak RSS should not grow
 * with the blocks.
 *
 * Run: deno run -A scripts/bench_ledger_large.ts [--blocks N] [--steps S] [--dir D]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import {
  chainBlocks,
  EMPTY_LINE,
  type Entry,
  GENESIS,
  HEADER_LINE,
} from "../lib/evidence/chain.ts";
import { ledgerRecord } from "./_bench_shared.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    blocks: { type: "string", default: "1100000" },
    steps: { type: "string", default: "3" },
    dir: { type: "string" },
    write: { type: "string" },
    to: { type: "string" },
  },
  strict: true,
});

function* entries(from: number, to: number): Generator<Entry> {
  for (let i = from; i < to; i++) {
    yield { type: "report", record: ledgerRecord(i) };
  }
}

if (values.write !== undefined) {
  // Child: write blocks [0, to) a batch at a time and print the head.
  using f = await Deno.open(values.write, { write: true, createNew: true });
  const enc = new TextEncoder();
  const put = async (t: string) => {
    const b = enc.encode(t);
    for (let off = 0; off < b.length;) off += await f.write(b.subarray(off));
  };
  let head = GENESIS;
  let next = 0;
  let batch: Entry[] = [];
  for (const e of entries(0, Number(values.to))) {
    batch.push(e);
    if (batch.length < 4096) continue;
    const c = chainBlocks(head, next, batch);
    await put((next === 0 ? `${HEADER_LINE}\n` : ",\n") + c.lines.join(",\n"));
    [head, next, batch] = [c.head, next + batch.length, []];
  }
  if (batch.length > 0) {
    const c = chainBlocks(head, next, batch);
    await put((next === 0 ? `${HEADER_LINE}\n` : ",\n") + c.lines.join(",\n"));
    [head, next] = [c.head, next + batch.length];
  }
  await put(next === 0 ? `${EMPTY_LINE}\n` : "\n]}\n");
  console.log(head);
  Deno.exit(0);
}

const N = Number(values.blocks);
const STEPS = Number(values.steps);
const root = new URL("..", import.meta.url).pathname;
const dir = values.dir ??
  await Deno.makeTempDir({ prefix: "verity-bench-ledger-large-" });
const timeBin = await Deno.stat("/usr/bin/time").then(() => true, () => false);

/** Run a command, under /usr/bin/time when present: its exit code, stdout, wall seconds and peak RSS (KiB, or null). */
async function run(
  args: string[],
): Promise<
  { code: number; out: string; seconds: number; peakKiB: number | null }
> {
  const t = performance.now();
  const out = await new Deno.Command(
    timeBin ? "/usr/bin/time" : args[0]!,
    {
      args: timeBin ? ["-f", "VERITY_PEAK_KIB %M", ...args] : args.slice(1),
      stdout: "piped",
      stderr: "piped",
    },
  ).output();
  const seconds = (performance.now() - t) / 1000;
  const err = new TextDecoder().decode(out.stderr);
  const m = /VERITY_PEAK_KIB (\d+)/.exec(err);
  if (out.code !== 0) {
    throw new Error(`${args.join(" ")} exited ${out.code}: ${err.trim()}`);
  }
  return {
    code: out.code,
    out: new TextDecoder().decode(out.stdout),
    seconds,
    peakKiB: m ? Number(m[1]) : null,
  };
}

const deno = Deno.execPath();
const self = new URL(import.meta.url).pathname;
const mib = (k: number | null) =>
  k === null ? "n/a" : `${(k / 1024).toFixed(0)} MiB`;
console.log(
  `ledger, large: ${STEPS} sizes up to ${
    N.toLocaleString("en")
  } blocks in ${dir}`,
);
console.log(
  "blocks      bytes       write (batches)        verify (verity ledger verify)",
);
for (let s = 1; s <= STEPS; s++) {
  const n = Math.round(N * s / STEPS);
  const path = `${dir}/ledger-${n}.json`;
  await Deno.remove(path).catch(() => {});
  const w = await run([
    deno,
    "run",
    "-A",
    self,
    "--write",
    path,
    "--to",
    String(n),
  ]);
  const head = w.out.trim();
  const bytes = (await Deno.stat(path)).size;
  const v = await run([
    deno,
    "run",
    "-A",
    "--unstable-worker-options",
    "--quiet",
    "--config",
    `${root}deno.json`,
    `${root}main.ts`,
    "ledger",
    "verify",
    "--ledger",
    path,
    "--expected-head",
    head,
  ]);
  const intact = `ledger intact: ${n} blocks`;
  if (!v.out.includes(intact)) {
    throw new Error(`verify did not say "${intact}": ${v.out}`);
  }
  console.log(
    `${String(n).padEnd(11)} ${(bytes / 1e6).toFixed(0).padStart(5)} MB   ${
      w.seconds.toFixed(1)
    } s, peak ${mib(w.peakKiB)}      ${v.seconds.toFixed(1)} s, peak ${
      mib(v.peakKiB)
    }  (${Math.round(n / v.seconds).toLocaleString("en")} blocks/s)`,
  );
  await Deno.remove(path);
}
if (values.dir === undefined) await Deno.remove(dir, { recursive: true });
console.log(
  `load average at the end: ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  } on ${navigator.hardwareConcurrency} cores`,
);
