/**
 * The runner driven as Jepsen tests its harness: a fake launcher whose
 * "server" is an in-memory MCP client over an in-memory store, and fake
 * state observers (perfect, lossy, always unknown). What the runner records
 * is judged by the real verdict engine, so each test says what a user would
 * see for that observer.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import assert from "node:assert/strict";
import { parseDefinition } from "../definition/parse.ts";
import type { TestName } from "../definition/types.ts";
import { deriveVerdicts } from "../report/report.ts";
import type { Coverage } from "../state/coverage.ts";
import { snapshotDigest } from "../state/delta.ts";
import { compareKeys } from "../state/keys.ts";
import type { Region, Snapshot } from "../state/types.ts";
import type { Observation, StateObserver } from "../state_io/observer.ts";
import type { Launch } from "../sandbox/types.ts";
import type { McpClient, RpcOutcome } from "../wire/client.ts";
import type { Frame } from "../wire/frames.ts";
import { selectTools } from "./plan.ts";
import { runBattery, type SessionLauncher } from "./runner.ts";

/** A store per state directory: region → key → value. */
type Store = Map<string, Map<string, string>>;
const SEED: [string, [string, string][]][] = [
  ["items", [["a", "apple"], ["b", "banana"]]],
  ["log", []],
];

/** The tools, their hints and what each call does to the store. */
const TOOLS: {
  name: string;
  annotations: Record<string, boolean>;
  call: (s: Store) => void;
}[] = [
  { name: "read", annotations: { readOnlyHint: true }, call: () => {} },
  {
    // Declares read-only, appends to the log: seen only by who sees the log.
    name: "sneak",
    annotations: { readOnlyHint: true },
    call: (s) => s.get("log")!.set(String(s.get("log")!.size), "read"),
  },
  {
    name: "wipe",
    annotations: { readOnlyHint: false, destructiveHint: false },
    call: (s) => s.get("items")!.delete("a"),
  },
  {
    name: "put",
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    },
    call: (s) => s.get("items")!.set("c", "cherry"),
  },
];

const DEF = parseDefinition(
  `
[target]
name = "fake"
command = ["fake-server"]
[state]
locations = ["json:items.json", "json:log.json"]
[[adapters]]
kind = "json"
label = "items.json"
business = ["$"]
[[adapters]]
kind = "json"
label = "log.json"
append_only = ["$"]
${TOOLS.map((t) => `[[tools]]\nname = "${t.name}"\narguments = {}\n`).join("")}
`,
  "/fake/target.toml",
);

/** An MCP client answering from memory: what `openSession` and the runner need. */
class FakeClient implements McpClient {
  readonly frames: Frame[] = [];
  readonly problems: string[] = [];
  readonly failure = null;
  #id = 0;
  constructor(readonly store: Store) {}
  now(): number {
    return 0;
  }
  stderr(): { text: string; dropped: number } {
    return { text: "", dropped: 0 };
  }
  notify(): void {}
  #frame(dir: Frame["dir"], message: unknown): number {
    const text = JSON.stringify(message);
    this.frames.push({ dir, t: 0, text, bytes: text.length });
    return this.frames.length - 1;
  }
  request(method: string, params: unknown): Promise<RpcOutcome> {
    const id = ++this.#id;
    this.#frame("out", { jsonrpc: "2.0", id, method, params });
    let result: unknown = {};
    if (method === "initialize") {
      result = {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "fake", version: "1" },
      };
    } else if (method === "tools/list") {
      result = {
        tools: TOOLS.map((t) => ({
          name: t.name,
          inputSchema: { type: "object" },
          annotations: { ...t.annotations, openWorldHint: false },
        })),
      };
    } else if (method === "tools/call") {
      const name = (params as { name: string }).name;
      TOOLS.find((t) => t.name === name)!.call(this.store);
      result = { content: [{ type: "text", text: `${name}: done` }] };
    }
    const frameIndex = this.#frame("in", { jsonrpc: "2.0", id, result });
    return Promise.resolve({ status: "ok", result, frameIndex, ms: 1 });
  }
  abort(): void {}
  kill(): void {}
  close() {
    return Promise.resolve({
      code: 0,
      signal: null,
      stoppedBy: "stdin_close" as const,
    });
  }
}

