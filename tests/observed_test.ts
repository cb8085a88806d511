/**
 * Declared vs observed, closed loop: `verity capture` + `verity run
 * --observed-out` + `verity ledger validate` as one pipeline, on
 * fixtures/attempts-deno (refused attempts become scope_violation findings),
 * fixtures/attempts-bubblewrap (privilege use unseen, said so) and the real
 * npm server targets/memory (prepared with `verity prepare`, which needs the
 * npm registry once, as tests/launcher_test.ts does).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ObservedRecords } from "../lib/report/observed.ts";
import type { ValidationReport } from "../lib/evidence/checks.ts";
import { contractHash } from "../lib/evidence/recipes.ts";
import { runVerity } from "./_verity.ts";

const REPO = new URL("../", import.meta.url).pathname;

async function verity(
  args: string[],
  cwd: string = REPO,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args, { cwd, env });
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await Deno.readTextFile(path)) as T;
}

/** Capture, run with --observed-out, validate: the three files and the validation. */
async function pipeline(
  dir: string,
  run: string[],
  capture: string[],
  opts: {
    cwd?: string;
    captureCwd?: string;
    env?: Record<string, string>;
  } = {},
): Promise<
  {
    observed: ObservedRecords;
    validation: ValidationReport;
    ledger: string;
    text: string;
  }
> {
  const declared = join(dir, "declared.json");
  const observed = join(dir, "observed.json");
  const ledger = join(dir, "evidence.json");
  const c = await verity(
    ["capture", "--out", declared, "--", ...capture],
    opts.captureCwd ?? opts.cwd,
    opts.env,
  );
  assert.equal(c.code, 0, c.stderr);
  const r = await verity(
    [
      "run",
      ...run,
      "--runs-dir",
      join(dir, "runs"),
      "--observed-out",
      observed,
      "--quiet",
    ],
    opts.cwd,
  );
  assert.ok(r.code === 0, r.stdout.slice(-2000) + r.stderr);
  assert.match(
    r.stderr,
    /wrote .*observed\.json \(\d+ observed call\(s\), recipe 3\)/,
  );
  const v = await verity([
    "ledger",
    "validate",
    "--declared",
    declared,
    "--observed",
    observed,
    "--out",
    ledger,
    "--json",
  ]);
  assert.equal(v.code, 0, v.stderr);
  return {
    observed: await readJson<ObservedRecords>(observed),
    validation: JSON.parse(v.stdout) as ValidationReport,
    ledger,
    text: r.stdout,
  };
}

