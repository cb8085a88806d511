/**
 * End to end: `verity reality` against the reality fixture server, checked
 * against fixtures/reality/expected.json, plus exit codes and bad input.
 */
import assert from "node:assert/strict";
import { rejudgeReport } from "../lib/reality/report.ts";
import type {
  RealityCallEntry,
  RealityReport,
  RealityToolEntry,
} from "../lib/reality/report.ts";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const SERVER = ["deno", "run", `${ROOT}fixtures/reality/server.ts`];

interface ExpectedTool {
  status: string;
  flags: string[];
  notes: string[];
  failure?: string;
  skip?: string;
}
interface ExpectedRun {
  form: "command" | "target";
  flags: string[];
  summary: Record<string, unknown>;
  tools: Record<string, ExpectedTool>;
}
const EXPECTED = JSON.parse(
  await Deno.readTextFile(`${ROOT}fixtures/reality/expected.json`),
) as { runs: Record<string, ExpectedRun> };

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function verity(args: string[]): Promise<Ran> {
  return await runVerity(["reality", ...args], { cwd: ROOT });
}

/** The one call of a tool the fixture's definition gives no arguments for. */
function only(t: RealityToolEntry): RealityCallEntry {
  assert.equal(t.calls.length, 1, `${t.name}: one call`);
  return t.calls[0]!;
}

function actual(t: RealityToolEntry): ExpectedTool {
  const out: ExpectedTool = {
    status: t.status,
    flags: t.flags.map((f) => f.rule),
    notes: t.notes.map((n) => n.rule),
  };
  if (t.failure) out.failure = t.failure.kind;
  if (t.skip) out.skip = t.skip.reason;
  return out;
}

const reports = new Map<string, RealityReport>();