/** The fake launcher: resets lay the seed in memory, servers are {@linkcode FakeClient}s. */
function fakeLauncher(world: Map<string, Store>, released: string[]) {
  const launch = (dirs: { state: string }): Launch => ({
    spawn: { command: ["fake-server", dirs.state], env: {} },
    backend: "none",
    auditLog: null,
    seesNetwork: false,
  });
  const launcher: SessionLauncher = {
    backend: "none",
    reset(dir) {
      world.set(dir, new Map(SEED.map(([g, rows]) => [g, new Map(rows)])));
      return Promise.resolve();
    },
    release(dir) {
      released.push(dir);
      return Promise.resolve();
    },
    placeholders: (state) => ({
      deno: "deno",
      python: "python3",
      state,
      target: "/fake",
      source: null,
    }),
    launch,
    start: (dirs) =>
      Promise.resolve({
        launch: launch(dirs),
        target: new FakeClient(world.get(dirs.state)!),
        url: null,
      }),
    startState: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return launcher;
}

/** A snapshot of the regions of a store this observer sees. */
function snapshotOf(store: Store, sees: readonly string[]): Snapshot {
  const regions: Region[] = sees.map((name) => ({
    adapter: `${name}.json`,
    kind: "json",
    name: "$",
    category: name === "log" ? "append_only" : "business",
    records: [...store.get(name)!].map(([k, v]) => ({
      key: JSON.stringify([k]),
      value: { v },
    })).sort((x, y) => compareKeys(x.key, y.key)),
  }));
  return { regions, problems: [] };
}

function coverageOf(sees: readonly string[]): Coverage {
  const locations = ["items", "log"].map((n) => ({
    location: `json:${n}.json`,
    observedBy: sees.includes(n) ? `json:${n}.json` : null,
  }));
  return { complete: locations.every((l) => l.observedBy), locations };
}

/**
 * An observer of the regions `sees` names, honest about the rest in its
 * coverage; `unknown` says why it cannot observe the resets and sessions
 * (`all`) or the sessions only.
 */
class FakeObserver implements StateObserver {
  readonly coverage: Coverage;
  readonly states = new Map<string, Snapshot>();
  readonly world = new Map<string, Store>();
  readonly released: string[] = [];
  seedDir: string | null = null;
  seedReleasedAtClose: boolean | null = null;
  constructor(
    readonly sees: readonly string[],
    readonly unknown: { why: string; of: "all" | "sessions" } | null = null,
  ) {
    this.coverage = coverageOf(sees);
  }
  #look(dir: string, session = true): string {
    if (this.unknown && (session || this.unknown.of === "all")) {
      throw new Error(this.unknown.why);
    }
    const snap = snapshotOf(this.world.get(dir)!, this.sees);
    const digest = snapshotDigest(snap);
    this.states.set(digest, snap);
    return digest;
  }
  seed(first: string, second: string) {
    this.seedDir = first;
    let digests;
    try {
      digests = [this.#look(first, false), this.#look(second, false)];
    } catch (e) {
      return Promise.reject(e);
    }
    const verified = digests[0] === digests[1];
    return Promise.resolve({
      verified,
      digests,
      problem: verified ? null : "differ",
      keepsFirst: true,
    });
  }
  observe(dir: string): Promise<Observation> {
    try {
      return Promise.resolve({
        digest: this.#look(dir),
        method: "snapshot",
        why: "a fake observes whole",
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }
  close(): Promise<void> {
    this.seedReleasedAtClose = this.released.includes(this.seedDir!);
    return Promise.resolve();
  }
}

async function battery(observer: FakeObserver) {
  const workDir = await Deno.makeTempDir({ prefix: "verity-runner-test-" });
  try {
    const history = await runBattery(DEF, selectTools(DEF.tools, []), {
      runs: 3,
      jobs: 2,
      concurrentAttempts: 0,
      observeConcurrent: false,
      launcher: fakeLauncher(observer.world, observer.released),
      observer,
      workDir,
      progress: null,
    });
    const verdicts = deriveVerdicts(
      history.definition,
      history.tools,
      history.snapshots,
    );
    const outcome = (tool: string, test: TestName) =>
      verdicts.find((v) => v.tool === tool && v.test === test)!;
    return { history, verdicts, outcome };
  } finally {
    await Deno.remove(workDir, { recursive: true });
  }
}

const STATE_TESTS: TestName[] = [
  "read_only",
  "destructive",
  "sequential_idempotence",
];

Deno.test("runner, perfect observer: every claim judged on what it saw", async () => {
  const observer = new FakeObserver(["items", "log"]);
  const { history, outcome } = await battery(observer);
  assertEquals(outcome("read", "read_only").outcome, "PASS");
  assertEquals(outcome("sneak", "read_only").outcome, "VIOLATION");
  assertEquals(outcome("wipe", "destructive").outcome, "VIOLATION");
  assertEquals(outcome("put", "destructive").outcome, "PASS");
  assertEquals(outcome("put", "sequential_idempotence").outcome, "PASS");
  // The history is the observer's: its coverage, its states, its methods.
  assertEquals(history.definition.coverage, observer.coverage);
  assertEquals(
    Object.keys(history.snapshots).sort(),
    [...observer.states.keys()].sort(),
  );
  assert.ok(history.definition.reset.verified);
  const observed = history.sessions.filter((s) => s.stateMethod);
  assertEquals(observed.length, history.sessions.length);
  for (const s of observed) {
    assertEquals(s.stateMethod, {
      method: "snapshot",
      why: "a fake observes whole",
    });
  }
  // The seed it keeps stays until it is closed, then goes.
  assertEquals(observer.seedReleasedAtClose, false);
  assert.ok(observer.released.includes(observer.seedDir!));
});

Deno.test("runner, lossy observer: no PASS on a claim it could not see", async () => {
  const observer = new FakeObserver(["items"]);
  const { verdicts, outcome } = await battery(observer);
  for (const v of verdicts.filter((v) => STATE_TESTS.includes(v.test))) {
    assert.notEqual(v.outcome, "PASS", `${v.tool} ${v.test}`);
  }
  // The log it cannot see: the sneaky write is unknown, never "holds".
  const sneak = outcome("sneak", "read_only");
  assertEquals(sneak.outcome, "INCONCLUSIVE:PARTIAL_COVERAGE");
  assertEquals(sneak.observed, "read_only=unknown");
  assert.ok(sneak.details.some((d) => d.includes("json:log.json")));
  // What it sees still fails.
  assertEquals(outcome("wipe", "destructive").outcome, "VIOLATION");
});

Deno.test("runner, always-unknown observer: every verdict INCONCLUSIVE with its why", async () => {
  const why = "the fake observer sees nothing";
  const observer = new FakeObserver(["items", "log"], { why, of: "all" });
  const { history, verdicts } = await battery(observer);
  assertEquals(history.definition.reset.verified, false);
  assertEquals(
    history.definition.reset.problem,
    `observing the resets failed: ${why}`,
  );
  assertEquals(Object.keys(history.snapshots), []);
  assertEquals(verdicts.length, TOOLS.length * 5);
  for (const v of verdicts) {
    assertEquals(v.kind, "INCONCLUSIVE", `${v.tool} ${v.test}`);
    assert.ok(
      v.details.some((d) => d.includes(why)),
      `${v.tool} ${v.test}: ${v.details.join(" | ")}`,
    );
  }
});

Deno.test("runner, observer unknown after the seed: no verdict passes, the why is named", async () => {
  const why = "the fake observer lost the session";
  const observer = new FakeObserver(["items", "log"], { why, of: "sessions" });
  const { history, verdicts } = await battery(observer);
  assert.ok(history.definition.reset.verified);
  // Sessions that could not be observed carry no state and no method.
  assert.ok(history.sessions.every((s) => s.stateMethod === undefined));
  assertEquals(verdicts.length, TOOLS.length * 5);
  for (const v of verdicts) {
    assertEquals(v.kind, "INCONCLUSIVE", `${v.tool} ${v.test}`);
    assert.ok(v.details.some((d) => d.includes(why)), v.details.join(" | "));
  }
});
