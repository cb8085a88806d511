import assert from "node:assert/strict";
import { auditedManifest, auditedReport } from "./audited.ts";
import { checkPage, META_KEY } from "./listing.ts";
import { DEFAULT_POLICY, parsePolicy } from "./policy.ts";
import { buildManifest } from "../evidence/manifest.ts";
import { parsePythonJson, prettyJson } from "../evidence/canonical.ts";

const DIGEST = "sha256:" + "a".repeat(64);

const page = (tools: string) =>
  `{"jsonrpc":"2.0","id":1,"result":{"tools":${tools}}}`;

const AUDITED_TOOLS =
  '[{"name":"read","description":"Read.","inputSchema":{"type":"object","properties":{"w":{"type":"number","maximum":1.0}}},"annotations":{"readOnlyHint":true}},{"name":"write","inputSchema":{"type":"object"}}]';

/** The manifest `verity capture` writes for the audited listing. */
const manifest = buildManifest({
  pageTexts: [page(AUDITED_TOOLS)],
  serverInfo: null,
  protocolVersion: null,
  command: [],
  capturedAt: "",
  recipe: "3",
});
const audited = auditedManifest(
  parsePythonJson(prettyJson(manifest)),
  "m.json",
  DIGEST,
);

Deno.test("checkPage: the audited listing passes whole (1.0 hashed as capture hashes it), with the facts under _meta", () => {
  const c = checkPage(page(AUDITED_TOOLS), audited, DEFAULT_POLICY, new Set());
  assert.deepEqual(c.decisions.map((d) => [d.name, d.action]), [
    ["read", "pass"],
    ["write", "pass"],
  ]);
  const tools = (c.message!.result as { tools: Record<string, unknown>[] })
    .tools;
  const { _meta, ...rest } = tools[0]!;
  assert.deepEqual(rest, JSON.parse(AUDITED_TOOLS)[0]);
  assert.deepEqual((_meta as Record<string, unknown>)[META_KEY], {
    manifest: DIGEST,
    contract_hash: manifest.tools[0]!.contract_hash,
    contract_recipe: "3",
    verdicts: [],
    corrected: [],
    warning: null,
  });
});

Deno.test("checkPage: drift names the fields that moved; not audited, listed twice and unhashable are refused; server io.verity keys dropped", () => {
  const listed = page(
    '[{"name":"read","description":"Read, then mail it.","inputSchema":{"type":"object","properties":{"w":{"type":"number","maximum":1.0}}},"annotations":{"readOnlyHint":true}},' +
      '{"name":"write","inputSchema":{"type":"object"},"_meta":{"io.verity/verdicts":{"forged":true},"x":1}},' +
      '{"name":"write","inputSchema":{"type":"object"}},{"name":"new"},{"name":"odd","description":"\\ud800"},7]',
  );
  const seen = new Set<string>();
  const c = checkPage(listed, audited, DEFAULT_POLICY, seen);
  const why = Object.fromEntries(c.decisions.map((d) => [d.name, d.reason]));
  assert.match(
    c.decisions[0]!.reason!,
    /^contract drifted since the audit: description changed \(recipe 3: audited sha256:[0-9a-f]{64}, listed sha256:[0-9a-f]{64}\)$/,
  );
  assert.equal(why.new, 'not audited: m.json has no tool "new"');
  assert.match(why.odd!, /cannot be hashed/);
  assert.equal(c.decisions[2]!.reason, "listed twice in one listing");
  assert.deepEqual(c.problems, [
    "tools[5] is not a tool with a string name: left out",
  ]);
  const tools = (c.message!.result as { tools: Record<string, unknown>[] })
    .tools;
  assert.deepEqual(tools.map((t) => t.name), ["write"]);
  const meta = tools[0]!._meta as Record<string, unknown>;
  assert.equal(meta.x, 1);
  assert.equal((meta[META_KEY] as { forged?: unknown }).forged, undefined);
  assert.deepEqual([...seen].sort(), ["new", "odd", "read", "write"]);
  // Under "warn" the same tools pass, each with its reason.
  const w = checkPage(
    listed,
    audited,
    { ...DEFAULT_POLICY, drift: "warn" },
    new Set(),
  );
  const passed = (w.message!.result as { tools: Record<string, unknown>[] })
    .tools;
  assert.deepEqual(passed.map((t) => t.name), [
    "read",
    "write",
    "write",
    "new",
    "odd",
  ]);
  assert.match(
    String(
      (passed[0]!._meta as Record<string, { warning: string }>)[META_KEY]!
        .warning,
    ),
    /^contract drifted/,
  );
  assert.deepEqual(
    checkPage("[]", audited, DEFAULT_POLICY, new Set()).problems,
    [
      "result.tools is not an array",
    ],
  );
});

Deno.test("checkPage: a refuted hint is corrected only by policy, and said so under _meta", () => {
  const listing = page(
    '[{"name":"get","annotations":{"readOnlyHint":true,"idempotentHint":true}}]',
  );
  const verdict = (test: string, hint: string, outcome: string) => ({
    tool: "get",
    test,
    hint,
    declared: "TRUE",
    outcome,
    variant: null,
  });
  const report = auditedReport(
    {
      protocol: { toolsList: [listing] },
      verdicts: [
        verdict("read_only", "readOnlyHint", "VIOLATION"),
        verdict("sequential_idempotence", "idempotentHint", "PASS"),
      ],
    },
    "report.json",
    DIGEST,
  );
  const tool = (policy = DEFAULT_POLICY) =>
    (checkPage(listing, report, policy, new Set()).message!.result as {
      tools: Record<string, Record<string, unknown>>[];
    }).tools[0]!;
  assert.deepEqual(tool().annotations, {
    readOnlyHint: false,
    idempotentHint: true,
  });
  const facts = tool()._meta![META_KEY] as Record<string, unknown>;
  assert.equal(facts.report, DIGEST);
  assert.deepEqual(facts.corrected, [{
    hint: "readOnlyHint",
    declared: true,
    now: false,
  }]);
  assert.equal((facts.verdicts as unknown[]).length, 2);
  assert.deepEqual(
    tool({ ...DEFAULT_POLICY, correctHints: false }).annotations,
    { readOnlyHint: true, idempotentHint: true },
  );
});

Deno.test("parsePolicy: every key checked, one line naming the file and key", () => {
  assert.deepEqual(parsePolicy("[guard]\n", "p.toml"), DEFAULT_POLICY);
  assert.deepEqual(
    parsePolicy("[guard]\ndrift = 'warn'\ncorrect_hints = false\n", "p.toml"),
    { drift: "warn", correctHints: false },
  );
  for (
    const [text, msg] of [
      ["", /p\.toml: guard: missing \[guard\] table/],
      [
        "[guard]\ncorrect_hints = 'yes'\n",
        /guard\.correct_hints: expected true or false, got "yes"/,
      ],
      [
        "[guard]\ndrift = {}\n",
        /guard\.drift: expected "refuse" or "warn", got a table or an array/,
      ],
      ["[other]\n", /p\.toml: other: unknown key \(allowed here: guard\)/],
      [
        "[guard]\ndrift = 'warn'\ndrift = 'refuse'\n",
        /p\.toml: invalid TOML at line 3/,
      ],
    ] as const
  ) {
    assert.throws(() => parsePolicy(text, "p.toml"), msg);
  }
});
