/**
 * `verity run` keeping sessions as patches against the seed
 * (lib/state/patched.ts): a session that cannot be kept as a patch (here: it
 * creates a table) falls back to a whole snapshot, saying why; a session that
 * renames a row is kept as a patch applied to the seed's snapshot; the report
 * stores the seed by reference and still re-derives (`report verify
 * --definition`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fixtureRoot } from "../scripts/_bench_shared.ts";
import { runVerity } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function verity(args: string[]): Promise<{ code: number; out: string }> {
  const r = await runVerity(args);
  return { code: r.code, out: r.stdout + r.stderr };
}

type Session = {
  kind: string;
  stateMethod?: { method: string; why: string | null };
};

Deno.test("a session that cannot be kept as a patch: the seed is taken whole, the rest kept as patches applied to it, the report verifies", async () => {
  const root = await fixtureRoot(ROOT, "verity-patched-");
  try {
    const fx = join(root, "fx");
    await Deno.mkdir(fx);
    await Deno.writeTextFile(
      join(fx, "seed.sql"),
      "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" +
        "INSERT INTO items VALUES (1, 'bolt'), (2, 'nut');\n",
    );
    // The first call of a run adds a table (no patch can say so); a later
    // call renames an item (a patch could, but the seed is whole by then).
    await Deno.writeTextFile(
      join(fx, "server.ts"),
      `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { stateDb, text } from "../_shared/fixture_state.ts";

const server = new McpServer({ name: "reshape", version: "1.0.0" });
server.registerTool("add_note", {
  description: "Add a notes table.",
  inputSchema: { note: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
}, ({ note }: { note: string }) => {
  stateDb().exec("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, note TEXT)");
  return text(note);
});
server.registerTool("rename_item", {
  description: "Rename an item.",
  inputSchema: { id: z.number().int(), name: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
}, ({ id, name }: { id: number; name: string }) => {
  stateDb().prepare("UPDATE items SET name = ? WHERE id = ?").run(name, id);
  return text("ok");
});
await server.connect(new StdioServerTransport());
`,
    );
    await Deno.writeTextFile(
      join(fx, "fixture.toml"),
      `[fixture]
name = "reshape"
command = ["{deno}", "run", "server.ts"]

[state]
locations = ["sqlite:state.db"]

[[adapters]]
kind = "sqlite"
label = "state.db"
seed = "seed.sql"
business = ["items"]

[[tools]]
name = "add_note"
arguments = { note = "x" }

[[tools]]
name = "rename_item"
arguments = { id = 1, name = "hex bolt" }
`,
    );
    const runs = join(root, "runs");
    const run = await verity([
      "run",
      fx,
      "--jobs",
      "1",
      "--concurrent-attempts",
      "1",
      "--runs-dir",
      runs,
      "--quiet",
    ]);
    assert.equal(run.code, 0, run.out);
    const dir = [...Deno.readDirSync(runs)].find((e) => e.isDirectory)!;
    const path = join(runs, dir.name, "report.json");
    const report = JSON.parse(await Deno.readTextFile(path));
    assert.equal(report.schema, "verity.report/3");
    const methods = (report.sessions as Session[]).map((s) => s.stateMethod)
      .filter((m) => m !== undefined);
    // The table created: snapshotted whole, saying why.
    assert.ok(
      methods.some((m) =>
        m!.method === "snapshot" &&
        /not kept as a patch: a table was created, dropped or reshaped/.test(
          m!.why ?? "",
        )
      ),
      JSON.stringify(methods),
    );
    // A rename is kept as a patch against the seed. Three methods only:
    // seed, patched, snapshot.
    assert.ok(
      methods.some((m) => m!.method === "patched"),
      JSON.stringify(methods),
    );
    assert.ok(
      methods.every((m) => ["seed", "patched", "snapshot"].includes(m!.method)),
      JSON.stringify(methods),
    );
    // Every stored state is a patch against the seed kept by reference.
    for (const [d, s] of Object.entries(report.snapshots)) {
      const o = s as Record<string, unknown>;
      assert.ok(o.seedRef !== undefined || o.base !== undefined, d);
    }
    const v = await verity(["report", "verify", path, "--definition", fx]);
    assert.equal(v.code, 0, v.out);
    assert.match(v.out, /report verified/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
