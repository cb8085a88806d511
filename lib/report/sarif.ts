/**
 * SARIF 2.1.0 rendering of a report, for GitHub code scanning and other
 * SARIF viewers. Pure: the caller supplies the repository root and the
 * definition's line numbers (see {@linkcode definitionToolLines}).
 *
 * One run; `tool.driver` is verity with one rule per test (tagged
 * `security`, with a `security-severity`), `untested`, `setup` and, in
 * fixture runs, `expectation`. One result per VIOLATION (level `error`,
 * its test's rule), per untested claim (level `note`, rule `untested`:
 * an INCONCLUSIVE verdict or a claim of a tool never exercised) and, in
 * fixture runs, per expectation that did not match (level `error`).
 * Every result points at the definition file, relative to `%SRCROOT%`
 * (the tool's `[[tools]]` entry), and names the tool as a logical
 * location.
 *
 * @module
 */
import {
  overDeclarationText,
  reportOverDeclarations,
  scopedAdvice,
  toolLevel,
} from "./over_declarations.ts";
import { allowanceLine, type Report } from "./report.ts";
import type { Verdict } from "../verdicts/types.ts";
import type { TestName } from "../definition/types.ts";
import {
  type ExpectationResult,
  expectationsByKey,
  verdictKey,
} from "./expectations.ts";
import { toolLabel } from "./_markup.ts";
import { claimsLine, NOT_EXERCISED, reportClaims } from "./claims.ts";
import { exclusionText } from "../state/exclude.ts";
import { terminalJson } from "../common/show_controls.ts";
import {
  controlEffectText,
  definitionGitText,
  erroredSummary,
  NOT_RECORDED,
  stateEffectsOf,
} from "./_provenance_text.ts";

/** The SARIF schema URI written into `$schema`. */
export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

/** The `partialFingerprints` key verity writes (stable across runs). */
export const SARIF_FINGERPRINT = "verityVerdict/v1";

/** Options for {@linkcode renderSarif}. */
export interface SarifOptions {
  /**
   * Absolute directory (the repository root) that the definition file's URI
   * is made relative to, with `uriBaseId` `%SRCROOT%`. A file outside it,
   * or no root, gives an absolute `file://` URI.
   * @default {null}
   */
  root?: string | null;
  /**
   * Line of each tool's `[[tools]]` entry in the definition file, keyed by
   * `name` and `name[variant]`; a tool not found points at line 1.
   * @default {{}}
   */
  toolLines?: Readonly<Record<string, number>>;
  /**
   * Absolute URL of verity's `docs/` directory (ending in `/`): each rule's
   * `helpUri` is its section of `methodology.md` there. None: no `helpUri`.
   * @default {null}
   */
  docsUrl?: string | null;
}

interface RuleText {
  name: string;
  short: string;
  full: string;
  hint: string | null;
  /** GitHub's `security-severity` of a VIOLATION (7 and up: high), or null. */
  severity: string | null;
  /** The section of docs/methodology.md (or another page) that explains it. */
  help: string;
}

/** The rules, in the order `tool.driver.rules` lists them. */
const RULES: Record<
  TestName | "untested" | "expectation" | "setup",
  RuleText
