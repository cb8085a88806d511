/**
 * Benchmark: write and verify a 100,000-block ledger.
 *
 * Per round:
 * - write: chain 100,000 report-digest records and write the file atomically
 *   (`appendBlocks` on a new file);
 * - verify: `verifyLedgerFile`, what `verity ledger verify` does: read the
 *   file, check every block's layout and chain, its type and record
 *   canonical (one scan of their bytes), hash every block over its bytes
 *   as they stand, compare with the head; three ways:
 *   - one thread, the stream walk (`stream: true`: what it does for a
 *     ledger under 4 MiB, and to name the problems of one that fails),
 *     each block hashed through node:crypto as it is walked;
 *   - one thread, segments (what it does from 4 MiB when no core is idle):
 *     the file cut into 1 MiB segments, each walked into a slot of shared
 *     WebAssembly memory with its hashing deferred, then its blocks' inputs
 *     built in place and hashed four at a time in WebAssembly SIMD
 *     (`sha256_lanes.ts`);
 *   - two threads (what it does from 32 MiB when a second core is idle;
 *     its CPU time includes the worker's start): the same segments, this
 *     thread walking them in turn, a worker that only hashes, this thread
 *     hashing too whenever its next slot is not free yet (the bench prints
 *     how many blocks the worker hashed);
 * - general path: the same verification through a full parse
 *   (`parsePythonJson` + `verifyLedger`), the path a ledger in another
 *   layout (mcp-evidence-validator's) takes;
 * - raw SHA-256 over the same bytes, one digest per block over exactly the
 *   bytes the chain hashes (`prev_hash + body`, UTF-8, each block's bytes
 *   in a node Buffer), the floor for any chain verifier, four ways:
 *   `seed.copy().update(buf).digest("hex")` from one fresh SHA-256 hash
 *   (the fastest per-digest path node:crypto has here, and the call the
 *   stream walk makes: the goal's baseline), and
 *   `createHash("sha256").update(buf).digest("hex")` (the previous
 *   session's baseline, a few percent more CPU per digest); the same inputs hashed four lanes at a time in
 *   WebAssembly, 128 per call, as verify hashes them in segments (verity's
 *   own hashing, printed with the ratio of two threads to it); and one hash
 *   over the whole file.
 *
 * Prints blocks/s and ratios (target: verify within 1.5x of the fastest raw
 * per-block hashing). Ratios are taken per round (wall and process CPU
 * time) and the median printed, because the load of a shared machine
 * changes between rounds more than within one.
 *
 * Records: `--records synthetic` (the default) gives every block a
 * report-digest record of its own, all of type `report`;
 * `--records published` cycles through the blocks of the ledgers published
 * under `results/` (verity's own report, manifest and reality records, whose
 * types change on nearly every line).
 *
 * Run: deno run -A --v8-flags=--expose-gc scripts/bench_ledger.ts [--blocks N] [--rounds R] [--records synthetic|published]
 * (without the flag it runs too, with no collection between timed sections).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import process from "node:process";
import { parseArgs } from "./_args.ts";
import { blockBody, type Entry, verifyLedger } from "../lib/evidence/chain.ts";
import { parsePythonJson } from "../lib/evidence/canonical.ts";
import { appendBlocks, verifyLedgerFile } from "../lib/evidence/ledger.ts";
import { ledgerRecord } from "./_bench_shared.ts";
import {
  GROUP_BYTES,
  instantiateLanes,
  SCRATCH_BYTES,
} from "../lib/evidence/sha256_lanes.ts";
import { CHUNK } from "../lib/evidence/slot_hash.ts";

/**
 * `inputs` laid out in a shared WebAssembly memory with their group list,
 * and the lanes module's `many` over it (as `LaneHasher` calls it).
 */
