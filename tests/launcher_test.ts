/**
 * One definition launcher for every command: `verity prepare <target>` then
 * `verity reality <target>` runs the prepared npm package offline from the
 * prepared cache, exactly as `verity run <target> --audit` does; an
 * unprepared target is refused the same way by both.
 *
 * Needs the npm registry once (`verity prepare`), as `deno task test`
 * already does for the fixtures' SDK.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RealityReport } from "../lib/reality/report.ts";
import { runVerity } from "./_verity.ts";

const REPO = new URL("../", import.meta.url).pathname;

async function verity(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return await runVerity(args, { cwd });
}

async function copyMemoryTarget(cwd: string): Promise<void> {
  const target = join(cwd, "memory");
  await Deno.mkdir(target);
  for (const f of ["target.toml", "seed.jsonl", "deno.lock"]) {
    await Deno.copyFile(join(REPO, "targets/memory", f), join(target, f));
  }
}

Deno.test("verity reality refuses an unprepared npm target like verity run, naming verity prepare", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "verity-launcher-test-" });
  try {
    await copyMemoryTarget(cwd);
    const r = await verity(["reality", "memory"], cwd);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^verity reality: target memory is not prepared: run `verity prepare memory`/,
    );
    assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test({
  name:
    "verity reality <target> runs a prepared npm target from the prepared cache, sandboxed, every write on its own reset",
  sanitizeResources: false,
  async fn() {
    const cwd = await Deno.makeTempDir({ prefix: "verity-launcher-test-" });
    try {
      await copyMemoryTarget(cwd);
      const prep = await verity(["prepare", "memory"], cwd);
      assert.equal(prep.code, 0, prep.stderr);
      const r = await verity(
        ["reality", "memory", "--include-destructive", "--json"],
        cwd,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /not found in cache/);
      const report = JSON.parse(r.stdout) as RealityReport;
      assert.equal(report.server.sandbox, "deno");
      assert.equal(report.server.scratchState, true);
      assert.deepEqual(report.listingProblems, []);
      const names = report.tools.map((t) => t.name).sort();
      assert.deepEqual(names, [
        "add_observations",
        "create_entities",
        "create_relations",
        "delete_entities",
        "delete_observations",
        "delete_relations",
        "open_nodes",
        "read_graph",
        "search_nodes",
      ]);
      const readGraph = report.tools.find((t) => t.name === "read_graph")!;
      assert.equal(readGraph.status, "passed");
      assert.equal(readGraph.calls[0]?.observation.kind, "result");
      // The definition's argument sets, each variant of a write tool on a
      // fresh server on a fresh reset of its own.
      const create = report.tools.find((t) => t.name === "create_entities")!;
      assert.deepEqual(
        create.calls.map((c) => [c.argumentsFrom, c.session]),
        [
          [
            { kind: "definition", variant: "new" },
            "isolated:create_entities[new]",
          ],
          [
            { kind: "definition", variant: "existing_name" },
            "isolated:create_entities[existing_name]",
          ],
        ],
      );
      assert.ok(create.calls.every((c) => c.observation.kind === "result"));
      // search_nodes is called with the definition's query, not a generated one.
      const search = report.tools.find((t) => t.name === "search_nodes")!;
      assert.deepEqual(search.calls.map((c) => c.arguments), [{
        query: "acme",
      }]);
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a target outside targets/ is prepared by its path, as the not-prepared message says, and then runs",
  sanitizeResources: false,
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "verity-launcher-test-" });
    try {
      // The definition lives in a directory of its own, under a name that
      // no targets/ or fixtures/ folder holds.
      const dir = join(tmp, "elsewhere", "my-memory");
      await Deno.mkdir(dir, { recursive: true });
      for (const f of ["seed.jsonl", "deno.lock"]) {
        await Deno.copyFile(join(REPO, "targets/memory", f), join(dir, f));
      }
      const toml = await Deno.readTextFile(
        join(REPO, "targets/memory/target.toml"),
      );
      await Deno.writeTextFile(
        join(dir, "target.toml"),
        toml.replace(/^name = "memory"$/m, 'name = "elsewhere-memory"'),
      );
      const cwd = join(tmp, "work");
      await Deno.mkdir(cwd);

      const before = await verity(["reality", dir], cwd);
      assert.equal(before.code, 2, before.stderr);
      const said = /run `verity prepare ([^`]+)`/.exec(before.stderr);
      assert.equal(said?.[1], dir, before.stderr);

      // Exactly the command the message gave.
      const prep = await verity(["prepare", said![1]!], cwd);
      assert.equal(prep.code, 0, prep.stderr);
      assert.match(
        prep.stdout,
        /^prepared elsewhere-memory: @modelcontextprotocol\/server-memory@2026\.8\.31/,
      );

      const r = await verity(["reality", dir, "--json"], cwd);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as RealityReport;
      assert.equal(report.server.definition?.name, "elsewhere-memory");
      const readGraph = report.tools.find((t) => t.name === "read_graph")!;
      assert.equal(readGraph.status, "passed");

      // Below the working directory, the message names the relative path.
      const nested = join(cwd, "defs", "mem2");
      await Deno.mkdir(nested, { recursive: true });
      for (const f of ["seed.jsonl", "deno.lock"]) {
        await Deno.copyFile(join(dir, f), join(nested, f));
      }
      await Deno.writeTextFile(
        join(nested, "target.toml"),
        toml.replace(/^name = "memory"$/m, 'name = "nested-memory"'),
      );
      const rel = await verity(["reality", "defs/mem2"], cwd);
      assert.equal(rel.code, 2);
      assert.match(rel.stderr, /run `verity prepare defs\/mem2`/);
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
