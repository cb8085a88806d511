/**
 * The tamper suite: kinds of edit a forger could make to a real published
 * audit report (results/memory-2026-11-30) and to its ledger, each checked
 * the way a reviewer checks them: the strict reader, re-derivation from
 * the raw evidence (`verity report verify`), and the binding to the ledger
 * head (`verity report verify --ledger L --expected-head H`).
 *
 * Every edit must be refused by the full check. Each is also tagged with
 * the layer that must catch it on its own: `rederive` edits must be caught
 * by re-derivation alone (no ledger), so that layer is tested too; `digest`
 * edits change only what no re-derivation can check (provenance, timings,
 * prose, a fully consistent forgery made with verity's own engine) and are
 * caught by the ledger binding alone (docs/evidence.md, threat model).
 *
 *   deno run --allow-read scripts/tamper.ts     # prints one line per edit and N/N refused
 *
 * tests/tamper_test.ts runs it in `deno task test`.
 *
 * @module
 */
import { parseEvidenceJson, sha256Hex } from "../lib/evidence/canonical.ts";
import { bindToLedger } from "../lib/evidence/binding.ts";
import {
  blockBody,
  chainBlocks,
  chainHash,
  GENESIS,
  ledgerText,
} from "../lib/evidence/chain.ts";
import { readEvidenceText } from "../lib/evidence/files.ts";
import { HINT_NAMES, parseToolPages } from "../lib/contracts/contracts.ts";
import { deriveVerdicts, type Report } from "../lib/report/report.ts";
import { verifyReport } from "../lib/report/verify.ts";
import { checkExpectations } from "../lib/report/expectations.ts";
import { reportClaims } from "../lib/report/claims.ts";
import type { Snapshot } from "../lib/state/types.ts";

/** Which layer must refuse an edit on its own. */
export type Layer = "reader" | "rederive" | "digest";

/** One kind of edit. */
export interface Tamper {
  name: string;
  /** The layer that must catch it alone. */
  layer: Layer;
  /** Edit the parsed report (a deep copy) ... */
  report?: (r: Report) => void;
  /** ... or the report's text ... */
  text?: (t: string) => string;
  /** ... or the ledger (text and head), given the forged report's digest. */
  ledger?: (
    l: { text: string; head: string },
    ctx: { genuineDigest: string; runId: string },
  ) => { text: string; head: string; report?: string };
}

/** What the checks said about one edit. */
export interface TamperResult {
  name: string;
  layer: Layer;
  reader: string | null;
  rederive: string[];
  binding: string[];
  refused: boolean;
  /** The tagged layer refused it on its own. */
  layerHeld: boolean;
}

const text1 = (r: unknown) => JSON.stringify(r, null, 1) + "\n";

type V = Report["verdicts"][number];
const verdict = (r: Report, f: (v: V) => boolean) => {
  const v = r.verdicts.find(f);
  if (!v) throw new Error("tamper: no such verdict in the report");
  return v;
};

function firstTool(r: Report) {
  return r.observations.tools[0]!;
}

/** Recompute every derived field with verity's own engine: a consistent forgery. */
function rederiveAll(r: Report): void {
  const listing = parseToolPages(r.protocol.toolsList);
  for (const t of r.observations.tools) {
    const c = listing.contracts.find((x) => x.name === t.tool);
    t.hints = Object.fromEntries(
      HINT_NAMES.map((h) => [
        h,
        c
          ? c.hints[h].toJSON()
          : { state: "ABSENT", detail: "tool not listed" },
      ]),
    ) as typeof t.hints;
  }
  r.verdicts = deriveVerdicts(
    r.observations.definition,
    r.observations.tools,
    r.snapshots,
    r.tests,
    r.provenance.engine,
  );
  r.expectations = checkExpectations(r.expected, r.verdicts);
}

