/**
 * Provenance a reviewer needs, end to end through `verity run`: the
 * definition's git state (a dirty checkout is reported dirty, in every
 * format), the target's pin (none for a local command), the control
 * sessions' delta against the seed (startup-writer's boot row), and the
 * state after every errored call (liar-readonly-error: `peek` errors after
 * writing, `fail_cleanly` errors cleanly). `report verify` re-derives the
 * state effects and refuses edits to them, and refuses a pinned target
 * whose sessions ran something else; a report without the new fields (as
 * every published one) still verifies.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const dec = new TextDecoder();

async function verity(
  args: string[],
  cwd = ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args, { cwd });
}

async function git(dir: string, ...args: string[]): Promise<string> {
  const r = await new Deno.Command("git", {
    args: ["-C", dir, ...args],
    stdout: "piped",
    stderr: "piped",
    env: {
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.org",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.org",
    },
  }).output();
  assert.equal(r.code, 0, dec.decode(r.stderr));
  return dec.decode(r.stdout).trim();
}

const runsDir = Deno.makeTempDirSync({ prefix: "verity-provenance-" });

// deno-lint-ignore no-explicit-any
type Json = any;

async function run(
  definition: string,
): Promise<{ report: Json; path: string }> {
  const r = await verity(["run", definition, "--json", "--runs-dir", runsDir]);
  assert.ok(r.stdout.trim().startsWith("{"), r.stderr.slice(-800));
  const report = JSON.parse(r.stdout);
  return { report, path: join(runsDir, report.runId, "report.json") };
}

async function verifyEdited(
  report: Json,
): Promise<{ code: number; out: string }> {
  const file = join(runsDir, `edited-${crypto.randomUUID()}.json`);
  await Deno.writeTextFile(file, JSON.stringify(report));
  const r = await verity(["report", "verify", file]);
  return { code: r.code, out: r.stdout + r.stderr };
}

Deno.test("a dirty definition checkout is reported dirty in every format; a clean one clean", async () => {
  // malformed-hints needs nothing outside its directory.
  const repo = await Deno.makeTempDir({ prefix: "verity-defrepo-" });
  try {
    const dir = join(repo, "malformed-hints");
    await Deno.mkdir(dir);
    for (const f of ["fixture.toml", "notes.json", "server.ts"]) {
      await Deno.copyFile(
        join(ROOT, "fixtures/malformed-hints", f),
        join(dir, f),
      );
    }
    await git(repo, "init", "-q");
    await git(repo, "add", ".");
    await git(repo, "commit", "-q", "-m", "fixture");
    const head = await git(repo, "rev-parse", "HEAD");

    const clean = await run(dir);
    assert.deepEqual(clean.report.provenance.definition.git, {
      commit: head,
      dirty: false,
      repository: null,
      detail: null,
    });
    assert.deepEqual(clean.report.provenance.target, {
      pinned: false,
      detail: "a local command (a fixture), run as found on disk",
    });

    // An uncommitted edit to the definition (a comment: verdicts unchanged).
    const toml = join(dir, "fixture.toml");
    await Deno.writeTextFile(
      toml,
      (await Deno.readTextFile(toml)) + "\n# edited after the commit\n",
    );
    const dirty = await run(dir);
    const g = dirty.report.provenance.definition.git;
    assert.equal(g.commit, head);
    assert.equal(g.dirty, true);
    assert.match(g.detail, /fixture\.toml/);
    assert.deepEqual(
      dirty.report.verdicts.map((v: Json) => v.outcome),
      clean.report.verdicts.map((v: Json) => v.outcome),
    );

    const text = await verity(["report", dirty.path, "--format", "text"]);
    assert.match(
      text.stdout,
      new RegExp(
        `definition: .*fixture\\.toml sha256:[0-9a-f]{64} \\(git: commit ${head}, DIRTY \\(`,
      ),
    );
    assert.match(text.stdout, /target: no pin: a local command \(a fixture\)/);
    const html = await verity(["report", dirty.path, "--format", "html"]);
    assert.match(
      html.stdout,
      /definition git<\/th><td[^>]*><span class="mono">commit [0-9a-f]{40}, DIRTY/,
    );
    assert.match(html.stdout, /<span class="badge warn">dirty<\/span>/);
    const junit = await verity(["report", dirty.path, "--format", "junit"]);
    assert.match(
      junit.stdout,
      /<property name="verity.definition.git.dirty" value="true"\/>/,
    );
    assert.match(
      junit.stdout,
      new RegExp(
        `<property name="verity.definition.git.commit" value="${head}"/>`,
      ),
    );
    assert.match(
      junit.stdout,
      /<property name="verity.definition.digest" value="sha256:[0-9a-f]{64}"\/>/,
    );
    const sarif = JSON.parse(
      (await verity(["report", dirty.path, "--format", "sarif"])).stdout,
    );
    const vcs = sarif.runs[0].versionControlProvenance;
    assert.equal(vcs[0].revisionId, head);
    assert.equal(vcs[0].properties.role, "definition");
    assert.equal(vcs[0].properties.dirty, true);
    assert.equal(sarif.runs[0].properties.definition.git.dirty, true);

    const ok = await verity(["report", "verify", dirty.path]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("the control session's own effect on the seed is a delta in the report and the text", async () => {
  const { report, path } = await run("startup-writer");
  const control = report.stateEffects.control;
  assert.equal(control.length, report.observations.definition.control.length);
  for (const c of control) {
    assert.equal(c.from, report.observations.definition.seedDigest);
    assert.equal(c.changed, true);
    assert.match(c.deltaDigest, /^sha256:[0-9a-f]{64}$/);
    // The boot row, in the append-only log, and nothing else.
    assert.deepEqual(Object.keys(c.delta), ["append_only"]);
    assert.equal(c.delta.append_only.added.length, 1);
    assert.match(c.delta.append_only.added[0].region, /boot_log/);
  }
  assert.equal(report.observations.definition.startupWrites, true);
  const text = await verity(["report", path, "--format", "text"]);
  assert.match(
    text.stdout,
    /control sessions: stable; the server writes state on start or stop\n {2}control effect: changed the seed: append-only \+1 ~0 -0 \(delta sha256:[0-9a-f]{64}\)/,
  );
  const html = await verity(["report", path, "--format", "html"]);
  assert.match(
    html.stdout,
    /control effect<\/th><td[^>]*><div><span class="badge warn">changed the seed/,
  );
});

Deno.test("every errored call says whether its session changed state; a tool that errors and writes gets a text line", async () => {
  const { report, path } = await run("liar-readonly-error");
  const errored = report.stateEffects.erroredCalls;
  const peek = errored.filter((e: Json) => e.tool === "peek");
  const clean = errored.filter((e: Json) => e.tool === "fail_cleanly");
  // Every errored call of the observations is listed.
  const calls = report.observations.tools.flatMap((t: Json) =>
    [...t.once, ...t.twice, ...(t.concurrent ?? [])].flatMap((s: Json) =>
      s.calls.filter((c: Json) => c.status !== "ok")
    )
  );
  assert.equal(errored.length, calls.length);
  assert.ok(peek.length >= 6 && clean.length >= 6);
  for (const e of peek) {
    assert.equal(e.status, "tool_error");
    assert.equal(e.stateChanged, true);
    assert.equal(e.beyondControl, true);
    assert.match(e.deltaDigest, /^sha256:[0-9a-f]{64}$/);
  }
  for (const e of clean) {
    assert.equal(e.stateChanged, false);
    assert.equal(e.to, e.from);
  }
  const text = (await verity(["report", path, "--format", "text"])).stdout;
  assert.match(
    text,
    /errored calls: \d+ errored call\(s\) in \d+ session\(s\); state changed in 6 \(beyond the control's own effect in 6\)/,
  );
  assert.match(
    text,
    /\n {4}peek once run 1 call 1 tool_error: state changed vs the seed, beyond the control session's own effect \(delta sha256:[0-9a-f]{64}\)/,
  );
  assert.doesNotMatch(text, /\n {4}fail_cleanly .* call \d/);

  // report verify re-derives the effects and refuses edits to them.
  const ok = await verity(["report", "verify", path]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  const flipped = structuredClone(report);
  const i = flipped.stateEffects.erroredCalls.findIndex((e: Json) =>
    e.tool === "peek"
  );
  flipped.stateEffects.erroredCalls[i].stateChanged = false;
  const bad = await verifyEdited(flipped);
  assert.equal(bad.code, 1);
  assert.match(
    bad.out,
    new RegExp(`stateEffects\\.erroredCalls\\[${i}\\]: report says`),
  );
  const dropped = structuredClone(report);
  dropped.stateEffects.erroredCalls.pop();
  assert.match(
    (await verifyEdited(dropped)).out,
    /stateEffects\.erroredCalls: report says \d+ entr\(ies\), evidence gives \d+/,
  );
  const ctl = structuredClone(report);
  ctl.stateEffects.control[0].changed = true;
  assert.match(
    (await verifyEdited(ctl)).out,
    /stateEffects\.control\[0\]: report says/,
  );
  const extra = structuredClone(report);
  extra.stateEffects.note = "all fine";
  assert.match(
    (await verifyEdited(extra)).out,
    /stateEffects: expected exactly/,
  );
  // Reports written before these fields (every published one) verify.
  const older = structuredClone(report);
  delete older.stateEffects;
  delete older.provenance.target;
  delete older.provenance.definition.git;
  assert.equal((await verifyEdited(older)).code, 0);
  // A pinned target whose sessions ran another program is refused.
  const pinned = structuredClone(report);
  pinned.provenance.target = {
    pinned: true,
    package: "@example/server",
    version: "1.0.0",
    integrity: "sha512-x",
    git: null,
    commit: null,
    preparedCache: true,
    runtime: "deno",
    lockIntegrity: "sha512-x",
    tarball: null,
    preparedAt: "2026-12-01T00:00:00.000Z",
  };
  const wrong = await verifyEdited(pinned);
  assert.equal(wrong.code, 1);
  assert.match(
    wrong.out,
    /sessions\[0\]\.command: does not run the pinned npm:@example\/server@1\.0\.0/,
  );
});

Deno.test("cleanup", async () => {
  await Deno.remove(runsDir, { recursive: true });
});
