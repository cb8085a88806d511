import assert from "node:assert/strict";
import { duration, Progress, progressLine } from "./_progress.ts";

Deno.test("progress line: sessions done/total, phase, tool, elapsed and ETA from the mean session time", () => {
  assert.equal(
    progressLine(
      { done: 10, total: 40, phase: "sequential", tool: "write_file[new]" },
      20_000,
    ),
    "verity: sessions 10/40 · sequential · write_file[new] · 20s elapsed · ETA 1m00s",
  );
  assert.equal(
    progressLine({ done: 0, total: 9, phase: "control", tool: null }, 500),
    "verity: sessions 0/9 · control · 1s elapsed · ETA –",
  );
  assert.equal(
    progressLine({ done: 9, total: 9, phase: "concurrent", tool: "t" }, 3_000),
    "verity: sessions 9/9 · concurrent · t · 3s elapsed · finishing",
  );
  // clipped to the terminal's width
  const long = progressLine(
    { done: 1, total: 2, phase: "sequential", tool: "x".repeat(200) },
    1000,
    60,
  );
  assert.equal(long.length, 60);
  assert.ok(long.endsWith("…"));
  assert.equal(duration(3_725_000), "1h02m");
  assert.equal(duration(185_000), "3m05s");
});

Deno.test("progress: redrawn in place at most every 100 ms (and at the end), cleared before other lines", () => {
  let clock = 0;
  const out: string[] = [];
  const p = new Progress({
    write: (t) => out.push(t),
    columns: () => 120,
    now: () => clock,
  });
  p.tick({ done: 0, total: 3, phase: "control", tool: null });
  clock = 50;
  p.tick({ done: 1, total: 3, phase: "control", tool: null }); // throttled
  assert.equal(out.length, 1);
  clock = 200;
  p.tick({ done: 2, total: 3, phase: "sequential", tool: "a" });
  clock = 210;
  p.tick({ done: 3, total: 3, phase: "sequential", tool: "a" }); // the end: always
  assert.equal(out.length, 3);
  assert.ok(out.every((t) => t.startsWith("\r\x1b[2Kverity: sessions ")));
  assert.match(
    out[2]!,
    /sessions 3\/3 · sequential · a · 0s elapsed · finishing$/,
  );
  p.clear();
  assert.equal(out.at(-1), "\r\x1b[2K");
  p.clear(); // nothing shown: nothing written
  assert.equal(out.length, 4);
});