function lanesOver(inputs: Uint8Array[]) {
  const groups = Math.ceil(inputs.length / 4);
  const list = SCRATCH_BYTES;
  let at = list + groups * GROUP_BYTES;
  const size = at + inputs.reduce((n, x) => n + x.length, 0);
  const pages = Math.ceil(size / 65536);
  const memory = new WebAssembly.Memory({
    initial: pages,
    maximum: pages,
    shared: true,
  });
  const { many } = instantiateLanes(memory);
  const u8 = new Uint8Array(memory.buffer);
  const dv = new DataView(memory.buffer);
  for (let j = 0; j < 4 * groups; j++) {
    const rec = list + (j >> 2) * GROUP_BYTES + 8 * (j & 3);
    const x = inputs[j] ?? new Uint8Array(0);
    u8.set(x, at);
    dv.setInt32(rec, at, true);
    dv.setInt32(rec + 4, x.length, true);
    at += x.length;
  }
  return { many, list, groups };
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    blocks: { type: "string", default: "100000" },
    rounds: { type: "string", default: "7" },
    records: { type: "string", default: "synthetic" },
  },
  strict: true,
});
const N = Number(values.blocks);
const ROUNDS = Number(values.rounds);

/** Process CPU time (user + system), in milliseconds. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** V8's collector, when the bench runs with --v8-flags=--expose-gc. */
const gc = (globalThis as { gc?: () => void }).gc;

/**
 * Time `fn` in wall and CPU milliseconds, after a full collection (when
 * available) so that no timed section pays for garbage an untimed one left.
 */