> = {
  read_only: {
    name: "ReadOnlyHintHolds",
    short: "readOnlyHint: true holds on observed state",
    full:
      "A tool that declares readOnlyHint: true must not change any observed state (business, append-only or unclassified) between a control session and a session with one call, in any of the independent runs.",
    hint: "readOnlyHint",
    severity: "8.0",
    help: "methodology.md#read_only",
  },
  destructive: {
    name: "DestructiveHintHolds",
    short: "destructiveHint: false holds on observed state",
    full:
      "A tool that declares destructiveHint: false must not remove or overwrite a pre-existing business or append-only record (control session vs one call).",
    hint: "destructiveHint",
    severity: "8.0",
    help: "methodology.md#destructive",
  },
  sequential_idempotence: {
    name: "IdempotentHintHoldsSequentially",
    short: "idempotentHint: true holds for a repeated call",
    full:
      "A tool that declares idempotentHint: true, called twice with the same arguments, must leave business state as one call left it, reproduced in every run from a clean reset.",
    hint: "idempotentHint",
    severity: "5.0",
    help: "methodology.md#sequential_idempotence",
  },
  concurrent_idempotence: {
    name: "IdempotentHintHoldsConcurrently",
    short: "idempotentHint: true holds for two concurrent calls",
    full:
      "A tool that declares idempotentHint: true, called twice at the same time (on one connection, or through two server processes sharing the store), must leave business state as one call left it, in every attempt.",
    hint: "idempotentHint",
    severity: "5.0",
    help: "methodology.md#concurrent_idempotence",
  },
  open_world: {
    name: "OpenWorldHintHolds",
    short: "openWorldHint: false holds (no network access)",
    full:
      "A tool that declares openWorldHint: false must not attempt network access during a call; the sandbox's permission log is the evidence.",
    hint: "openWorldHint",
    severity: "7.0",
    help: "methodology.md#open_world",
  },
  untested: {
    name: "ClaimTested",
    short: "a falsifiable claim could be tested",
    full:
      "A claim (readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false) that no test could confirm or contradict: the verdict is INCONCLUSIVE (the call errored, coverage is partial, no overlap was observed, ...), or the definition never calls the tool. Nothing was judged; the result's properties.reason says why.",
    hint: null,
    severity: null,
    help: "methodology.md#the-headline-claims",
  },
  expectation: {
    name: "FixtureExpectationMatched",
    short: "the fixture's recorded ground truth matched",
    full:
      "A fixture records the verdict each (tool, test) must get. A verdict that differs, a failed observed assertion, or a missing verdict is a failure of the harness or of the fixture.",
    hint: null,
    severity: null,
    help: "fixtures.md",
  },
  setup: {
    name: "ServerCouldBeAudited",
    short: "the server started and answered in its sessions",
    full:
      "A server that never starts, initializes or lists its tools, or that dies in every session, cannot be audited: every verdict is INCONCLUSIVE:SETUP_FAILED and the run fails, whatever its flags.",
    hint: null,
    severity: null,
    help: "methodology.md#a-server-that-cannot-be-audited",
  },
};

type RuleId = keyof typeof RULES;

function ruleHelp(id: RuleId): string {
  const r = RULES[id];
  if (id === "setup") {
    return `${r.full}\n\nThe result's message carries the cause: the exit status or signal and the meaningful tail of the server's stderr. See docs/methodology.md.`;
  }
  if (id === "expectation") {
    return `${r.full}\n\nThe result names the expected and the actual verdict and every failed assertion. See docs/fixtures.md.`;
  }
  if (id === "untested") {
    return `${r.full}\n\nFor example PARTIAL_COVERAGE, NONDETERMINISTIC, CALL_ERROR, NO_OVERLAP_OBSERVED, TIMED_OUT, NOT_EXERCISED. \`verity run --audit --fail-on-untested\` fails on these. See docs/methodology.md ("The headline: claims").`;
  }
  return `${r.full}\n\nA result is a VIOLATION: behaviour contradicting the explicit declaration, with its evidence (deltas per run, attempts, permission checks) in the verity report. A claim that could not be tested is a result of rule untested; PASS and NOT_APPLICABLE verdicts produce no result. Re-check any verdict with \`verity report verify <report.json>\`. See docs/methodology.md.`;
}

function declaredPhrase(v: Verdict): string {
  switch (v.declared) {
    case "TRUE":
      return `declares ${v.hint}: true`;
    case "FALSE":
      return `declares ${v.hint}: false`;
    case "ABSENT":
      return `does not declare ${v.hint}`;
    case "MALFORMED":
      return `declares a malformed ${v.hint}`;
  }
}