/** The edits. */
export const TAMPERS: Tamper[] = [
  // Verdicts.
  {
    name: "a verdict's kind PASS -> VIOLATION",
    layer: "rederive",
    report: (r) =>
      void (verdict(r, (v) => v.kind === "PASS").kind = "VIOLATION"),
  },
  {
    name: "a verdict's kind NOT_APPLICABLE -> PASS (SARIF would drop it)",
    layer: "rederive",
    report: (r) =>
      void (verdict(r, (v) => v.kind === "NOT_APPLICABLE").kind = "PASS"),
  },
  {
    name: "a verdict's outcome and kind rewritten together",
    layer: "rederive",
    report: (r) => {
      const v = verdict(r, (v) => v.kind === "PASS");
      v.kind = "VIOLATION";
      v.outcome = "VIOLATION";
    },
  },
  {
    name: "a verdict's reason",
    layer: "rederive",
    report: (r) =>
      void (verdict(r, (v) => v.reason === "CALL_ERROR").reason =
        "NO_OVERLAP_OBSERVED"),
  },
  {
    name: "a verdict's overDeclared flag",
    layer: "rederive",
    report: (r) => {
      const v = verdict(r, (v) => v.overDeclared);
      v.overDeclared = false;
    },
  },
  {
    name: "a verdict's facts",
    layer: "rederive",
    report: (r) => {
      const v = verdict(r, (v) => v.kind === "PASS");
      v.facts = { ...v.facts, business_changed: !v.facts.business_changed };
    },
  },
  {
    name: "a verdict's evidence (a delta summary)",
    layer: "rederive",
    report: (r) => {
      const v = verdict(r, (v) => Object.keys(v.evidence).length > 0);
      v.evidence = {};
    },
  },
  {
    name: "a verdict dropped",
    layer: "rederive",
    report: (r) => void r.verdicts.splice(3, 1),
  },
  {
    name: "a verdict's declared state",
    layer: "rederive",
    report: (r) =>
      void (verdict(r, (v) => v.declared === "FALSE").declared = "TRUE"),
  },
  {
    name: "a verdict's details (prose)",
    layer: "digest",
    report: (r) =>
      void (verdict(r, (v) => v.kind === "PASS").details = ["looks fine"]),
  },
  // Declarations and raw frames.
  {
    name: "the raw tools/list frame edited to flip a hint",
    layer: "rederive",
    report: (r) => {
      const page = r.protocol.toolsList[0]!;
      const at = page.indexOf('"readOnlyHint":false');
      if (at < 0) throw new Error("tamper: no readOnlyHint false");
      r.protocol.toolsList[0] = page.slice(0, at) + '"readOnlyHint":true' +
        page.slice(at + '"readOnlyHint":false'.length);
    },
  },
  {
    name: "a tool's parsed hints edited",
    layer: "rederive",
    report: (r) =>
      void (firstTool(r).hints.idempotentHint = {
        state: "TRUE",
        detail: null,
      }),
  },
  {
    name: "the listing problems edited",
    layer: "rederive",
    report: (r) => void r.protocol.listingProblems.push("page 0: invented"),
  },
  {
    name: "the raw initialize frame edited (server version)",
    layer: "rederive",
    report: (r) =>
      void (r.protocol.initialize = r.protocol.initialize!.replace(
        '"version":"0.6.3"',
        '"version":"9.9.9"',
      )),
  },
  {
    name: "serverInfo edited",
    layer: "rederive",
    report: (r) =>
      void (r.protocol.serverInfo = { name: "trusted", version: "1" }),
  },
  {
    name: "the unexercised list edited",
    layer: "rederive",
    report: (r) => void r.unexercised.push("hidden_tool"),
  },
  // Calls and sessions.
  {
    name: "a raw call response frame edited (isError added)",
    layer: "rederive",
    report: (r) => {
      const s = r.sessions.find((s) => s.kind === "once")!;
      s.callResponses[0] = s.callResponses[0]!.replace(
        '"result":{',
        '"result":{"isError":true,',
      );
    },
  },
  {
    name: "a call's status edited",
    layer: "rederive",
    report: (r) => void (firstTool(r).once[0]!.calls[0]!.status = "tool_error"),
  },
  {
    name: "a failed call's message edited",
    layer: "rederive",
    report: (r) => {
      const c = r.observations.tools.flatMap((t) => t.once).flatMap((o) =>
        o.calls
      ).find((c) => c.status === "tool_error")!;
      c.message = "all good";
    },
  },
  {
    name: "a session record dropped",
    layer: "rederive",
    report: (r) =>
      void r.sessions.splice(r.sessions.findIndex((s) => s.kind === "once"), 1),
  },
  {
    name: "a concurrent attempt's stored (history version 1) overlap flipped",
    layer: "rederive",
    report: (r) => {
      const a = r.observations.tools.flatMap((t) => t.concurrent ?? []).find((
        a,
      ) => a.mode === "single_connection")!;
      a.overlap = !(a.overlap ?? false);
    },
  },
  {
    name: "a concurrent attempt's receive stamps swapped (its overlap flips)",
    layer: "rederive",
    report: (r) => {
      const a = r.observations.tools.flatMap((t) => t.concurrent ?? []).find((
        a,
      ) =>
        a.mode === "single_connection" &&
        a.timeline.some((e) => e.event === "receive call 2")
      )!;
      const r1 = a.timeline.find((e) => e.event === "receive call 1")!;
      const r2 = a.timeline.find((e) => e.event === "receive call 2")!;
      [r1.t, r2.t] = [r2.t, r1.t];
    },
  },
  {
    name: "a session's network evidence emptied",
    layer: "rederive",
    report: (r) => {
      const s = r.sessions.find((s) => s.kind === "once")!;
      s.sandbox = { ...s.sandbox!, network: null };
    },
  },
  // State.
  {
    name: "a snapshot's content edited",
    layer: "rederive",
    report: (r) => {
      // A report read from a file holds whole snapshots.
      const region = (Object.values(r.snapshots) as Snapshot[]).flatMap((s) =>
        s.regions
      ).find((g) => g.records.length > 0)!;
      region.records.pop();
    },
  },
  {
    name: "an observation's state digest pointed elsewhere",
    layer: "rederive",
    report: (r) =>
      void (firstTool(r).once[0]!.stateDigest = "sha256:" + "e".repeat(64)),
  },
  {
    name: "reset verification flipped",
    layer: "rederive",
    report: (r) => void (r.observations.definition.reset.verified = false),
  },
  {
    name: "startupWrites flipped",
    layer: "rederive",
    report: (r) =>
      void (r.observations.definition.startupWrites = !r.observations
        .definition.startupWrites),
  },
  // Claims about the run.
  {
    name: "the audit flag flipped",
    layer: "rederive",
    report: (r) => void (r.audit = !r.audit),
  },
  {
    name: "the sandbox backend claim edited",
    layer: "rederive",
    report: (r) => void (r.sandbox.backend = "bubblewrap"),
  },
  {
    name: "the run id edited",
    layer: "rederive",
    report: (r) => void (r.runId = r.runId.replace("memory", "memory-v2")),
  },
  {
    name: "the expected list rewritten (count unchanged)",
    layer: "rederive",
    report: (r) =>
      void r.expected.push({
        tool: "read_graph",
        variant: null,
        test: "read_only",
        verdict: "PASS",
        assertions: {},
      }),
  },
  {
    name:
      "the expected list rewritten together with its count and the audit flags",
    layer: "digest",
    report: (r) => {
      r.audit = false;
      r.provenance.options.audit = false;
      const v = r.verdicts[0]!;
      r.expected = [{
        tool: v.tool,
        variant: v.variant,
        test: v.test,
        verdict: v.outcome,
        assertions: {},
      }];
      r.expectations = checkExpectations(r.expected, r.verdicts);
    },
  },
  {
    name: "provenance: harness commit",
    layer: "digest",
    report: (r) => void (r.provenance.harness.commit = "0".repeat(40)),
  },
  {
    name: "provenance: definition digest",
    layer: "digest",
    report: (r) =>
      void (r.provenance.definition.digest = "sha256:" + "1".repeat(64)),
  },
  {
    name: "sandbox evidence: a session's command",
    layer: "digest",
    report: (r) => {
      const s = r.sessions.find((s) => s.kind === "once")!;
      s.command = s.command.filter((a) => a !== "--deny-net");
    },
  },
  {
    name: "the backend claim edited everywhere at once",
    layer: "digest",
    report: (r) => {
      r.sandbox.backend = "bubblewrap";
      r.provenance.options.backend = "bubblewrap";
    },
  },
  {
    name: "a timing",
    layer: "digest",
    report: (r) => void (r.sessions[0]!.wallMs += 1),
  },
  {
    name: "a fully consistent forgery re-derived with verity's own engine",
    layer: "digest",
    report: (r) => {
      const page = r.protocol.toolsList[0]!;
      r.protocol.toolsList[0] = page.replace(
        '"readOnlyHint":false',
        '"readOnlyHint":true',
      );
      rederiveAll(r);
    },
  },
  // Internal consistency (hardening, round three): a report that
  // contradicts its own evidence, with no ledger to compare against.
  {
    name: "a test dropped from tests[] with its verdicts",
    layer: "rederive",
    report: (r) => {
      r.tests = r.tests.filter((t) => t !== "read_only");
      r.verdicts = r.verdicts.filter((v) => v.test !== "read_only");
      r.expectations = checkExpectations(r.expected, r.verdicts);
    },
  },
  {
    name: "a tool moved to unexercised (observations and verdicts dropped)",
    layer: "rederive",
    report: (r) => {
      r.observations.tools = r.observations.tools.filter((t) =>
        t.tool !== "read_graph"
      );
      r.verdicts = r.verdicts.filter((v) => v.tool !== "read_graph");
      r.unexercised.push("read_graph");
      r.expectations = checkExpectations(r.expected, r.verdicts);
    },
  },
  {
    name:
      "a tool moved to unexercised with its session records (only the ledger can tell)",
    layer: "digest",
    report: (r) => {
      r.observations.tools = r.observations.tools.filter((t) =>
        t.tool !== "read_graph"
      );
      r.verdicts = r.verdicts.filter((v) => v.tool !== "read_graph");
      r.sessions = r.sessions.filter((s) => s.tool !== "read_graph");
      r.unexercised.push("read_graph");
      r.expectations = checkExpectations(r.expected, r.verdicts);
    },
  },
  {
    name: '"10 runs" beside the 3 present (options and definition together)',
    layer: "rederive",
    report: (r) => {
      r.observations.definition.runs = 10;
      r.provenance.options.runs = 10;
    },
  },
  {
    name: "a control session dropped with its session record",
    layer: "rederive",
    report: (r) => {
      r.observations.definition.control.pop();
      r.sessions = r.sessions.filter((s) =>
        !(s.kind === "control" && s.run === 3)
      );
    },
  },
  {
    name: "a tool's once run dropped with its session record",
    layer: "rederive",
    report: (r) => {
      const t = r.observations.tools.find((t) => t.tool === "search_nodes")!;
      t.once.pop();
      r.sessions = r.sessions.filter((s) =>
        !(s.kind === "once" && s.tool === "search_nodes" && s.run === 3)
      );
    },
  },
  {
    name:
      "a session's kept listing added (a flipped hint) without its declaration change",
    layer: "rederive",
    report: (r) => {
      const s = r.sessions.find((s) =>
        s.kind === "once" && s.tool === "read_graph"
      )!;
      (s as { toolsList?: string[] }).toolsList = r.protocol.toolsList.map((
        p,
      ) => p.replace('"readOnlyHint":true', '"readOnlyHint":false'));
    },
  },
  // The headline.
  {
    name: "a headline claiming every claim held (summary.claims)",
    layer: "rederive",
    report: (r) => {
      const c = reportClaims(r);
      r.summary = {
        claims: {
          ...c,
          held: c.tested,
          violated: 0,
          violationRate: 0,
          untested: [],
          falsifiable: c.tested,
        },
      };
    },
  },
  // The report's text.
  {
    name: "an extra top-level key",
    layer: "rederive",
    report: (r) => void ((r as unknown as Record<string, unknown>).note = "ok"),
  },
  {
    name: "a duplicated key in the report (audit false first, true last)",
    layer: "reader",
    text: (t) =>
      t.replace('\n "audit": true', '\n "audit": false,\n "audit": true'),
  },
  // The ledger.
  {
    name: "ledger: an extra top-level key",
    layer: "digest",
    ledger: (l) => ({
      text: l.text.replace(
        '{"ledger":',
        '{"signed_by":"maintainers","ledger":',
      ),
      head: l.head,
    }),
  },
  {
    name: "ledger: a duplicated blocks key (a forged chain first)",
    layer: "digest",
    ledger: (l, c) => {
      const forged = chainBlocks(GENESIS, 0, [{
        type: "report",
        record: { digest: "sha256:" + "f".repeat(64), run_id: c.runId },
      }]);
      return {
        text: l.text.replace(
          '"blocks":[',
          `"blocks":[${forged.lines[0]}],"blocks":[`,
        ),
        head: l.head,
      };
    },
  },
  {
    name: "ledger: a duplicated record key (a forged digest first)",
    layer: "digest",
    ledger: (l, c) => ({
      text: l.text.replace(
        `"digest":"${c.genuineDigest}"`,
        `"digest":"sha256:${"f".repeat(64)}","digest":"${c.genuineDigest}"`,
      ),
      head: l.head,
    }),
  },
  {
    name: "ledger: a forged report's digest written into its block",
    layer: "digest",
    ledger: (l, c) => {
      const forged = forgedReportText();
      return {
        text: l.text.replace(
          c.genuineDigest,
          `sha256:${sha256Hex(forged)}`,
        ),
        head: l.head,
        report: forged,
      };
    },
  },
  {
    name: "ledger: the chain replayed over a forged report",
    layer: "digest",
    ledger: (l) => {
      const forged = forgedReportText();
      const parsed = parseEvidenceJson(l.text, { numbers: "python" }) as {
        blocks: {
          index: number;
          prev_hash: string;
          type: string;
          record: Record<string, unknown>;
          hash: string;
        }[];
      };
      parsed.blocks[0]!.record.digest = `sha256:${sha256Hex(forged)}`;
      let prev = GENESIS;
      for (const b of parsed.blocks) {
        b.prev_hash = prev;
        b.hash = chainHash(prev, blockBody(b.type, b.record));
        prev = b.hash;
      }
      return {
        text: JSON.stringify({ ledger: "verity", version: "1", ...parsed }),
        head: l.head,
        report: forged,
      };
    },
  },
  {
    name: "ledger: the report's block dropped",
    layer: "digest",
    ledger: (l) => {
      const lines = l.text.split("\n").filter((x) => x.startsWith('{"index":'));
      return { text: ledgerText(lines.slice(1)), head: l.head };
    },
  },
];

