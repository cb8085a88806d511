/**
 * SARIF 2.1.0 rendering of a report, for GitHub code scanning and other
 * SARIF viewers. Pure: the caller supplies the repository root and the
 * definition's line numbers (see {@linkcode definitionToolLines}).
 *
 * One run; `tool.driver` is verity with one rule per test (plus
 * `expectation` in fixture runs). One result per VIOLATION (level `error`),
 * per INCONCLUSIVE verdict (level `note`) and, in fixture runs, per
 * expectation that did not match (level `error`, rule `expectation`).
 * Every result points at the definition file (the tool's `[[tools]]` entry)
 * and names the tool as a logical location.
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
import type { ExpectationResult } from "./expectations.ts";
import { toolLabel } from "./_markup.ts";
import { claimsLine, reportClaims } from "./claims.ts";
import { exclusionText } from "../state/exclude.ts";
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
}

interface RuleText {
  name: string;
  short: string;
  full: string;
  hint: string | null;
}

const RULES: Record<TestName | "expectation" | "setup", RuleText> = {
  read_only: {
    name: "ReadOnlyHintHolds",
    short: "readOnlyHint: true holds on observed state",
    full:
      "A tool that declares readOnlyHint: true must not change any observed state (business, append-only or unclassified) between a control session and a session with one call, in any of the independent runs.",
    hint: "readOnlyHint",
  },
  destructive: {
    name: "DestructiveHintHolds",
    short: "destructiveHint: false holds on observed state",
    full:
      "A tool that declares destructiveHint: false must not remove or overwrite a pre-existing business or append-only record (control session vs one call).",
    hint: "destructiveHint",
  },
  sequential_idempotence: {
    name: "IdempotentHintHoldsSequentially",
    short: "idempotentHint: true holds for a repeated call",
    full:
      "A tool that declares idempotentHint: true, called twice with the same arguments, must leave business state as one call left it, reproduced in every run from a clean reset.",
    hint: "idempotentHint",
  },
  concurrent_idempotence: {
    name: "IdempotentHintHoldsConcurrently",
    short: "idempotentHint: true holds for two concurrent calls",
    full:
      "A tool that declares idempotentHint: true, called twice at the same time (on one connection, or through two server processes sharing the store), must leave business state as one call left it, in every attempt.",
    hint: "idempotentHint",
  },
  open_world: {
    name: "OpenWorldHintHolds",
    short: "openWorldHint: false holds (no network access)",
    full:
      "A tool that declares openWorldHint: false must not attempt network access during a call; the sandbox's permission log is the evidence.",
    hint: "openWorldHint",
  },
  setup: {
    name: "ServerCouldBeAudited",
    short: "the server started and answered in its sessions",
    full:
      "A server that never starts, initializes or lists its tools, or that dies in every session, cannot be audited: every verdict is INCONCLUSIVE:SETUP_FAILED and the run fails, whatever its flags.",
    hint: null,
  },
  expectation: {
    name: "FixtureExpectationMatched",
    short: "the fixture's recorded ground truth matched",
    full:
      "A fixture records the verdict each (tool, test) must get. A verdict that differs, a failed observed assertion, or a missing verdict is a failure of the harness or of the fixture.",
    hint: null,
  },
};

const RULE_ORDER = [
  "read_only",
  "destructive",
  "sequential_idempotence",
  "concurrent_idempotence",
  "open_world",
  "expectation",
  "setup",
] as const;

function ruleHelp(id: typeof RULE_ORDER[number]): string {
  const r = RULES[id];
  if (id === "setup") {
    return `${r.full}\n\nThe result's message carries the cause: the exit status or signal and the meaningful tail of the server's stderr. See docs/methodology.md.`;
  }
  if (id === "expectation") {
    return `${r.full}\n\nThe result names the expected and the actual verdict and every failed assertion. See docs/fixtures.md.`;
  }
  return `${r.full}\n\nLevel error: a VIOLATION, behaviour contradicting the explicit declaration, with its evidence (deltas per run, attempts, permission checks) in the verity report. Level note: INCONCLUSIVE, no judgement was possible; properties.reason says why (for example PARTIAL_COVERAGE, NONDETERMINISTIC, CALL_ERROR, NO_OVERLAP_OBSERVED, TIMED_OUT). PASS and NOT_APPLICABLE verdicts produce no result. Re-check any verdict with \`verity report verify <report.json>\`. See docs/methodology.md.`;
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
  if (v.kind === "VIOLATION") {
    return `${lead} It ${declaredPhrase(v)}, but observed ${v.observed}${
      why ? `: ${sentence(why)}` : "."
    }`;
  }
  return `${lead} It ${declaredPhrase(v)}; observed ${v.observed}${
    why ? `: ${sentence(why)}` : "."
  }`;
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

/** The artifact location of the definition file. */
function artifactLocation(
  file: string,
  root: string | null,
): Record<string, string> {
  if (!file.startsWith("/")) {
    return { uri: encodePath(file), uriBaseId: "%SRCROOT%" };
  }
  if (root !== null) {
    const dir = asDirectory(root);
    if (file.startsWith(dir)) {
      return {
        uri: encodePath(file.slice(dir.length)),
        uriBaseId: "%SRCROOT%",
      };
    }
  }
  return { uri: `file://${encodePath(file)}` };
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
  const ruleIds = RULE_ORDER.filter((id) =>
    id !== "expectation" || !report.audit
  );
  const ruleIndex = new Map<string, number>(ruleIds.map((id, i) => [id, i]));
  const rules = ruleIds.map((id) => {
    const r = RULES[id];
    return {
      id,
      name: r.name,
      shortDescription: { text: r.short },
      fullDescription: { text: r.full },
      help: { text: ruleHelp(id), markdown: ruleHelp(id) },
      defaultConfiguration: { level: "error" },
      properties: {
        tags: ["mcp", "tool-annotations", ...(r.hint ? [r.hint] : [])],
        precision: "very-high",
      },
    };
  });
  const location = (t: { tool: string; variant: string | null }) => {
    const label = toolLabel(t);
    return {
      physicalLocation: {
        artifactLocation: artifactLocation(def.file, root),
        region: { startLine: lines[label] ?? lines[t.tool] ?? 1 },
      },
      logicalLocations: [{
        name: label,
        fullyQualifiedName: `${def.name}/${label}`,
        kind: "function",
      }],
    };
  };
  const expectationOf = new Map(
    report.expectations.results.map((e) => [
      `${e.tool}\u0000${e.variant}\u0000${e.test}`,
      e,
    ]),
  );
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
          artifactLocation: artifactLocation(def.file, root),
          region: { startLine: 1 },
        },
      }],
      partialFingerprints: { [SARIF_FINGERPRINT]: `${def.name}/setup` },
      properties: { outcome: "INCONCLUSIVE:SETUP_FAILED", cause: setup },
    });
  }
  for (const v of report.verdicts) {
    if (v.kind !== "VIOLATION" && v.kind !== "INCONCLUSIVE") continue;
    const e = expectationOf.get(`${v.tool}\u0000${v.variant}\u0000${v.test}`);
    results.push({
      ruleId: v.test,
      ruleIndex: ruleIndex.get(v.test) ?? 0,
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
      },
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
  const defRepo = git?.repository ??
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
  if (target?.pinned === true && target.git !== null) {
    vcs.push({
      repositoryUri: target.git,
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
      automationDetails: { id: `verity/${def.name}/${report.runId}` },
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
        sandboxAllowances: allowanceLine(report.sandbox.allow) ??
          "none (default sandbox)",
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
        )
          .length,
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
  return JSON.stringify(log, null, 2) + "\n";
}