Deno.test("pipeline on attempts-deno: per-call privilege use, refused attempts become scope_violation findings", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-observed-test-" });
  try {
    const { observed, validation, text } = await pipeline(
      dir,
      ["attempts-deno"],
      [Deno.execPath(), "run", "server.ts"],
      { captureCwd: join(REPO, "fixtures/attempts-deno") },
    );
    // 4 tools x (3 once + 3 twice x 2 calls) = 36 calls, each recorded.
    assert.equal(observed.observations.length, 36);
    assert.equal(observed.backend, "deno");
    assert.match(text, /^ {2}attempts: seen \(the deno permission log/m);
    const first = (tool: string) =>
      observed.observations.find((o) => o.tool === tool)!;
    const note = first("get_note");
    assert.deepEqual(note.argument_shape, { id: "string" });
    assert.equal(note.outcome, "ok");
    assert.equal(note.privilege?.seen, true);
    assert.deepEqual(
      note.privilege?.writes.map((
        w,
      ) => [w.path.split("/").pop(), w.in_state, w.allowed]),
      [["read-cache.json", false, false]],
    );
    assert.deepEqual(
      note.privilege?.reads.map((r) => [r.path, r.in_state, r.allowed]),
      [["{state}/notes.json", true, true]],
    );
    const config = first("show_config");
    assert.deepEqual(
      config.privilege?.reads.filter((r) => !r.allowed).map((r) => r.path),
      ["/etc/shadow", "/root/.ssh/id_rsa"],
    );
    assert.deepEqual(
      first("lookup_host").privilege?.net.map((n) => [n.value, n.allowed]),
      [["updates.example.com", false]],
    );
    const honest = first("count_notes").privilege!;
    assert.deepEqual(
      [honest.writes, honest.net, honest.env],
      [[], [], []],
    );
    assert.match(
      honest.unseen.join(" "),
      /subprocess: Deno does not log run checks/,
    );
    // The findings: the declared contracts are the observed ones (no
    // contract_mutated); every get_note call wrote (refused) under
    // readOnlyHint true, every lookup_host call reached for the network
    // under openWorldHint false; show_config's refused reads are evidence
    // but no hint speaks of reads. The capture bound each tool's declared
    // annotations to its contract, and the contracts did not move: every
    // call is bound_unmutated, no unbound_annotation.
    const s = validation.summary;
    assert.deepEqual(s.by_check, { scope_violation: 18 });
    assert.equal(s.bound_unmutated, 36);
    const scope = validation.findings.filter((f) =>
      f.check === "scope_violation"
    );
    assert.deepEqual(
      [...new Set(scope.map((f) => f.tool))].sort(),
      ["get_note", "lookup_host"],
    );
    assert.ok(
      scope.filter((f) => f.tool === "get_note").every((f) =>
        f.scope_source === "hints" &&
        /^write .*read-cache\.json \(refused by the sandbox\)$/.test(
          f.privileges![0]!,
        )
      ),
    );
    assert.ok(
      scope.filter((f) => f.tool === "lookup_host").every((f) =>
        f.privileges![0] === "net updates.example.com (refused by the sandbox)"
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verity reality --observed-out on attempts-deno: one record per call, judged the same way", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-observed-test-" });
  try {
    const declared = join(dir, "declared.json");
    const observed = join(dir, "reality-observed.json");
    const c = await verity(
      ["capture", "--out", declared, "--", Deno.execPath(), "run", "server.ts"],
      join(REPO, "fixtures/attempts-deno"),
    );
    assert.equal(c.code, 0, c.stderr);
    const r = await verity([
      "reality",
      "attempts-deno",
      "--observed-out",
      observed,
      "--recipe",
      "3",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = await readJson<ObservedRecords>(observed);
    assert.deepEqual(
      doc.observations.map((o) => [o.tool, o.outcome]),
      [["get_note", "ok"], ["show_config", "ok"], ["lookup_host", "ok"], [
        "count_notes",
        "ok",
      ]],
    );
    const v = await verity([
      "ledger",
      "validate",
      "--declared",
      declared,
      "--observed",
      observed,
      "--out",
      join(dir, "evidence.json"),
      "--json",
    ]);
    assert.equal(v.code, 0, v.stderr);
    const report = JSON.parse(v.stdout) as ValidationReport;
    assert.deepEqual(
      report.findings.filter((f) => f.check === "scope_violation").map((f) =>
        f.tool
      ),
      ["get_note", "lookup_host"],
    );
    // Bad input: one line, exit 2.
    const bad = await verity(["reality", "attempts-deno", "--recipe", "9"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--recipe needs --observed-out/);
    const bad2 = await verity([
      "run",
      "attempts-deno",
      "--observed-out",
      observed,
      "--recipe",
      "9",
    ]);
    assert.equal(bad2.code, 2);
    assert.match(bad2.stderr, /--recipe: unknown contract recipe "9"/);
    assert.equal(bad2.stderr.trim().split("\n").length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pipeline on attempts-bubblewrap: privilege use unseen, said per call, and never judged", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-observed-test-" });
  try {
    const { observed, validation, text } = await pipeline(
      dir,
      ["attempts-bubblewrap"],
      [Deno.execPath(), "run", "server.ts"],
      { captureCwd: join(REPO, "fixtures/attempts-deno") },
    );
    assert.equal(observed.backend, "bubblewrap");
    // The run says it once, under its header.
    assert.match(
      text,
      /^ {2}attempts: UNSEEN \(this backend records no attempts/m,
    );
    assert.equal(observed.observations.length, 36);
    for (const o of observed.observations) {
      assert.equal(o.privilege?.seen, false);
      assert.match(o.privilege!.unseen[0]!, /bubblewrap .* records no attempt/);
    }
    // Bound at capture, unchanged since: no finding at all.
    assert.deepEqual(validation.summary.by_check, {});
    assert.equal(validation.summary.bound_unmutated, 36);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "pipeline on targets/memory (the npm server-memory): capture + run --observed-out + ledger validate, findings listed",
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-observed-memory-" });
    try {
      // As root the sandboxed server runs as uid nobody: the lockfile it
      // reads must be reachable by others (a temp dir is 0700).
      await Deno.chmod(cwd, 0o755);
      await Deno.mkdir(join(cwd, "memory"));
      for (const f of ["target.toml", "seed.jsonl", "deno.lock"]) {
        await Deno.copyFile(
          join(REPO, "targets/memory", f),
          join(cwd, "memory", f),
        );
      }
      const prep = await verity(["prepare", "memory"], cwd);
      assert.equal(prep.code, 0, prep.stderr);
      const { observed, validation, ledger } = await pipeline(
        cwd,
        [
          "memory",
          "--audit",
          "--tool",
          "read_graph",
          "--tool",
          "create_entities",
        ],
        [
          "deno",
          "run",
          "--no-config",
          "--frozen",
          `--lock=${join(cwd, "memory/deno.lock")}`,
          "npm:@modelcontextprotocol/server-memory@2026.8.31",
        ],
        { cwd, env: { DENO_DIR: join(cwd, ".verity/deno_dir") } },
      );
      assert.equal(observed.server, "memory-server");
      // read_graph, and create_entities with its two argument sets (new,
      // existing_name): 3 x 9 calls.
      assert.equal(observed.observations.length, 27);
      const read = observed.observations.filter((o) => o.tool === "read_graph");
      const create = observed.observations.filter((o) =>
        o.tool === "create_entities"
      );
      assert.deepEqual(
        [...new Set(create.map((o) => o.variant))].sort(),
        ["existing_name", "new"],
      );
      // read_graph reads the graph file in the state directory, writes nothing.
      for (const o of read) {
        assert.equal(o.outcome, "ok");
        assert.deepEqual(o.privilege?.writes, []);
        assert.deepEqual(
          o.privilege?.reads.map((r) => [r.path, r.allowed]),
          [["{state}/memory.jsonl", true]],
        );
        assert.deepEqual(o.privilege?.net, []);
      }
      // create_entities rewrites it through a temporary file, inside the state.
      for (const o of create) {
        assert.ok(o.privilege!.writes.length > 0);
        assert.ok(
          o.privilege!.writes.every((w) =>
            w.in_state && w.allowed && w.path.startsWith("{state}/memory.jsonl")
          ),
        );
      }
      // No findings: the contracts served during the run are the captured
      // ones (no contract_mutated), no privilege use outside the hints'
      // scope, and the capture bound each tool's declared annotations to its
      // contract, so every clean call is the healthy bound_unmutated.
      assert.deepEqual(validation.summary.by_check, {});
      assert.deepEqual(validation.findings, []);
      assert.equal(validation.summary.bound_unmutated, 27);
      // So --fail-on-findings passes a clean run.
      const strict = await verity([
        "ledger",
        "validate",
        "--fail-on-findings",
        "--declared",
        join(cwd, "declared.json"),
        "--observed",
        join(cwd, "observed.json"),
        "--out",
        join(cwd, "strict-evidence.json"),
      ]);
      assert.equal(strict.code, 0, strict.stdout + strict.stderr);
      assert.match(strict.stdout, /findings: 0 \(high 0, medium 0, low 0\)/);
      assert.match(strict.stdout, /bound, unmutated: 27 observation\(s\)/);
      // verity reality --observed-out on the same prepared target: the
      // read-only tools, each read only the graph file.
      const rObserved = join(cwd, "reality-observed.json");
      const rr = await verity(
        ["reality", "memory", "--observed-out", rObserved],
        cwd,
      );
      assert.equal(rr.code, 0, rr.stderr);
      const rdoc = await readJson<ObservedRecords>(rObserved);
      assert.deepEqual(
        rdoc.observations.map((o) => o.tool).sort(),
        ["open_nodes", "read_graph", "search_nodes"],
      );
      for (const o of rdoc.observations) {
        assert.deepEqual(o.privilege?.writes, [], o.tool);
        assert.deepEqual(o.privilege?.net, [], o.tool);
      }
      const rv = await verity([
        "ledger",
        "validate",
        "--declared",
        join(cwd, "declared.json"),
        "--observed",
        rObserved,
        "--out",
        join(cwd, "reality-evidence.json"),
        "--json",
      ]);
      assert.equal(rv.code, 0, rv.stderr);
      const rs = (JSON.parse(rv.stdout) as ValidationReport).summary;
      assert.deepEqual(rs.by_check, {});
      assert.equal(rs.bound_unmutated, 3);
      // The check can fail on this server: a declaration claiming
      // create_entities is read-only makes its real writes scope_violation
      // findings, and its declared contract is not the one served:
      // contract_mutated.
      const declared = await readJson<
        {
          tools: {
            name: string;
            contract_hash: string;
            raw: { annotations: Record<string, boolean> };
          }[];
        }
      >(join(cwd, "declared.json"));
      const create0 = declared.tools.find((t) => t.name === "create_entities")!;
      create0.raw.annotations.readOnlyHint = true;
      create0.contract_hash = contractHash(create0.raw, "3");
      const lying = join(cwd, "declared-lying.json");
      await Deno.writeTextFile(lying, JSON.stringify(declared));
      const v = await verity([
        "ledger",
        "validate",
        "--declared",
        lying,
        "--observed",
        join(cwd, "observed.json"),
        "--out",
        ledger,
        "--json",
      ]);
      assert.equal(v.code, 0, v.stderr);
      const bad = JSON.parse(v.stdout) as ValidationReport;
      assert.deepEqual(bad.summary.by_check, {
        contract_mutated: 18,
        scope_violation: 18,
      });
      assert.equal(bad.summary.bound_unmutated, 9, "read_graph's calls");
      // The binding made at capture is to the contract the server really
      // served, so it is not stale: the edited declaration is what moved.
      assert.ok(
        bad.findings.filter((f) => f.check === "contract_mutated").every((f) =>
          f.bindings === undefined
        ),
      );
      assert.ok(
        bad.findings.filter((f) => f.check === "scope_violation").every((f) =>
          f.tool === "create_entities" &&
          f.privileges!.some((p) =>
            p === "write {state}/memory.jsonl (allowed by the sandbox)"
          )
        ),
      );
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

Deno.test("report verify: a report whose refused attempts were dropped from an observation is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-observed-test-" });
  try {
    const r = await verity([
      "run",
      "attempts-deno",
      "--tool",
      "get_note",
      "--json",
      "--runs-dir",
      dir,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    const path = join(dir, report.runId, "report.json");
    assert.equal((await verity(["report", "verify", path])).code, 0);
    const once = report.observations.tools[0].once[0];
    assert.deepEqual(
      once.attempts.filter((a: { permission: string }) =>
        a.permission === "write"
      ).length,
      1,
    );
    once.attempts = [];
    const edited = join(dir, "edited.json");
    await Deno.writeTextFile(edited, JSON.stringify(report));
    const bad = await verity(["report", "verify", edited]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stdout,
      /observations\.tools\[0\] \(get_note\)\.once\[0\]\.attempts: report says \[\]/,
    );
    // and the verdict it carried is no longer what that evidence gives.
    assert.match(
      bad.stdout,
      /get_note read_only reason: report says "ATTEMPTED_WRITE"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