async function timed<T>(
  fn: () => T | Promise<T>,
): Promise<{ value: T; wall: number; cpu: number }> {
  gc?.();
  const c = cpuMs();
  const t = performance.now();
  const value = await fn();
  return { value, wall: performance.now() - t, cpu: cpuMs() - c };
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

const rows: Record<string, { wall: number[]; cpu: number[] }> = {};
const ratios = {
  wall: [] as number[],
  cpu: [] as number[],
  file: [] as number[],
  general: [] as number[],
  createWall: [] as number[],
  createCpu: [] as number[],
  lanes: [] as number[],
  oneWall: [] as number[],
  oneCpu: [] as number[],
  twoWall: [] as number[],
  twoCpu: [] as number[],
};
const onWorker: string[] = [];
function keep(name: string, t: { wall: number; cpu: number }): void {
  (rows[name] ??= { wall: [], cpu: [] }).wall.push(t.wall);
  rows[name]!.cpu.push(t.cpu);
}
let bytes = 0;
let sink = 0;

for (let r = 0; r < ROUNDS; r++) {
  await Deno.remove(path).catch(() => {});
  const w = await timed(() => appendBlocks(path, entries));
  keep("write", w);
  const head = w.value.head;

  const text = await Deno.readTextFile(path);
  // Exactly the bytes the chain hashes (prev_hash + canonical body, UTF-8),
  // one digest per block, as verify computes it: update() with the bytes,
  // digest("hex").
  const doc = parsePythonJson(text) as {
    blocks: { prev_hash: string; type: string; record: unknown }[];
  };
  const inputs = doc.blocks.map((b) =>
    Buffer.from(b.prev_hash + blockBody(b.type, b.record), "utf8")
  );
  const v = await timed(() =>
    verifyLedgerFile(path, head, { twoThreads: false, stream: true })
  );
  if (!v.value.ok || v.value.blocks !== N) {
    throw new Error(`verify failed: ${JSON.stringify(v.value.problems[0])}`);
  }
  keep("verify", v);
  const v1 = await timed(() =>
    verifyLedgerFile(path, head, { twoThreads: false })
  );
  if (!v1.value.ok || v1.value.blocks !== N) {
    throw new Error("verify in segments on one thread failed");
  }
  keep("verify1", v1);
  const counts = { here: 0, there: 0, answered: false };
  const v2 = await timed(() =>
    verifyLedgerFile(path, head, { twoThreads: true, counts })
  );
  if (!v2.value.ok || v2.value.blocks !== N || !counts.answered) {
    throw new Error("two-thread verify failed (or was walked again on one)");
  }
  keep("verify2", v2);
  onWorker.push(`${counts.there}/${counts.here + counts.there}`);

  const seed = createHash("sha256");
  const raw = await timed(() => {
    for (const s of inputs) {
      sink ^= seed.copy().update(s).digest("hex").charCodeAt(0);
    }
  });
  keep("raw", raw);
  const rawCreate = await timed(() => {
    for (const s of inputs) {
      sink ^= createHash("sha256").update(s).digest("hex").charCodeAt(0);
    }
  });
  keep("rawCreate", rawCreate);
  // The same inputs hashed as verify hashes them in segments: four lanes at
  // a time in WebAssembly, 128 messages per call (verity's own hashing).
  const lanes = lanesOver(inputs);
  const rawLanes = await timed(() => {
    for (let g = 0; g < lanes.groups; g += CHUNK / 4) {
      lanes.many(
        lanes.list + g * GROUP_BYTES,
        Math.min(CHUNK / 4, lanes.groups - g),
        0,
      );
    }
  });
  keep("rawLanes", rawLanes);
  ratios.lanes.push(v2.wall / rawLanes.wall);

  const g = await timed(() => verifyLedger(parsePythonJson(text), head));
  if (!g.value.ok) throw new Error("general path failed");
  keep("general", g);

  const fileBytes = await Deno.readFile(path);
  bytes = fileBytes.length;
  const whole = await timed(() => {
    sink ^= createHash("sha256").update(fileBytes).digest()[0]!;
  });
  keep("whole", whole);

  ratios.wall.push(v.wall / raw.wall);
  ratios.cpu.push(v.cpu / raw.cpu);
  ratios.file.push(v.wall / whole.wall);
  ratios.oneWall.push(v1.wall / raw.wall);
  ratios.oneCpu.push(v1.cpu / raw.cpu);
  ratios.twoWall.push(v2.wall / raw.wall);
  ratios.twoCpu.push(v2.cpu / raw.cpu);
  ratios.createWall.push(v.wall / rawCreate.wall);
  ratios.createCpu.push(v.cpu / rawCreate.cpu);
  ratios.general.push(g.wall / raw.wall);
}
if (sink === -1) console.log("");

const f = (xs: number[]) => `${median(xs).toFixed(0)} ms`;
const bps = (ms: number) =>
  `${Math.round(N / (ms / 1000)).toLocaleString("en")} blocks/s`;
const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
console.log(
  `ledger bench: ${N} blocks (${values.records} records), ${
    (bytes / 1e6).toFixed(1)
  } MB (${Math.round(bytes / N)} bytes/block), ${ROUNDS} rounds, medians${
    gc ? ", a full GC before each timed section" : " (no --expose-gc)"
  }`,
);
console.log(
  `write   (chain + atomic write)        ${f(rows.write!.wall)}  ${
    bps(median(rows.write!.wall))
  }`,
);
console.log(
  `verify, one thread (the stream walk)  ${f(rows.verify!.wall)}  ${
    bps(median(rows.verify!.wall))
  }`,
);
console.log(
  `verify, one thread (segments)        ${f(rows.verify1!.wall)}  ${
    bps(median(rows.verify1!.wall))
  }`,
);
console.log(
  `verify, two threads (segments)       ${f(rows.verify2!.wall)}  ${
    bps(median(rows.verify2!.wall))
  }  (blocks hashed on the worker: ${onWorker.join(", ")})`,
);
console.log(
  `verify, general path (full parse)     ${f(rows.general!.wall)}  ${
    bps(median(rows.general!.wall))
  }`,
);
console.log(
  `raw SHA-256, one hash per block       ${f(rows.raw!.wall)}  ${
    bps(median(rows.raw!.wall))
  }  (copy() of a fresh hash: the baseline)`,
);
console.log(
  `raw SHA-256, one createHash per block ${f(rows.rawCreate!.wall)}  ${
    bps(median(rows.rawCreate!.wall))
  }  (the previous baseline)`,
);
console.log(
  `raw SHA-256, four lanes in WebAssembly ${f(rows.rawLanes!.wall)}  ${
    bps(median(rows.rawLanes!.wall))
  }  (verity's own hashing, 128 blocks per call)`,
);
console.log(`raw SHA-256, the whole file at once   ${f(rows.whole!.wall)}`);
console.log(
  `ratio verify on one thread, the stream walk / raw per-block: ${
    median(ratios.wall).toFixed(2)
  }x wall [${list(ratios.wall)}]`,
);
console.log(
  `                               ${median(ratios.cpu).toFixed(2)}x CPU  [${
    list(ratios.cpu)
  }]`,
);
console.log(
  `ratio verify on one thread, segments / raw per-block: ${
    median(ratios.oneWall).toFixed(2)
  }x wall [${list(ratios.oneWall)}]`,
);
console.log(
  `                               ${median(ratios.oneCpu).toFixed(2)}x CPU  [${
    list(ratios.oneCpu)
  }]  (target <= 1.5x: what verify does when no core is idle)`,
);
console.log(
  `ratio verify on two threads / raw per-block: ${
    median(ratios.twoWall).toFixed(2)
  }x wall [${list(ratios.twoWall)}]`,
);
console.log(
  `                               ${median(ratios.twoCpu).toFixed(2)}x CPU  [${
    list(ratios.twoCpu)
  }]  (the wall figure is the goal's when a core is idle)`,
);
console.log(
  `ratio verify, the stream walk / raw per-block with createHash (previous baseline): ${
    median(ratios.createWall).toFixed(2)
  }x wall, ${median(ratios.createCpu).toFixed(2)}x CPU`,
);
console.log(
  `ratio verify on two threads / raw four lanes in WebAssembly: ${
    median(ratios.lanes).toFixed(2)
  }x wall [${list(ratios.lanes)}]  (against verity's own hashing alone)`,
);
console.log(
  `ratio general path / raw per-block: ${
    median(ratios.general).toFixed(2)
  }x wall`,
);
console.log(
  `ratio verify / raw whole-file hash: ${median(ratios.file).toFixed(2)}x wall`,
);
console.log(
  `load average at the end: ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  } on ${navigator.hardwareConcurrency} cores`,
);

// An mcp-evidence-validator ledger (its layout: json.dump(indent=2), ASCII
// escapes) verified by verity (the general path: strict parse, canonical
// re-serialization, hashing) against the same verification in Python, the
// way that tool does it (scripts/_mev_ledger.py: json.load, json.dumps
// canonical, hashlib; the tool itself is not installable here). Python's
// time is measured inside the Python process (load + replay), verity's
// inside this one (verifyLedgerFile), interleaved.
const py = new URL("./_mev_ledger.py", import.meta.url).pathname;
const mev = `${dir}/mev.json`;
const made = await new Deno.Command("python3", {
  args: [py, "write", String(N), mev],
  stdout: "piped",
}).output();
if (made.code === 0) {
  const mevHead = new TextDecoder().decode(made.stdout).trim();
  const pyMs: number[] = [];
  const vMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const out = await new Deno.Command("python3", {
      args: [py, "verify", mev, mevHead],
      stdout: "piped",
    }).output();
    const [ok, ms] = new TextDecoder().decode(out.stdout).trim().split(" ");
    if (ok !== "ok") throw new Error("python verify refused its own ledger");
    pyMs.push(Number(ms));
    const v = await timed(() => verifyLedgerFile(mev, mevHead));
    if (!v.value.ok) throw new Error("verity refused the python ledger");
    vMs.push(v.wall);
  }
  const rs = vMs.map((v, i) => v / pyMs[i]!);
  console.log(
    `mcp-evidence-validator layout, ${N} blocks (${
      (Deno.statSync(mev).size / 1e6).toFixed(1)
    } MB): verity ${f(vMs)}, Python (json + hashlib, as the tool) ${
      f(pyMs)
    }; ratio verity / Python ${median(rs).toFixed(2)}x [${
      list(rs)
    }] (target <= 1x)`,
  );
} else {console.log(
    "python3 not available: mcp-evidence-validator comparison skipped",
  );}
await Deno.remove(dir, { recursive: true });
