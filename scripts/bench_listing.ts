/**
 * Benchmark: reading a captured listing, pages parsed once vs as before.
 *
 * Per round, side by side (the order alternates between rounds), over the
 * same page texts (`--tools` tools in `--pages` pages, schemas with no
 * numbers Python reads differently, the common case):
 * - old: what `verity capture` did before: read the pages for contracts it
 *   then discarded (`parseToolPages`), then build the manifest, which read
 *   every page again for contracts and a third time losslessly
 *   (`parsePythonJson`) — modelled as those two extra reads plus today's
 *   `buildManifest`;
 * - new: `buildManifest` alone, which reads each page once (and losslessly
 *   again only a page whose numbers Python reads differently).
 *
 * Prints medians and the median per-round ratio old/new.
 *
 * Run: deno run -A scripts/bench_listing.ts [--tools N] [--pages P] [--rounds R]
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { parseToolPages } from "../lib/contracts/contracts.ts";
import { parsePythonJson } from "../lib/evidence/canonical.ts";
import { buildManifest } from "../lib/evidence/manifest.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    tools: { type: "string", default: "20000" },
    pages: { type: "string", default: "20" },
    rounds: { type: "string", default: "7" },
  },
  strict: true,
});
const tools = Number(values.tools);
const pages = Number(values.pages);
const rounds = Number(values.rounds);
if (![tools, pages, rounds].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error(
    "bench_listing: --tools, --pages and --rounds expect integers >= 1",
  );
  Deno.exit(2);
}

const perPage = Math.ceil(tools / pages);
const pageTexts = Array.from({ length: pages }, (_, p) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: p + 2,
    result: {
      tools: Array.from({ length: perPage }, (_, i) => ({
        name: `tool_${p}_${i}`,
        description: `Tool ${i} of page ${p}: reads or writes a record`,
        inputSchema: {
          type: "object",
          properties: {
            id: { type: "string" },
            limit: { type: "integer", minimum: 1, maximum: 100 },
          },
          required: ["id"],
        },
        annotations: { readOnlyHint: i % 2 === 0, idempotentHint: true },
      })),
      ...(p + 1 < pages ? { nextCursor: String(p + 1) } : {}),
    },
  }));

function manifest(): number {
  return buildManifest({
    pageTexts,
    serverInfo: { name: "bench", version: "1" },
    protocolVersion: "2025-11-25",
    command: ["bench"],
    capturedAt: "2026-11-30T00:00:00Z",
    recipe: "3",
  }).tools.length;
}

function oldWay(): number {
  parseToolPages(pageTexts);
  for (const t of pageTexts) parsePythonJson(t);
  return manifest();
}

function time(f: () => number): number {
  const t0 = performance.now();
  if (f() !== perPage * pages) throw new Error("bench_listing: tools lost");
  return performance.now() - t0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

time(oldWay);
time(manifest);
const olds: number[] = [];
const news: number[] = [];
const ratios: number[] = [];
for (let r = 0; r < rounds; r++) {
  const [o, w] = r % 2 === 0
    ? [time(oldWay), time(manifest)]
    : [time(manifest), time(oldWay)].reverse() as [number, number];
  olds.push(o);
  news.push(w);
  ratios.push(o / w);
}
const mb = pageTexts.reduce((n, t) => n + t.length, 0) / 1e6;
console.log(
  `manifest from ${perPage * pages} tools in ${pages} pages (${
    mb.toFixed(1)
  } MB), ${rounds} rounds`,
);
console.log(
  `  old (pages read 3 times)   median ${median(olds).toFixed(0)} ms`,
);
console.log(
  `  new (pages read once)      median ${median(news).toFixed(0)} ms`,
);
console.log(
  `  ratio old/new (per round)  median ${median(ratios).toFixed(2)}x`,
);