function sentence(s: string): string {
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

function verdictMessage(v: Verdict): string {
  const why = v.details[0];
  const lead = `Tool ${JSON.stringify(toolLabel(v))}: ${v.test} ${v.outcome}.`;
  return `${lead} It ${declaredPhrase(v)}${
    v.kind === "VIOLATION" ? ", but" : ";"
  } observed ${v.observed}${why ? `: ${sentence(why)}` : "."}`;
}

function expectationMessage(e: ExpectationResult): string {
  const lead = `Tool ${
    JSON.stringify(toolLabel(e))
  }: ${e.test} expected ${e.verdict}, got ${e.actual ?? "no verdict"}.`;
  return e.mismatches.length ? `${lead} ${e.mismatches.join("; ")}.` : lead;
}

function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/** A directory with exactly one trailing slash. */
function asDirectory(p: string): string {
  return p.replace(/\/+$/, "") + "/";
}

/**
 * The definition file's path relative to `%SRCROOT%`: under the root as it
 * is; a file from elsewhere (a report made on another machine) from its
 * last `fixtures/` or `targets/` folder, else its name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   definitionPath("/ci/work/targets/fs/target.toml", "/repo"),
 *   "targets/fs/target.toml",
 * );
 * ```
 */
export function definitionPath(file: string, root: string | null): string {
  if (!file.startsWith("/")) return file.replace(/^(\.\/)+/, "");
  if (root !== null && file.startsWith(asDirectory(root))) {
    return file.slice(asDirectory(root).length);
  }
  const m = /^.*\/((?:fixtures|targets)\/[^/]+\/[^/]+)$/.exec(file);
  return m ? m[1]! : file.slice(file.lastIndexOf("/") + 1);
}

/**
 * A git remote as an absolute URI (what SARIF's `repositoryUri` must be):
 * an scp-like `git@host:owner/repo.git` becomes `ssh://git@host/owner/repo.git`,
 * a local path a `file://` URI; null when it is neither nor a URI.
 */
export function repositoryUri(raw: string): string | null {
  let uri = raw.startsWith("/") ? `file://${encodePath(raw)}` : raw;
  const scp = /^([^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(raw);
  if (scp && (scp[1] !== undefined || scp[2]!.includes("."))) {
    uri = `ssh://${scp[1] ?? ""}${scp[2]}/${scp[3]!.replace(/^\/+/, "")}`;
  }
  return /^[a-z][a-z0-9+.-]*:/i.test(uri) && URL.canParse(uri)
    ? new URL(uri).href
    : null;
}

/**
 * Line of each tool's `[[tools]]` entry in a definition file's text, keyed
 * by `name` and `name[variant]` (the first entry wins for a bare name).
 * Reads lines only; strings it cannot decode are skipped.
 *
 * @example
 * ```ts
 * definitionToolLines('[[tools]]\nname = "get_item"\n'); // { get_item: 1 }
 * ```
 */
export function definitionToolLines(toml: string): Record<string, number> {
  const out: Record<string, number> = {};
  const lines = toml.split(/\r?\n/);
  const blocks: { line: number; name?: string; variant?: string }[] = [];
  let current: { line: number; name?: string; variant?: string } | null = null;
  const str = (raw: string): string | undefined => {
    const m = /^\s*("(?:[^"\\]|\\.)*"|'[^']*')/.exec(raw);
    if (!m) return undefined;
    const q = m[1]!;
    if (q.startsWith("'")) return q.slice(1, -1);
    try {
      return JSON.parse(q) as string;
    } catch {
      return undefined;
    }
  };
  lines.forEach((text, i) => {
    if (/^\s*\[\[\s*tools\s*\]\]/.test(text)) {
      current = { line: i + 1 };
      blocks.push(current);
      return;
    }
    if (/^\s*\[/.test(text)) {
      // Any other table ends the tool's own keys (sub-tables such as
      // [tools.expected.x] carry no name).
      current = /^\s*\[\s*tools\./.test(text) ? current : null;
      return;
    }
    if (current === null) return;
    const kv = /^\s*(name|variant)\s*=(.*)$/.exec(text);
    if (!kv) return;
    const value = str(kv[2]!);
    if (value === undefined) return;
    const block: { line: number; name?: string; variant?: string } = current;
    if (kv[1] === "name" && block.name === undefined) block.name = value;
    if (kv[1] === "variant" && block.variant === undefined) {
      block.variant = value;
    }
  });
  for (const b of blocks) {
    if (b.name === undefined) continue;
    if (b.variant !== undefined) {
      out[`${b.name}[${b.variant}]`] ??= b.line;
    }
    out[b.name] ??= b.line;
  }
  return out;
}

/**
 * Render a report as a SARIF 2.1.0 log (JSON text, ending in a newline).
 *
 * @example
 * ```ts
 * import type { Report } from "./report.ts";
 *
 * function violations(report: Report): unknown[] {
 *   const sarif = JSON.parse(renderSarif(report, { root: "/repo" }));
 *   return sarif.runs[0].results.filter(
 *     (r: { level: string }) => r.level === "error",
 *   );
 * }
 * ```
 */
export function renderSarif(
  report: Report,
  options: SarifOptions = {},
): string {
  const root = options.root ?? null;
  const lines = options.toolLines ?? {};
  const def = report.provenance.definition;
  const ruleIds = (Object.keys(RULES) as RuleId[]).filter((id) =>
    id !== "expectation" || !report.audit
  );
  const ruleIndex = new Map<string, number>(ruleIds.map((id, i) => [id, i]));
  const docs = options.docsUrl ? options.docsUrl.replace(/\/?$/, "/") : null;
  const rules = ruleIds.map((id) => {
    const r = RULES[id];
    return {
      id,
      name: r.name,
      shortDescription: { text: r.short },
      fullDescription: { text: r.full },
      ...(docs ? { helpUri: new URL(r.help, docs).href } : {}),
      help: { text: ruleHelp(id), markdown: ruleHelp(id) },
      defaultConfiguration: { level: id === "untested" ? "note" : "error" },
      properties: {
        tags: [
          "mcp",
          "tool-annotations",
          ...(r.hint ? [r.hint] : []),
          ...(r.severity ? ["security"] : []),
        ],
        precision: "very-high",
        ...(r.severity ? { "security-severity": r.severity } : {}),
      },
    };
  });
  const artifactLocation = {
    uri: encodePath(definitionPath(def.file, root)),
    uriBaseId: "%SRCROOT%",
  };
  const location = (t: { tool: string; variant: string | null }) => {
    const label = toolLabel(t);
    return {
      physicalLocation: {
        artifactLocation,
        region: { startLine: lines[label] ?? lines[t.tool] ?? 1 },
      },
      logicalLocations: [{
        name: label,
        fullyQualifiedName: `${def.name}/${label}`,
        kind: "function",
      }],
    };
  };
  const expectationOf = expectationsByKey(report);
  const results: Record<string, unknown>[] = [];
  const setup = report.setupFailure ?? null;
  const claims = reportClaims(report);
  if (setup !== null) {
    // First: the server could not be audited at all.
    results.push({
      ruleId: "setup",
      ruleIndex: ruleIndex.get("setup") ?? 0,
      level: "error",
      message: { text: `${def.name} could not be audited: ${setup}` },
      locations: [{
        physicalLocation: {
          artifactLocation,
          region: { startLine: 1 },
        },
      }],
      partialFingerprints: { [SARIF_FINGERPRINT]: `${def.name}/setup` },
      properties: { outcome: "INCONCLUSIVE:SETUP_FAILED", cause: setup },
    });
  }
  for (const v of report.verdicts) {
    if (v.kind !== "VIOLATION" && v.kind !== "INCONCLUSIVE") continue;
    const e = expectationOf.get(verdictKey(v));
    // A learned target's: where each argument value of the call came from.
    const learned = report.learned?.calls.find((c) =>
      c.tool === v.tool && c.variant === v.variant
    );
    const rule = v.kind === "VIOLATION" ? v.test : "untested";
    results.push({
      ruleId: rule,
      ruleIndex: ruleIndex.get(rule) ?? 0,
      level: v.kind === "VIOLATION" ? "error" : "note",
      message: { text: verdictMessage(v) },
      locations: [location(v)],
      partialFingerprints: {
        [SARIF_FINGERPRINT]: `${def.name}/${toolLabel(v)}/${v.test}`,
      },
      properties: {
        tool: v.tool,
        variant: v.variant,
        test: v.test,
        hint: v.hint,
        declared: v.declared,
        outcome: v.outcome,
        reason: v.reason,
        secondary: v.secondary,
        observed: v.observed,
        overDeclared: v.overDeclared,
        details: v.details,
        facts: v.facts,
        expectation: report.audit || !e
          ? null
          : e.matched
          ? "matched"
          : "mismatched",
        ...(learned === undefined ? {} : {
          learned: learned.learned,
          argumentOrigins: learned.origins,
        }),
      },
    });
  }
  for (const u of claims.untested) {
    if (u.reason !== NOT_EXERCISED) continue;
    results.push({
      ruleId: "untested",
      ruleIndex: ruleIndex.get("untested") ?? 0,
      level: "note",
      message: {
        text: `Tool ${
          JSON.stringify(u.tool)
        }: ${u.test} untested (${NOT_EXERCISED}). It declares a ${u.hint} claim, but the definition never calls it.`,
      },
      locations: [location(u)],
      partialFingerprints: {
        [SARIF_FINGERPRINT]: `${def.name}/${u.tool}/${u.test}`,
      },
      properties: { ...u, outcome: `untested: ${NOT_EXERCISED}` },
    });
  }
  if (!report.audit) {
    for (const e of report.expectations.results) {
      if (e.matched) continue;
      results.push({
        ruleId: "expectation",
        ruleIndex: ruleIndex.get("expectation") ?? 0,
        level: "error",
        message: { text: expectationMessage(e) },
        locations: [location(e)],
        partialFingerprints: {
          [SARIF_FINGERPRINT]: `${def.name}/${
            toolLabel(e)
          }/${e.test}/expectation`,
        },
        properties: {
          tool: e.tool,
          variant: e.variant,
          test: e.test,
          expected: e.verdict,
          actual: e.actual,
          assertions: e.assertions,
          mismatches: e.mismatches,
        },
      });
    }
  }
  const d = report.observations.definition;
  const prov = report.provenance;
  const git = def.git;
  const effects = stateEffectsOf(report);
  // Where the definition and the audited package come from, when known.
  const vcs: Record<string, unknown>[] = [];
  // The origin as a URI, else the checkout the definition is in.
  const defRepo = (git?.repository ? repositoryUri(git.repository) : null) ??
    (root !== null ? `file://${encodePath(asDirectory(root))}` : null);
  if (git !== undefined && git.commit !== null && defRepo !== null) {
    vcs.push({
      repositoryUri: defRepo,
      revisionId: git.commit,
      ...(root !== null ? { mappedTo: { uriBaseId: "%SRCROOT%" } } : {}),
      properties: { role: "definition", dirty: git.dirty, detail: git.detail },
    });
  }
  const target = prov.target;
  const targetRepo = target?.pinned === true && target.git !== null
    ? repositoryUri(target.git)
    : null;
  if (target?.pinned === true && targetRepo !== null) {
    vcs.push({
      repositoryUri: targetRepo,
      ...(target.commit !== null ? { revisionId: target.commit } : {}),
      properties: {
        role: "target",
        package: target.package,
        version: target.version,
        integrity: target.integrity,
      },
    });
  }
  const log = {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [{
      tool: {
        driver: {
          name: "verity",
          version: report.provenance.harness.version,
          semanticVersion: report.provenance.harness.version,
          rules,
        },
      },
      // One category per definition file (code scanning keys alerts by it).
      automationDetails: {
        id: `verity/${definitionPath(def.file, root)}/${report.runId}`,
      },
      ...(root !== null
        ? {
          originalUriBaseIds: {
            "%SRCROOT%": { uri: `file://${encodePath(asDirectory(root))}` },
          },
        }
        : {}),
      ...(vcs.length ? { versionControlProvenance: vcs } : {}),
      invocations: [{
        executionSuccessful: setup === null,
        startTimeUtc: report.provenance.capturedAt,
        toolExecutionNotifications: [
          ...(setup === null ? [] : [{
            level: "error",
            message: { text: setup },
          }]),
          {
            level: claims.untested.length > 0 ? "warning" : "note",
            message: { text: `claims: ${claimsLine(claims, setup !== null)}` },
          },
        ],
      }],
      results,
      properties: {
        claims: { summary: claimsLine(claims, setup !== null), ...claims },
        excludedFromJudgment: exclusionText(d.excluded ?? []),
        runId: report.runId,
        definition: def,
        mode: report.audit ? "audit" : "fixture",
        harness: report.provenance.harness,
        definitionGit: definitionGitText(git),
        target: target ?? NOT_RECORDED,
        controlEffect: {
          summary: controlEffectText(effects),
          runs: effects?.control.map((c) => ({
            run: c.run,
            changed: c.changed,
            deltaDigest: c.deltaDigest,
          })) ?? null,
        },
        erroredCalls: {
          summary: erroredSummary(effects),
          changedState: effects?.erroredCalls.filter((e) =>
            e.stateChanged === true
          ).map((e) => ({
            tool: e.tool,
            variant: e.variant,
            session: e.session,
            run: e.run,
            call: e.call,
            status: e.status,
            beyondControl: e.beyondControl,
            deltaDigest: e.deltaDigest,
          })) ?? null,
        },
        sandbox: report.sandbox.backend,
        sandboxAllowances: allowanceLine(report.sandbox.allow),
        resetVerified: d.reset.verified,
        coverageComplete: d.coverage.complete &&
          d.coverage.locations.length > 0,
        coverage: d.coverage.locations.length === 0
          ? "none"
          : d.coverage.complete
          ? "complete"
          : "partial",
        setupFailure: setup,
        verdicts: report.verdicts.length,
        violations: report.verdicts.filter((v) =>
          v.kind === "VIOLATION"
        ).length,
        overDeclarations: toolLevel(reportOverDeclarations(report)).map(
          overDeclarationText,
        ),
        scopedAdvice: scopedAdvice(reportOverDeclarations(report)).map(
          overDeclarationText,
        ),
        ...(report.audit ? {} : {
          expectations: {
            matched: report.expectations.matched,
            total: report.expectations.total,
          },
        }),
      },
    }],
  };
  // DEL and C1 controls (a server's strings) as escapes too: the same JSON.
  return terminalJson(JSON.stringify(log, null, 2)) + "\n";
}
