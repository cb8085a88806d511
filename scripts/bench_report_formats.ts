/**
 * Benchmark: rendering one saved report in every format (pure renderers, no
 * disk in the timed part). Prints per format the median time over N rounds,
 * the output size, and the ratio to the text summary.
 *
 * Usage: deno run -A scripts/bench_report_formats.ts <report.json> [--rounds N]
 */
import { parseArgs } from "./_args.ts";
import type { Report } from "../lib/report/report.ts";
import { renderText } from "../lib/report/text.ts";
import { renderHtml } from "../lib/report/html.ts";
import { renderJunit } from "../lib/report/junit.ts";
import { renderSarif } from "../lib/report/sarif.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "50" } },
  allowPositionals: true,
  strict: true,
});
if (positionals.length !== 1) {
  console.error(
    "usage: deno run -A scripts/bench_report_formats.ts <report.json> [--rounds N]",
  );
  Deno.exit(2);
}
const rounds = Number(values.rounds);
const text = await Deno.readTextFile(positionals[0]!);
const report = JSON.parse(text) as Report;

const renderers: [string, (r: Report) => string][] = [
  ["text", renderText],
  ["json", (r) => JSON.stringify(r, null, 1)],
  ["html", renderHtml],
  ["sarif", (r) => renderSarif(r, { root: "/" })],
  ["junit", renderJunit],
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

console.log(
  `report: ${
    positionals[0]
  } (${text.length} chars, ${report.verdicts.length} verdicts), ${rounds} rounds`,
);
const medians = new Map<string, number>();
for (const [name, render] of renderers) {
  for (let i = 0; i < 5; i++) render(report); // warm up
  const times: number[] = [];
  let size = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    size = render(report).length;
    times.push(performance.now() - t0);
  }
  const m = median(times);
  medians.set(name, m);
  const ratio = m / (medians.get("text") ?? m);
  console.log(
    `${name.padEnd(6)} median ${m.toFixed(3).padStart(8)} ms  ${
      String(size).padStart(8)
    } chars  x${ratio.toFixed(1)} text`,
  );
}
