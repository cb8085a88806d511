/**
 * A real published server nobody here wrote, over both transports:
 * `@modelcontextprotocol/server-everything` started in its Streamable HTTP
 * mode (sandboxed, listening on a loopback port verity picked) must get the
 * same verdicts as over stdio, tool by tool and test by test, and its HTTP
 * sessions must keep their exchanges as evidence.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = join(ROOT, "main.ts");
const dec = new TextDecoder();

interface Verdict {
  tool: string;
  test: string;
  outcome: string;
  reason: string | null;
  observed: string;
}

async function audit(def: string): Promise<Record<string, unknown>> {
  const runsDir = Deno.makeTempDirSync({ prefix: "verity-everything-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        MAIN,
        "run",
        join(ROOT, "tests/data/http", def),
        "--audit",
        "--json",
        "--jobs",
        "2",
        "--runs-dir",
        runsDir,
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stdout = dec.decode(out.stdout);
    assert.ok(
      stdout.trim().startsWith("{"),
      `${def}: no report: ${dec.decode(out.stderr).slice(-800)}`,
    );
    return JSON.parse(stdout);
  } finally {
    Deno.removeSync(runsDir, { recursive: true });
  }
}

function verdicts(report: Record<string, unknown>): string[] {
  return (report.verdicts as Verdict[]).map((v) =>
    `${v.tool} ${v.test}: ${v.outcome}${
      v.reason ? `:${v.reason}` : ""
    } (${v.observed})`
  ).sort();
}

Deno.test("server-everything: the same verdicts over Streamable HTTP as over stdio", async () => {
  const [stdio, http] = await Promise.all([
    audit("everything-stdio"),
    audit("everything-http"),
  ]);
  const a = verdicts(stdio);
  const b = verdicts(http);
  assert.equal(a.length, 20, "4 tools x 5 tests");
  assert.deepEqual(b, a);
  // Every session of the HTTP audit opened, and kept its exchanges.
  const sessions = http.sessions as {
    kind: string;
    http?: { exchanges: { purpose: string; status: number | null }[] };
  }[];
  assert.ok(sessions.length > 0);
  for (const s of sessions) {
    const ex = s.http?.exchanges ?? [];
    assert.ok(
      ex.some((e) => e.purpose === "initialize" && e.status === 200),
      `${s.kind}: no initialize exchange`,
    );
  }
  const controls = (http.definition as { control: { setupFailure: unknown }[] })
    ?.control;
  if (controls) {
    for (const c of controls) assert.equal(c.setupFailure, null);
  }
});