let genuineText = "";
function forgedReportText(): string {
  const r = parseEvidenceJson(genuineText) as Report;
  TAMPERS.find((t) => t.name.startsWith("a fully consistent"))!.report!(r);
  return text1(r);
}

/** The genuine report, its ledger and head, read from results/. */
export async function loadGenuine(): Promise<
  { report: string; ledger: string; head: string }
> {
  const dir = new URL("../results/memory-2026-11-30/", import.meta.url)
    .pathname;
  let report: string;
  try {
    report = (await readEvidenceText(`${dir}report.json.gz`)).text;
  } catch {
    report = (await readEvidenceText(`${dir}report.json`)).text;
  }
  return {
    report,
    ledger: await Deno.readTextFile(`${dir}ledger.json`),
    head: (await Deno.readTextFile(`${dir}ledger.head`)).trim(),
  };
}

/** Check one report text against one ledger, as `report verify --ledger` does. */
export function check(
  reportText: string,
  ledger: string,
  head: string,
): Omit<TamperResult, "name" | "layer" | "layerHeld"> {
  let reader: string | null = null;
  let rederive: string[] = [];
  let runId: unknown = undefined;
  try {
    const value = parseEvidenceJson(reportText);
    runId = (value as { runId?: unknown }).runId;
    rederive = verifyReport(value).map((p) => `${p.where}: ${p.message}`);
  } catch (e) {
    reader = (e as Error).message;
  }
  let binding: string[];
  try {
    binding = bindToLedger(
      ledger,
      head,
      `sha256:${sha256Hex(reportText)}`,
      ["report"],
      runId === undefined ? {} : { run_id: runId },
    ).problems;
  } catch (e) {
    binding = [`ledger unreadable: ${(e as Error).message}`];
  }
  return {
    reader,
    rederive,
    binding,
    refused: reader !== null || rederive.length > 0 || binding.length > 0,
  };
}

