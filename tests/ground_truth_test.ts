/**
 * Ground truth: every fixture, run end to end through `verity run`, must get
 * exactly its expected verdicts. A verdict that changes is a failing test.
 * Then each saved report must re-derive under `verity report verify`, and an
 * edited verdict must be refused.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const fixtureDir = (name: string) =>
  new URL(`../fixtures/${name}`, import.meta.url).pathname;

async function verity(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args);
}

const fixtures: string[] = [];
for (const e of Deno.readDirSync(join(ROOT, "fixtures"))) {
  if (!e.isDirectory) continue;
  try {
    const toml = Deno.readTextFileSync(
      join(ROOT, "fixtures", e.name, "fixture.toml"),
    );
    if (toml.includes("[tools.expected.")) fixtures.push(e.name);
  } catch {
    // not a battery fixture
  }
}
fixtures.sort();

const runsDir = Deno.makeTempDirSync({ prefix: "verity-ground-truth-" });
const reports = new Map<string, string>();

Deno.test("there are ground-truth fixtures for every verdict kind", () => {
  for (
    const f of [
      "honest-readonly",
      "honest-idempotent",
      "liar-idempotent",
      "liar-concurrent",
      "liar-readonly",
      "liar-destructive",
      "silent-safe",
      "opaque",
      "flaky",
      "malformed-hints",
      "liar-readonly-error",
      "startup-writer",
      "json-store",
      "liar-openworld",
      "honest-closedworld",
      "native-python",
      "pg-honest-readonly",
      "pg-liar-readonly",
      "pg-liar-destructive",
      "pg-liar-concurrent",
      "pg-hidden-writes",
      "pg-tcp",
      "pg-tcp-bubblewrap",
      "cannot-start",
      "dies-every-session",
      "memory-toggle",
      "memory-counter",
      "task-required",
      "stdout-noise",
      "unclassified-cache",
      "readonly-side-effects",
      "free-sql",
      "natural-key",
      "readonly-sqlite-internals",
      "unstable-seed",
      "attempts-deno",
      "attempts-bubblewrap",
      "writes-anywhere",
      "writes-anywhere-deno",
      "rug-pull",
    ]
  ) assert.ok(fixtures.includes(f), `fixture ${f} is missing`);
});

for (const fixture of fixtures) {
  Deno.test(`ground truth: ${fixture}`, async () => {
    const r = await verity(["run", fixture, "--json", "--runs-dir", runsDir]);
    assert.ok(
      r.stdout.trim().startsWith("{"),
      `no report from ${fixture}: ${r.stderr.slice(-500)}`,
    );
    const report = JSON.parse(r.stdout);
    const failed = report.expectations.results.filter((
      e: { matched: boolean },
    ) => !e.matched)
      .map((e: { tool: string; test: string; mismatches: string[] }) =>
        `${e.tool} ${e.test}: ${e.mismatches.join("; ")}`
      );
    assert.deepEqual(failed, [], `${fixture}: expectations not met`);
    assert.ok(report.expectations.total > 0, `${fixture} has no expectations`);
    // Every (tool, test) pair the battery judged has an expectation.
    assert.equal(
      report.expectations.total,
      report.verdicts.length,
      `${fixture}: a verdict without an expectation`,
    );
    // A server that could not be audited fails the run even when every
    // expectation (all SETUP_FAILED) matched.
    assert.equal(r.code, report.setupFailure ? 1 : 0, r.stderr.slice(-500));
    const setupOnly = report.verdicts.every((v: { outcome: string }) =>
      v.outcome === "INCONCLUSIVE:SETUP_FAILED"
    );
    assert.equal(Boolean(report.setupFailure), setupOnly);
    reports.set(fixture, join(runsDir, report.runId, "report.json"));
  });
}

// Audits with no definition: a fixture directory with an audit.json (the
// command, and the verdict of every (tool[variant], test) pair), run as
// `verity run --audit -- <command>`.
const zeroConfig = [...Deno.readDirSync(join(ROOT, "fixtures"))]
  .filter((e) => e.isDirectory)
  .map((e) => e.name)
  .filter((name) => {
    try {
      return Deno.statSync(join(ROOT, "fixtures", name, "audit.json"))
        .isFile;
    } catch {
      return false;
    }
  })
  .sort();

Deno.test("there are ground-truth fixtures audited with no definition", () => {
  for (const f of ["zero-home", "zero-delete"]) {
    assert.ok(zeroConfig.includes(f), `fixture ${f} is missing`);
  }
});

for (const fixture of zeroConfig) {
  Deno.test(`ground truth, no definition: ${fixture}`, async () => {
    const expected = JSON.parse(
      await Deno.readTextFile(join(ROOT, "fixtures", fixture, "audit.json")),
    ) as { command: string[]; verdicts: Record<string, string> };
    const r = await runVerity(
      [
        "run",
        "--audit",
        "--json",
        "--runs-dir",
        runsDir,
        "--",
        ...expected.command,
      ],
      { cwd: ROOT },
    );
    assert.ok(
      r.stdout.trim().startsWith("{"),
      `no report from ${fixture}: ${r.stderr.slice(-500)}`,
    );
    const report = JSON.parse(r.stdout);
    assert.equal(r.code, 0, r.stderr.slice(-500));
    const got = Object.fromEntries(
      report.verdicts.map((
        v: {
          tool: string;
          variant: string | null;
          test: string;
          outcome: string;
        },
      ) => [
        `${v.variant ? `${v.tool}[${v.variant}]` : v.tool} ${v.test}`,
        v.outcome,
      ]),
    );
    assert.deepEqual(got, expected.verdicts, `${fixture}: verdicts`);
    // What seeding by use made, and every argument's origin, in the report
    // (its seed rebuilt from the learned target beside it).
    const dir = join(runsDir, report.runId);
    const learned = report.learned;
    const violated = report.verdicts.filter((v: { outcome: string }) =>
      v.outcome === "VIOLATION"
    );
    for (const v of violated) {
      const call = learned.calls.find((c: { tool: string }) =>
        c.tool === v.tool
      );
      assert.ok(call, `${v.tool}: its arguments are named`);
      if (v.test === "destructive") {
        assert.ok(
          call.origins.some((o: { from: string }) =>
            o.from.startsWith("derived from the seed")
          ),
          `${v.tool}: called on a record the seed holds: ${
            JSON.stringify(call.origins)
          }`,
        );
      }
    }
    const ok = await verity(["report", "verify", join(dir, "report.json")]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    if (fixture === "zero-delete") {
      // archive_tag's generated tag names nothing and deletes nothing: the
      // fact is in the learned target and the report, the claim untested
      // with its reason, and verify re-derives the verdict from the fact.
      const toml = await Deno.readTextFile(join(dir, "target", "target.toml"));
      assert.match(
        toml,
        /name = "archive_tag"\n(?:.*\n)*?learned = "names_nothing"/,
      );
      assert.ok(
        report.summary.claims.untested.some((
          u: { tool: string; test: string; reason: string },
        ) =>
          u.tool === "archive_tag" && u.test === "destructive" &&
          u.reason === "NOTHING_TO_CHANGE"
        ),
      );
      const stored = JSON.parse(
        await Deno.readTextFile(join(dir, "report.json")),
      );
      const obs = stored.observations.tools.find((t: { tool: string }) =>
        t.tool === "archive_tag"
      );
      assert.equal(obs.learned, "names_nothing");
      obs.learned = "names_seed_record";
      const edited = join(dir, "edited.json");
      await Deno.writeTextFile(edited, JSON.stringify(stored));
      const bad = await verity(["report", "verify", edited]);
      assert.equal(bad.code, 1, bad.stdout + bad.stderr);
      assert.match(
        bad.stdout,
        /archive_tag destructive outcome: report says "INCONCLUSIVE:NOTHING_TO_CHANGE", evidence gives "PASS"/,
      );
    }
    if (fixture === "zero-home") {
      const toml = await Deno.readTextFile(join(dir, "target", "target.toml"));
      assert.match(
        toml,
        /kind = "sqlite"\nlabel = ".local\/share\/jotter\/db.sqlite"/,
      );
      assert.match(toml, /kind = "json"\nlabel = "work\/settings.json"/);
    }
  });
}

Deno.test("every saved report re-derives, and an edited verdict is refused", async () => {
  const path = reports.get("liar-concurrent");
  assert.ok(path, "liar-concurrent report was written");
  const ok = await verity(["report", "verify", path]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  const report = JSON.parse(await Deno.readTextFile(path));
  const v = report.verdicts.find((x: { test: string }) =>
    x.test === "concurrent_idempotence"
  );
  assert.equal(v.outcome, "VIOLATION");
  v.outcome = "PASS";
  const edited = join(runsDir, "edited.json");
  await Deno.writeTextFile(edited, JSON.stringify(report));
  const bad = await verity(["report", "verify", edited]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stdout,
    /register concurrent_idempotence outcome: report says "PASS", evidence gives "VIOLATION"/,
  );
  // Tampering with the state evidence is caught by the snapshot digests.
  // The seed is kept by reference to the definition (verity.report/3: a
  // seed every reset rebuilds), the other snapshots as patches against
  // it: editing a patch is caught by the rebuilt digest.
  const report2 = JSON.parse(await Deno.readTextFile(path));
  assert.equal(report2.schema, "verity.report/3");
  const entries = Object.entries(report2.snapshots) as [
    string,
    {
      base?: string;
      seedRef?: { definition: string; file: string };
      regions: { put?: unknown[] }[];
    },
  ][];
  const [seedDigest, ref] = entries.find(([, s]) => s.seedRef !== undefined)!;
  assert.equal(seedDigest, report2.observations.definition.seedDigest);
  assert.equal(ref.seedRef!.definition, report2.provenance.definition.digest);
  const [digest, patch] = entries.find(([, s]) =>
    s.base !== undefined && s.regions.some((r) => r.put!.length > 0)
  )!;
  patch.regions.find((r) => r.put!.length > 0)!.put!.pop();
  await Deno.writeTextFile(edited, JSON.stringify(report2));
  const bad2 = await verity(["report", "verify", edited]);
  assert.equal(bad2.code, 1);
  assert.match(
    bad2.stdout,
    new RegExp(`snapshots\\.${digest.replace(/[:]/g, ".")}`),
  );
  // The seed is rebuilt from the definition: another definition is refused
  // (exit 1), and with no definition at hand verify checks nothing and
  // says what it needs (exit 2), never "verified".
  const other = await verity([
    "report",
    "verify",
    path,
    "--definition",
    fixtureDir("liar-readonly-error"),
  ]);
  assert.equal(other.code, 1, other.stdout + other.stderr);
  assert.match(
    other.stdout,
    /the seed is kept by reference to definition sha256:[0-9a-f]{64}, but \S*\/fixtures\/liar-readonly-error has digest/,
  );
  const moved = JSON.parse(await Deno.readTextFile(path));
  moved.snapshots[seedDigest].seedRef.file = "/nonexistent/fixture.toml";
  await Deno.writeTextFile(edited, JSON.stringify(moved));
  const none = await verity(["report", "verify", edited]);
  assert.equal(none.code, 2, none.stdout + none.stderr);
  assert.doesNotMatch(none.stdout, /verified/);
  assert.match(
    none.stderr,
    /seed state is kept by reference .*give --definition DIR/,
  );
  const given = await verity([
    "report",
    "verify",
    edited,
    "--definition",
    fixtureDir("liar-concurrent"),
  ]);
  assert.equal(given.code, 0, given.stdout + given.stderr);
  assert.match(
    given.stdout,
    /seed: rebuilt from \S*\/fixtures\/liar-concurrent /,
  );
  // Every session was compared with the seed it started from: the control
  // sessions left it as it was (no snapshot taken, the seed's digest), a
  // session that wrote was snapshotted whole, saying why.
  type Sess = {
    kind: string;
    stateMethod?: { method: string; why: string | null };
  };
  const sessions = report2.sessions as Sess[];
  const control = sessions.filter((s) => s.kind === "control");
  assert.ok(control.length > 0);
  for (const s of control) {
    assert.deepEqual(s.stateMethod, { method: "seed", why: null });
  }
  // Its sessions insert rows into a rowid table: the page reader keeps the
  // added rows' values, and the state is kept as a patch against the seed
  // (applied to the seed's snapshot), no snapshot taken (the report verifies: above).
  assert.ok(
    sessions.some((s) =>
      s.stateMethod?.method === "patched" &&
      s.stateMethod.why === "the state differs from the seed"
    ),
  );
  assert.ok(!sessions.some((s) => s.stateMethod?.method === "snapshot"));
  // A session that changed rows (liar-destructive renames one) is kept as
  // a patch the same way, and its report verifies (its digest re-derived
  // from the stored state).
  const destructivePath = reports.get("liar-destructive");
  assert.ok(destructivePath, "liar-destructive report was written");
  const destructive = JSON.parse(await Deno.readTextFile(destructivePath));
  assert.ok(
    (destructive.sessions as Sess[]).some((s) =>
      s.stateMethod?.method === "patched" &&
      s.stateMethod.why === "the state differs from the seed"
    ),
  );
  const checked = await verity([
    "report",
    "verify",
    destructivePath,
    "--definition",
    fixtureDir("liar-destructive"),
  ]);
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  // A seed that calls random() is not rebuilt exactly: kept whole
  // (verity.report/2), and every session snapshotted, saying why.
  const unstablePath = reports.get("unstable-seed");
  assert.ok(unstablePath, "unstable-seed report was written");
  const unstable = JSON.parse(await Deno.readTextFile(unstablePath));
  assert.equal(unstable.schema, "verity.report/2");
  for (const s of unstable.sessions as Sess[]) {
    if (s.stateMethod === undefined) continue;
    assert.equal(s.stateMethod.method, "snapshot");
    assert.match(s.stateMethod.why ?? "", /^no seed to compare with: /);
  }
  assert.ok((unstable.sessions as Sess[]).some((s) => s.stateMethod));
  // History version 2 stores the timer's stamps only; the concurrent check
  // decides overlap from them, and a decision written into the history is refused.
  const report3 = JSON.parse(await Deno.readTextFile(path));
  assert.ok(report3.provenance.history >= 2);
  const attempts = report3.observations.tools.flatMap((
    t: { concurrent: Record<string, unknown>[] | null },
  ) => t.concurrent ?? []);
  assert.ok(attempts.length > 0);
  for (const a of attempts) {
    assert.equal("overlap" in a, false);
    assert.ok(Array.isArray(a.timeline));
  }
  attempts[0].overlap = true;
  await Deno.writeTextFile(edited, JSON.stringify(report3));
  const bad3 = await verity(["report", "verify", edited]);
  assert.equal(bad3.code, 1);
  assert.match(bad3.stdout, /history version \d+ stores no overlap decision/);
  // A tool that needs the task protocol is never called (no session names
  // it) and says so; a report that drops the reason is refused.
  const taskPath = reports.get("task-required");
  assert.ok(taskPath, "task-required report was written");
  const task = JSON.parse(await Deno.readTextFile(taskPath));
  assert.equal(
    task.sessions.filter((x: { tool: string | null }) =>
      x.tool === "build_report"
    ).length,
    0,
  );
  const build = task.observations.tools.find((t: { tool: string }) =>
    t.tool === "build_report"
  );
  assert.equal(build.skipped.reason, "task_required");
  delete build.skipped;
  await Deno.writeTextFile(edited, JSON.stringify(task));
  const bad4 = await verity(["report", "verify", edited]);
  assert.equal(bad4.code, 1);
  assert.match(bad4.stdout, /\(build_report\)\.skipped/);
  const report5 = JSON.parse(await Deno.readTextFile(path));
  const patched = (Object.entries(report5.snapshots) as [
    string,
    { base?: string; regions: { put: unknown[]; drop: string[] }[] },
  ][]).find(([, s]) =>
    s.base !== undefined && s.regions.some((r) => r.put.length > 0)
  );
  assert.ok(patched, "a snapshot stored as a patch that puts a record");
  const region = patched[1].regions.find((r) => r.put.length > 0)!;
  region.put.pop();
  await Deno.writeTextFile(edited, JSON.stringify(report5));
  const bad5 = await verity(["report", "verify", edited]);
  assert.equal(bad5.code, 1);
  assert.match(
    bad5.stdout,
    new RegExp(`snapshots\\.${patched[0].replace(/[:]/g, ".")}`),
  );
  // Every run appended its report to the runs directory's ledger: each
  // report binds to its block under the ledger's head; the edited copy does not.
  const ledger = join(runsDir, "ledger.json");
  const head = (await verity(["ledger", "head", "--ledger", ledger])).stdout
    .trim();
  assert.match(head, /^sha256:[0-9a-f]{64}$/);
  const bind = ["--ledger", ledger, "--expected-head", head];
  for (const [fixture, p] of reports) {
    const again = await verity(["report", "verify", p, ...bind]);
    assert.equal(again.code, 0, `${fixture}: ${again.stdout}`);
    assert.match(again.stdout, /report verified and bound to the ledger head/);
  }
  const unbound = await verity(["report", "verify", edited, ...bind]);
  assert.equal(unbound.code, 1);
  assert.match(unbound.stdout, /LEDGER no block of the ledger records/);
});

Deno.test("writes anywhere: the paths are the evidence under both backends, the host is untouched, an edited changeset is refused", async () => {
  const here = fixtureDir("writes-anywhere").replace(/\/$/, "");
  const ro = (fixture: string) => {
    const path = reports.get(fixture);
    assert.ok(path, `${fixture} report was written`);
    const report = JSON.parse(Deno.readTextFileSync(path));
    const v = report.verdicts.find((x: { tool: string; test: string }) =>
      x.tool === "lookup_note" && x.test === "read_only"
    );
    return { path, report, evidence: v.evidence };
  };
  const overlay = ro("writes-anywhere");
  assert.deepEqual(
    [
      ...new Set(
        overlay.evidence.outside_writes.flatMap((r: { paths: string[] }) =>
          r.paths
        ),
      ),
    ].sort(),
    [
      "/tmp/writes-anywhere",
      "/tmp/writes-anywhere/lookups.jsonl",
      `${here}/last-lookup.txt`,
    ].sort(),
  );
  const deno = ro("writes-anywhere-deno");
  assert.ok(
    deno.evidence.attempted_writes.every((r: { values: string[] }) =>
      r.values.includes(`${here}/last-lookup.txt`)
    ),
    JSON.stringify(deno.evidence.attempted_writes),
  );
  // Into the overlay only: nothing beside the code on the host.
  await assert.rejects(Deno.lstat(`${here}/last-lookup.txt`));
  assert.match(await Deno.readTextFile(`${here}/catalog.json`), /"c1"/);
  const digest = Object.keys(overlay.report.changesets).find((d) =>
    overlay.report.changesets[d].changes.length > 1
  )!;
  overlay.report.changesets[digest].changes.pop();
  const edited = join(runsDir, "edited-changeset.json");
  await Deno.writeTextFile(edited, JSON.stringify(overlay.report));
  const bad = await verity(["report", "verify", edited]);
  assert.equal(bad.code, 1, bad.stdout);
  assert.match(
    bad.stdout,
    new RegExp(`changesets\\.${digest.replace(/[:]/g, ".")}`),
  );
});

Deno.test("verity run refuses bad input with one line and exit 2", async () => {
  for (
    const [args, msg] of [
      [
        ["run", "honest-readonly", "--runs", "2"],
        /--runs expects an integer >= 3/,
      ],
      [["run", "no-such-fixture"], /no-such-fixture/],
      [
        ["run", "honest-readonly", "--tool", "nope"],
        /--tool "nope": no such tool/,
      ],
    ] as const
  ) {
    const r = await verity([...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, msg);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
});
