/**
 * The sandbox fixtures end to end through `verity run`: liar-openworld is a
 * VIOLATION of openWorldHint: false and honest-closedworld a PASS (deno
 * backend, from its permission evidence), and native-python matches every
 * expectation under bubblewrap. Each report records the backend and the exact
 * command of every session.
 */
import assert from "node:assert/strict";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

interface Verdict {
  tool: string;
  test: string;
  outcome: string;
}

interface Report {
  sandbox: { backend: string };
  verdicts: Verdict[];
  expectations: { matched: number; total: number };
  sessions: { backend: string; command: string[] }[];
}

/** Run `verity run <fixture> --json` and return its exit code and report. */
async function run(
  fixture: string,
  extra: string[] = [],
): Promise<{ code: number; report: Report; stderr: string }> {
  const runsDir = await Deno.makeTempDir({
    prefix: "verity-sandbox-fixtures-",
  });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        MAIN,
        "run",
        fixture,
        "--json",
        "--runs-dir",
        runsDir,
        ...extra,
      ],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.ok(
      stdout.trim().startsWith("{"),
      `no JSON report (exit ${out.code}): ${stderr.slice(-2000)}`,
    );
    return { code: out.code, report: JSON.parse(stdout) as Report, stderr };
  } finally {
    await Deno.remove(runsDir, { recursive: true }).catch(() => {});
  }
}

function outcome(r: Report, tool: string, test: string): string | undefined {
  return r.verdicts.find((v) => v.tool === tool && v.test === test)?.outcome;
}

Deno.test("liar-openworld: a loopback fetch or connect during the call is an open_world VIOLATION", async () => {
  const { code, report } = await run("fixtures/liar-openworld");
  assert.equal(report.sandbox.backend, "deno");
  assert.equal(outcome(report, "lookup_rate", "open_world"), "VIOLATION");
  assert.equal(outcome(report, "record_rate", "open_world"), "VIOLATION");
  assert.equal(outcome(report, "list_pairs", "open_world"), "PASS");
  assert.equal(report.expectations.matched, report.expectations.total);
  assert.equal(code, 0);
  for (const s of report.sessions) {
    assert.equal(s.backend, "deno");
    assert.ok(
      s.command.includes("--deny-net"),
      `exact command recorded: ${s.command.join(" ")}`,
    );
  }
});

Deno.test("honest-closedworld: no network attempt, so openWorldHint: false is a PASS", async () => {
  const { code, report } = await run("fixtures/honest-closedworld", [
    "--concurrent-attempts",
    "3",
  ]);
  assert.equal(outcome(report, "get_rate", "open_world"), "PASS");
  assert.equal(outcome(report, "set_rate", "open_world"), "PASS");
  assert.equal(
    outcome(report, "search_rates", "open_world"),
    "NOT_APPLICABLE:PERMISSIVE_DECLARATION",
  );
  assert.equal(report.expectations.matched, report.expectations.total);
  assert.equal(code, 0);
});

Deno.test("native-python: every expectation matched under bubblewrap", async () => {
  const { code, report, stderr } = await run("fixtures/native-python", [
    "--concurrent-attempts",
    "3",
  ]);
  assert.equal(report.sandbox.backend, "bubblewrap");
  assert.equal(report.expectations.total, 25);
  assert.equal(report.expectations.matched, 25, stderr.slice(-2000));
  assert.equal(
    outcome(report, "get_item", "open_world"),
    "INCONCLUSIVE:NO_NETWORK_OBSERVATION",
  );
  assert.equal(code, 0);
  for (const s of report.sessions) {
    assert.equal(s.backend, "bubblewrap");
    assert.ok(
      s.command.includes("--unshare-net"),
      `exact command recorded: ${s.command.join(" ")}`,
    );
  }
});
