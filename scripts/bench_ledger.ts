/**
 * Benchmark: write and verify a 100,000-block ledger.
 *
 * Prints medians over several rounds of:
 * - write: chain 100,000 report-digest records and write the file atomically;
 * - verify: read the file, parse it (Python-compatible number reading),
 *   replay every block, compare with the head;
 * - raw SHA-256 over the same bytes, two ways: one `createHash` per block
 *   over exactly the bytes the chain hashes (`prev_hash + body`), the floor
 *   for any chain verifier; and one hash over the whole ledger file.
 * and the ratio of verify time to each (target: within 3x of per-block raw
 * hashing).
 *
 * Run: deno run -A scripts/bench_ledger.ts [--blocks N] [--rounds R]
 *
 * @module
 */
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import {
  blockBody,
  chainBlocks,
  type Entry,
  GENESIS,
  ledgerText,
  verifyLedger,
} from "../lib/evidence/chain.ts";
import { parsePythonJson } from "../lib/evidence/canonical.ts";
import { appendBlocks, readLedgerFile } from "../lib/evidence/ledger.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    blocks: { type: "string", default: "100000" },
    rounds: { type: "string", default: "5" },
  },
  strict: true,
});
const N = Number(values.blocks);
const ROUNDS = Number(values.rounds);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A record shaped like what `verity run` appends: a report digest and a little provenance. */
function record(i: number): unknown {
  const hex = createHash("sha256").update(String(i)).digest("hex");
  return {
    run_id: `2026-11-30T00-00-00Z-${i.toString(16).padStart(6, "0")}`,
    report: `runs/${i}/report.json`,
    digest: `sha256:${hex}`,
    target: "fixtures/honest-readonly",
    verdicts: { PASS: 3, VIOLATION: i % 7 === 0 ? 1 : 0, INCONCLUSIVE: 1 },
    harness: { version: "0.1.0", deno: "2.9.6" },
  };
}

const entries: Entry[] = Array.from(
  { length: N },
  (_, i) => ({ type: "report", record: record(i) }),
);
const dir = await Deno.makeTempDir({ prefix: "verity-bench-ledger-" });
const path = `${dir}/ledger.json`;

const writeMs: number[] = [];
const verifyMs: number[] = [];
const parseMs: number[] = [];
const rawBlockMs: number[] = [];
const rawFileMs: number[] = [];
const ratioBlock: number[] = [];
const ratioFile: number[] = [];
let head = "";
let bytes = 0;

for (let r = 0; r < ROUNDS; r++) {
  await Deno.remove(path).catch(() => {});
  let t = performance.now();
  const w = await appendBlocks(path, entries);
  writeMs.push(performance.now() - t);
  head = w.head;

  t = performance.now();
  const doc = await readLedgerFile(path);
  const tParsed = performance.now();
  const v = verifyLedger(doc, head);
  verifyMs.push(performance.now() - t);
  parseMs.push(tParsed - t);
  if (!v.ok || v.blocks !== N) {
    throw new Error(`verify failed: ${JSON.stringify(v.problems.slice(0, 3))}`);
  }

  // Raw hashing of exactly the bytes the chain hashes, one createHash per block.
  const blocks =
    (doc as { blocks: { prev_hash: string; type: string; record: unknown }[] })
      .blocks;
  const inputs = blocks.map((b) => b.prev_hash + blockBody(b.type, b.record));
  t = performance.now();
  let sink = 0;
  for (const s of inputs) sink ^= createHash("sha256").update(s).digest()[0]!;
  rawBlockMs.push(performance.now() - t);

  const fileBytes = await Deno.readFile(path);
  bytes = fileBytes.length;
  t = performance.now();
  sink ^= createHash("sha256").update(fileBytes).digest()[0]!;
  rawFileMs.push(performance.now() - t);
  if (sink === 256) console.log("");
  // Ratios per round: the machine's load changes between rounds, not within one.
  ratioBlock.push(verifyMs.at(-1)! / rawBlockMs.at(-1)!);
  ratioFile.push(verifyMs.at(-1)! / rawFileMs.at(-1)!);
}

// Pure in-memory chaining (no file), for reference.
let t0 = performance.now();
const chained = chainBlocks(GENESIS, 0, entries);
const chainMs = performance.now() - t0;
t0 = performance.now();
parsePythonJson(ledgerText(chained.lines));
const parseOnlyMs = performance.now() - t0;
t0 = performance.now();
JSON.parse(ledgerText(chained.lines));
const plainParseMs = performance.now() - t0;

const w = median(writeMs);
const v = median(verifyMs);
const rb = median(rawBlockMs);
const rf = median(rawFileMs);
console.log(
  `ledger bench: ${N} blocks, ${(bytes / 1e6).toFixed(1)} MB file (${
    Math.round(bytes / N)
  } bytes/block), ${ROUNDS} rounds (medians)`,
);
console.log(
  `write  (chain + atomic write): ${w.toFixed(0)} ms  ${
    Math.round(N / (w / 1000))
  } blocks/s`,
);
console.log(
  `verify (read + parse + replay): ${v.toFixed(0)} ms  ${
    Math.round(N / (v / 1000))
  } blocks/s`,
);
console.log(`  of which read + parse: ${median(parseMs).toFixed(0)} ms`);
console.log(
  `raw SHA-256, one hash per block over the chained bytes: ${rb.toFixed(0)} ms`,
);
console.log(`raw SHA-256, one hash over the whole file: ${rf.toFixed(0)} ms`);
console.log(
  `ratio verify / raw per-block hashing: ${
    median(ratioBlock).toFixed(2)
  }x median of rounds [${
    ratioBlock.map((r) => r.toFixed(2)).join(", ")
  }] (target <= 3x)`,
);
console.log(
  `ratio verify / raw whole-file hashing: ${median(ratioFile).toFixed(2)}x`,
);
console.log(
  `load average at the end: ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  } on ${navigator.hardwareConcurrency} cores`,
);
console.log(
  `reference: in-memory chaining ${
    chainMs.toFixed(0)
  } ms; parse with Python numbers ${
    parseOnlyMs.toFixed(0)
  } ms vs plain JSON.parse ${plainParseMs.toFixed(0)} ms`,
);
await Deno.remove(dir, { recursive: true });