/** Run every edit; the genuine report must pass first. */
export async function runTamperSuite(): Promise<
  { genuine: ReturnType<typeof check>; results: TamperResult[] }
> {
  const g = await loadGenuine();
  genuineText = g.report;
  const genuine = check(g.report, g.ledger, g.head);
  if (text1(parseEvidenceJson(g.report)) !== g.report) {
    throw new Error(
      "the genuine report does not read back to its own text: edits would be caught by the digest alone",
    );
  }
  const genuineDigest = `sha256:${sha256Hex(g.report)}`;
  const runId = (parseEvidenceJson(g.report) as Report).runId;
  const results: TamperResult[] = [];
  for (const t of TAMPERS) {
    let report = g.report;
    let ledger = g.ledger;
    let head = g.head;
    if (t.report) {
      const r = parseEvidenceJson(g.report) as Report;
      t.report(r);
      report = text1(r);
    }
    if (t.text) report = t.text(g.report);
    if (t.ledger) {
      const l = t.ledger({ text: g.ledger, head: g.head }, {
        genuineDigest,
        runId,
      });
      ledger = l.text;
      head = l.head;
      if (l.report !== undefined) report = l.report;
    }
    if (report === g.report && ledger === g.ledger) {
      throw new Error(`tamper "${t.name}" changed nothing`);
    }
    const c = check(report, ledger, head);
    const layerHeld = t.layer === "reader"
      ? c.reader !== null
      : t.layer === "rederive"
      ? c.rederive.length > 0
      : c.binding.length > 0;
    results.push({ name: t.name, layer: t.layer, ...c, layerHeld });
  }
  return { genuine, results };
}

if (import.meta.main) {
  const { genuine, results } = await runTamperSuite();
  console.log(
    `genuine report: ${
      genuine.refused
        ? `REFUSED (${
          [genuine.reader, ...genuine.rederive, ...genuine.binding].filter(
            Boolean,
          )[0]
        })`
        : "verified and bound"
    }`,
  );
  for (const r of results) {
    const why = r.reader ?? r.rederive[0] ?? r.binding[0] ?? "";
    console.log(
      `${r.refused ? "refused " : "ACCEPTED"} [${r.layer}${
        r.layerHeld ? "" : " layer did NOT catch it"
      }] ${r.name}: ${why.slice(0, 140)}`,
    );
  }
  const refused = results.filter((r) => r.refused).length;
  const rederived = results.filter((r) => r.rederive.length > 0 || r.reader)
    .length;
  console.log(
    `\ntamper suite: ${refused}/${results.length} refused (${rederived} by the strict reader or re-derivation alone, the rest only by the ledger binding)`,
  );
  Deno.exit(
    !genuine.refused && refused === results.length &&
      results.every((r) => r.layerHeld)
      ? 0
      : 1,
  );
}