for (const [name, run] of Object.entries(EXPECTED.runs)) {
  Deno.test(`reality fixture (${name}): every tool gets exactly its expected result`, async () => {
    const where = run.form === "target"
      ? ["fixtures/reality"]
      : ["--", ...SERVER];
    const r = await verity(["--json", ...run.flags, ...where]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as RealityReport;
    reports.set(name, report);
    assert.deepEqual(
      report.tools.map((t) => t.name).sort(),
      Object.keys(run.tools).sort(),
      "the listed tools are exactly the fixture's",
    );
    for (const t of report.tools) {
      assert.deepEqual(actual(t), run.tools[t.name], `tool ${t.name}`);
    }
    assert.deepEqual(report.summary, run.summary);
    assert.deepEqual(
      rejudgeReport(report),
      [],
      "verdicts re-derive from the report's own evidence",
    );
  });
}

Deno.test("reality fixture: arguments honour the pattern and bounds, and are reproducible", async () => {
  let report = reports.get("read-only");
  if (!report) {
    const r = await verity(["--json", "--", ...SERVER]);
    report = JSON.parse(r.stdout) as RealityReport;
  }
  const order = only(report.tools.find((t) => t.name === "order_lookup")!);
  assert.deepEqual(order.argumentsFrom, { kind: "generated" });
  const a = order.arguments as {
    orderId: string;
    quantity: number;
    discount: number;
  };
  assert.match(a.orderId, /^[A-Z]{3}-\d{4}$/);
  assert.ok(
    Number.isInteger(a.quantity) && a.quantity >= 10 && a.quantity <= 20,
    `quantity ${a.quantity}`,
  );
  assert.ok(a.discount > 0 && a.discount < 0.5, `discount ${a.discount}`);
  // The server echoes the order id: the call succeeded with these arguments.
  const result =
    (order.observation as { result: { content: { text: string }[] } }).result;
  assert.ok(result.content[0]!.text.includes(a.orderId));

  const weather = only(report.tools.find((t) => t.name === "weather_report")!);
  assert.ok(
    ["Paris", "Tokyo", "London", "Berlin", "Toronto"].includes(
      String(weather.arguments?.city),
    ),
    "a city property gets a real city name",
  );

  const refusal = report.tools.find((t) => t.name === "refuse_politely")!;
  const ev = refusal.flags[0]!.evidence as { phrase: string; excerpt: string };
  assert.equal(ev.phrase, "i'm sorry, but i can't");
  assert.ok(
    ev.excerpt.includes("I\u2019m sorry"),
    "evidence quotes the text as sent, curly apostrophe and all",
  );

  const broken = report.tools.find((t) => t.name === "broken_structure")!;
  assert.match(broken.flags[0]!.message, /\/temperature must be number/);
  assert.match(
    broken.flags[0]!.message,
    /draft-07/,
    "the dialect named in $schema is used",
  );

  // Same seed, same arguments: the second run (another process) agrees.
  const again = await verity(["--json", "--", ...SERVER]);
  const second = JSON.parse(again.stdout) as RealityReport;
  for (const t of report.tools) {
    const u = second.tools.find((x) => x.name === t.name)!;
    assert.deepEqual(
      u.calls.map((c) => c.arguments),
      t.calls.map((c) => c.arguments),
      `arguments of ${t.name}`,
    );
  }
});

Deno.test("reality: a different --seed draws different values", async () => {
  const r = await verity(["--json", "--seed", "12345", "--", ...SERVER]);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as RealityReport;
  assert.equal(report.options.seed, 12345);
  const order = report.tools.find((t) => t.name === "order_lookup")!;
  const base = reports.get("read-only")?.tools.find((t) =>
    t.name === "order_lookup"
  );
  if (base) assert.notDeepEqual(only(order).arguments, only(base).arguments);
  assert.equal(order.status, "passed", "still valid arguments");
});

Deno.test("reality: --fail-under exits 1 under the threshold, 0 at or above it; --out writes the report", async () => {
  const out = await Deno.makeTempDir();
  try {
    const under = await verity([
      "--fail-under",
      "50",
      "--out",
      `${out}/r.json`,
      "--",
      ...SERVER,
    ]);
    assert.equal(under.code, 1);
    assert.match(
      under.stderr,
      /^verity reality: gate --fail-under 50 failed: score 44\.4% is under 50$/m,
    );
    assert.match(
      under.stdout,
      /Score: 44\.4% F \(4\/14 tools skipped; 9\/14 checked\)/,
    );
    const saved = JSON.parse(
      await Deno.readTextFile(`${out}/r.json`),
    ) as RealityReport;
    assert.equal(saved.summary.score, 44.4);
    assert.deepEqual(
      [...Deno.readDirSync(out)].map((e) => e.name),
      ["r.json"],
      "no temp file left behind",
    );

    const over = await verity(["--fail-under", "44", "--", ...SERVER]);
    assert.equal(over.code, 0, over.stderr);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("reality: a server that cannot be listed exits 2 with one line", async () => {
  const r = await verity(["--", "/nonexistent/verity-no-such-server"]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, /cannot start "\/nonexistent\/verity-no-such-server"/);
  assert.doesNotMatch(r.stderr, /\bat file:/, "no stack trace");
  const dies = await verity(["--", "/bin/false"]);
  assert.equal(dies.code, 2);
  assert.equal(dies.stderr.trim().split("\n").length, 1, dies.stderr);
  assert.match(dies.stderr, /cannot list the server's tools/);
});

Deno.test("reality: bad arguments exit 2 naming the flag or value", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["--fail-under", "101", "--", "x"],
      /--fail-under expects a number from 0 to 100, got "101"/,
    ],
    [["--seed", "-3", "--", "x"], /--seed/],
    [["--seed", "abc", "--", "x"], /--seed expects an integer/],
    [["--timeout", "0", "--", "x"], /--timeout/],
    [["--bogus", "--", "x"], /bogus/],
    [[], /missing server/],
    [
      ["some/target", "--", "x"],
      /either a <target> or -- <command...>, not both/,
    ],
    [["--env", "NOEQUALS", "--", "x"], /--env expects NAME=VALUE/],
  ];
  for (const [args, re] of cases) {
    const r = await verity(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(" "));
    assert.equal(
      r.stderr.trim().split("\n").length,
      1,
      `one line for ${args.join(" ")}`,
    );
  }
});

Deno.test("reality <target>: sandboxed, and every write tool runs on its own fresh reset of the state", async () => {
  let report = reports.get("target-include-destructive");
  if (!report) {
    const r = await verity([
      "--json",
      "--include-destructive",
      "fixtures/reality",
    ]);
    report = JSON.parse(r.stdout) as RealityReport;
  }
  assert.equal(report.server.sandbox, "deno");
  assert.equal(report.server.scratchState, true);
  assert.equal(report.server.definition?.name, "reality");
  // Provenance: the definition's git state (this checkout, or why unknown) and no pin.
  const git = report.server.definition?.git;
  assert.ok(
    (/^[0-9a-f]{40}$/.test(git?.commit ?? "") &&
      typeof git?.dirty === "boolean") ||
      git?.detail === "unknown: not a git checkout",
    JSON.stringify(git),
  );
  assert.deepEqual(report.server.pin, {
    pinned: false,
    detail: "a local command (a fixture), run as found on disk",
  });
  const save = only(report.tools.find((t) => t.name === "save_note")!);
  const text =
    (save.observation as { result: { content: { text: string }[] } }).result
      .content[0]!.text;
  // The seeded notes.json holds one note: the write saw the seed, in a scratch copy.
  assert.match(text, /\(2 notes\)/);
  assert.match(save.session ?? "", /^isolated/);
  const reads = report.tools.filter((t) =>
    t.readOnlyHint.state === "TRUE" && t.status !== "skipped"
  );
  assert.ok(
    reads.every((t) => only(t).session === "shared-1"),
    "read-only tools share one session",
  );
  const seed = JSON.parse(
    await Deno.readTextFile(`${ROOT}fixtures/reality/notes.json`),
  );
  assert.equal(seed.notes.length, 1, "the definition's own seed is untouched");
});

Deno.test("reality <target>: bad targets and misplaced options exit 2 with one line", async () => {
  const cases: [string[], RegExp][] = [
    [["no-such-target-anywhere"], /no-such-target-anywhere/],
    [
      ["--env", "A=1", "fixtures/reality"],
      /--env applies to the -- <command...> form/,
    ],
    // Arguments for a tool the server does not list: refused as verity run
    // refuses it, before any call.
    [
      ["tests/data/failure/unlisted-tool"],
      /tools\[0\]\.name: the server does not list a tool named "search_node"; closest listed: search_nodes/,
    ],
  ];
  for (const [args, re] of cases) {
    const r = await verity(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(" "));
    assert.equal(
      r.stderr.trim().split("\n").length,
      1,
      `one line for ${args.join(" ")}`,
    );
  }
});

Deno.test("reality: a call that hangs or kills the server is a failed call, and the next call gets a new server", async () => {
  const r = await verity([
    "--json",
    "--timeout",
    "2",
    "--env",
    "REALITY_FIXTURE_HANG=weather_report",
    "--env",
    "REALITY_FIXTURE_CRASH=refuse_politely",
    "--",
    ...SERVER,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as RealityReport;
  const by = (n: string) => report.tools.find((t) => t.name === n)!;
  assert.equal(by("weather_report").status, "failed");
  assert.match(
    by("weather_report").failure!.message,
    /^timeout: no answer to tools\/call within 2\.0 s/,
  );
  assert.equal(by("refuse_politely").status, "failed");
  assert.match(
    by("refuse_politely").failure!.message,
    /^exited: server exited before answering/,
  );
  assert.deepEqual(
    ["weather_report", "refuse_politely", "empty_success", "order_lookup"].map((
      n,
    ) => only(by(n)).session),
    ["shared-1", "shared-2", "shared-3", "shared-3"],
  );
  assert.equal(
    by("order_lookup").status,
    "passed",
    "later tools still run on the new server",
  );
  assert.deepEqual(
    {
      checkable: report.summary.checkable,
      passed: report.summary.passed,
      failed: report.summary.failed,
    },
    { checkable: 7, passed: 3, failed: 3 },
  );
});

Deno.test("reality: under half the tools checked, the score has no grade and --fail-under fails unless --allow-low-coverage", async () => {
  // One read-only tool of three: 1/3 checked, 100% of it fine.
  const server = [
    "deno",
    "run",
    `${ROOT}tests/data/failure/unlisted-tool/server.ts`,
  ];
  const r = await verity(["--fail-under", "90", "--", ...server]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stdout,
    /Score: 100% \(2\/3 tools skipped; 1\/3 checked\): ungraded, under half the tools checked/,
  );
  assert.match(
    r.stderr,
    /^verity reality: gate --fail-under 90 failed: score 100% is ungraded: 1\/3 tools checked, under half \(--allow-low-coverage accepts it\)$/m,
  );
  const allowed = await verity([
    "--fail-under",
    "90",
    "--allow-low-coverage",
    "--json",
    "--",
    ...server,
  ]);
  assert.equal(allowed.code, 0, allowed.stderr);
  const report = JSON.parse(allowed.stdout) as RealityReport;
  assert.equal(report.summary.grade, null);
  assert.equal(report.summary.lowCoverage, true);
});

/** The text of a call's first content block. */
function answerText(c: RealityCallEntry): string {
  return (c.observation as { result: { content: { text: string }[] } }).result
    .content[0]!.text;
}

Deno.test("reality <target>: the definition's argument sets are called first, every variant, generated ones only for tools it gives none, and each call says where its arguments came from", async () => {
  const r = await verity([
    "--json",
    "--include-destructive",
    "tests/data/reality-args",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as RealityReport;
  const by = (n: string) => report.tools.find((t) => t.name === n)!;
  // run_query: both of the definition's variants, in order, never a
  // generated string; the real query on the notes table is refused.
  const q = by("run_query");
  assert.deepEqual(
    q.calls.map((c) => [c.argumentsFrom, c.arguments, c.status]),
    [
      [
        { kind: "definition", variant: "answer" },
        { sql: "SELECT 42 AS answer" },
        "passed",
      ],
      [
        { kind: "definition", variant: "titles" },
        { sql: "SELECT title FROM notes" },
        "flagged",
      ],
    ],
  );
  assert.equal(q.status, "flagged", "one flagged call flags the tool");
  assert.deepEqual(q.flags.map((f) => f.rule), ["disguised_refusal"]);
  // city_time: the definition gives none, so generated ones.
  const city = only(by("city_time"));
  assert.deepEqual(city.argumentsFrom, { kind: "generated" });
  assert.ok((city.argumentSources ?? []).length > 0);
  // {state} is the scratch state of the session that made the call.
  const file = only(by("read_state_file"));
  assert.deepEqual(file.argumentsFrom, { kind: "definition", variant: null });
  const path = String(file.arguments.path);
  assert.doesNotMatch(path, /\{state\}/);
  assert.match(path, /^\/.*\/state\/notes\.json$/);
  assert.match(answerText(file), /This note is part of the seeded state/);
  // Each write variant on its own fresh server and reset: both see the seed.
  const adds = by("add_note").calls;
  assert.deepEqual(adds.map((c) => c.session), [
    "isolated:add_note[first]",
    "isolated:add_note[second]",
  ]);
  for (const c of adds) assert.match(answerText(c), /\(2 notes\)/);
  assert.deepEqual(
    {
      checkable: report.summary.checkable,
      flagged: report.summary.flagged,
      grade: report.summary.grade,
    },
    { checkable: 4, flagged: 1, grade: "C" },
  );
  assert.deepEqual(rejudgeReport(report), []);

  // The text names the source of every call's arguments.
  const text = await verity([
    "--include-destructive",
    "tests/data/reality-args",
  ]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /\[titles\] +FLAGGED +\{"sql":"SELECT title FROM notes"\} \(the definition's arguments, variant "titles"\)/,
  );
  assert.match(
    text.stdout,
    /city_time +passed +\{"city":"[^"]+"\} \(generated arguments\)/,
  );

  // The same server with generated arguments only (the command form): its
  // SQL tool gets a made-up string and passes, the grade the definition's
  // arguments overturn.
  const cmd = await verity([
    "--json",
    "--",
    "deno",
    "run",
    `${ROOT}tests/data/reality-args/server.ts`,
  ]);
  assert.equal(cmd.code, 0, cmd.stderr);
  const generated = (JSON.parse(cmd.stdout) as RealityReport).tools.find((t) =>
    t.name === "run_query"
  )!;
  assert.deepEqual(only(generated).argumentsFrom, { kind: "generated" });
  assert.equal(generated.status, "passed");
});
