/**
 * The census document (`census.json`, schema `verity.census/1`): one entry
 * per server and the summary over them. Pure: building entries from what
 * was observed, classifying failures, summarizing, and assembling (or
 * merging) documents. The JSON Schema is docs/schema/census.schema.json.
 *
 * Timing lives in two places only, so two censuses of the same list compare
 * equal once they are removed: the document's `run` (shards, their ledger
 * heads, clock times) and each server's `timing`.
 *
 * @module
 */
import { type Claims, isClaim } from "../report/claims.ts";
import { TEST_NAMES, type TestName } from "../definition/types.ts";
import {
  HINT_NAMES,
  type HintName,
  type HintState,
} from "../contracts/contracts.ts";
import type { Grade, RealitySummary } from "../reality/score.ts";

/** The schema tag of a census document. */
export const CENSUS_SCHEMA = "verity.census/1";

/** Every failure kind (why a server could not be fully audited), in report order. */
export const FAILURE_KINDS = [
  "not_prepared",
  "launch_refused",
  "needs_credentials",
  "needs_configuration",
  "crashed",
  "timed_out",
  "cannot_list",
  "reality_failed",
  "internal_error",
] as const;

/** Why a server could not be (fully) audited. */
export type CensusFailureKind = typeof FAILURE_KINDS[number];

/** A failure, with the step it happened in and the evidence in words. */
export interface CensusFailure {
  stage: "prepare" | "launch" | "list" | "reality" | "verity";
  kind: CensusFailureKind;
  message: string;
}

/** One tool's four hints as read from the raw bytes, and (`--behavior`) its verdicts. */
export interface CensusTool {
  name: string;
  hints: Record<HintName, { state: HintState; detail: string | null }>;
  /** The battery's verdicts on it (absent without `--behavior` or when the battery did not run). */
  verdicts?: CensusVerdict[];
}

/** One verdict of the battery, with the digest of its evidence in the server's report. */
export interface CensusVerdict {
  variant: string | null;
  test: TestName;
  /** `PASS`, `VIOLATION`, `INCONCLUSIVE:<reason>`, `NOT_APPLICABLE:<reason>`. */
  outcome: string;
  /** `sha256:` of the canonical JSON of the verdict's `evidence` in report.json. */
  evidence: string;
}

/** The claims headline of one server's battery (its report's `summary.claims`, counted). */
export interface CensusClaims {
  falsifiable: number;
  tested: number;
  held: number;
  violated: number;
  untested: number;
  /** violated / tested, or null when nothing was tested (mcp-groundtruth's denominator). */
  violationRate: number | null;
}

/** A report's claims headline as the census keeps it: the untested counted, not listed. */
export function censusClaims(
  c: Claims,
): CensusClaims & { unobservedWrites?: string } {
  return {
    falsifiable: c.falsifiable,
    tested: c.tested,
    held: c.held,
    violated: c.violated,
    untested: c.untested.length,
    violationRate: c.violationRate,
    ...(c.unobservedWrites === undefined
      ? {}
      : { unobservedWrites: c.unobservedWrites }),
  };
}

/** What `--behavior` did with one listed server: the zero-config battery. */
export interface CensusBehavior {
  /** Why the battery did not run to its end (learning or the battery failed), else null. */
  failure: {
    kind: "timed_out" | "failed" | "internal_error";
    message: string;
  } | null;
  /** The battery's report (`verity.report`, seed inline), relative to the census directory. */
  report: string | null;
  /** The target learned by use, relative to the census directory. */
  target: string | null;
  /** State files the learned seed holds. */
  stateFiles: number;
  /** Seeding calls by outcome (`kept`, `read_only`, `errored`, `lossy`, `no_change`). */
  seeding: Record<string, number> | null;
  claims: (CensusClaims & { unobservedWrites?: string }) | null;
}

/** One malformed hint. */
export interface CensusMalformed {
  tool: string;
  hint: HintName;
  /** The malformation kind (`string`, `number`, `null`, `list`, `object`, `duplicate_key`, `annotations_not_object`). */
  kind: string;
  detail: string;
}

/** The reality check's outcome for one server. */
export interface CensusReality {
  /** The reality report, relative to the census directory. */
  file: string;
  score: number | null;
  grade: Grade | null;
  /** Tools whose call answered with a success (checked). */
  checked: number;
  /** Tools listed. */
  total: number;
  passed: number;
  flagged: number;
  failed: number;
  skipped: number;
  lowCoverage: boolean;
}

/** One server of the census. */
export interface CensusServer {
  id: string;
  package: string | null;
  version: string | null;
  bin: string | null;
  backend: "deno" | "node";
  /** The `dist.integrity` the prepared package was checked against (null for a local server or one not prepared). */
  integrity: string | null;
  /** `audited` (listed and reality-checked), `partial` (listed only), `failed` (not listed). */
  outcome: "audited" | "partial" | "failed";
  failure: CensusFailure | null;
  /** `serverInfo` name and version as sent, and the protocol version. */
  server: {
    name: string | null;
    version: string | null;
    protocolVersion: string | null;
  } | null;
  /** The recipe-3 manifest, relative to the census directory, or null. */
  manifest: { file: string; tools: number; problems: number } | null;
  tools: CensusTool[];
  hints: HintCounts;
  malformed: CensusMalformed[];
  reality: CensusReality | null;
  /** The battery (`--behavior` only; absent otherwise). */
  behavior?: CensusBehavior;
  /** Seconds this server took (a timing field). */
  timing: { seconds: number };
}

/** Counts of hint states. */
export interface HintCounts {
  tools: number;
  /** Tools with at least one hint present (TRUE, FALSE or MALFORMED). */
  toolsDeclaring: number;
  /** Tools with all four hints present and well-formed. */
  toolsComplete: number;
  /** Tools with at least one malformed hint. */
  toolsMalformed: number;
  perHint: Record<HintName, Record<HintState, number>>;
}

/** The summary over the servers of a document. */
export interface CensusSummary {
  servers: number;
  outcomes: { audited: number; partial: number; failed: number };
  failures: Record<CensusFailureKind, number>;
  /** Servers with at least one hint present on some tool, and on every tool. */
  serversDeclaring: number;
  serversDeclaringEveryTool: number;
  serversMalformed: number;
  hints: HintCounts;
  malformedKinds: Record<string, number>;
  /** Reality grades of audited servers; `ungraded` has a score under half coverage, `none` nothing checkable. */
  grades: Record<Grade | "ungraded" | "none", number>;
  /**
   * The falsifiable claims the listed tools make (`readOnlyHint: true`,
   * `destructiveHint: false`, `idempotentHint: true`, `openWorldHint:
   * false`, one per test a declaration makes falsifiable), how many were
   * tested and violated, and mcp-groundtruth's violation rate (violated /
   * tested). Without `--behavior` the census runs no battery, so none is
   * tested and the rate is null; with it, tested and violated are the
   * batteries' (a tool's variants each count). Absent in documents
   * written before 2026-12-02.
   */
  claims?: {
    falsifiable: number;
    tested: number;
    violated: number;
    violationRate: number | null;
  };
  /** The batteries (`--behavior` only): servers run, failed, their claims and verdicts summed. */
  behavior?: {
    /** Listed servers the battery was tried on. */
    servers: number;
    /** Of them, the ones whose battery did not run to its end, by kind. */
    failed: { timed_out: number; failed: number; internal_error: number };
    /** Servers with at least one VIOLATION. */
    serversViolating: number;
    /** The batteries' claims summed; a battery that did not finish adds its listing's claims, all untested. */
    claims: CensusClaims;
    /** Verdicts by kind. */
    verdicts: Record<
      "PASS" | "VIOLATION" | "INCONCLUSIVE" | "NOT_APPLICABLE",
      number
    >;
  };
}

/** One shard's run: what `run` records (timing and provenance fields). */
export interface CensusShardRun {
  shard: string;
  servers: number;
  /** The head of the shard's ledger of per-server artifacts. */
  ledgerHead: string;
  startedAt: string;
  finishedAt: string;
  seconds: number;
  jobs: number;
}

/** The whole document. */
export interface CensusDocument {
  schema: typeof CENSUS_SCHEMA;
  verity: string;
  list: { name: string; digest: string; servers: number };
  settings: CensusSettings;
  /** Which shard this document covers (`1/1` for a whole census or a merge). */
  shard: string;
  servers: CensusServer[];
  summary: CensusSummary;
  /** Timing and provenance: the shards that produced it, and this document's ledger head. */
  run: { ledgerHead: string; shards: CensusShardRun[] };
}

/** How every server was audited (identical across shards of one census). */
export interface CensusSettings {
  recipe: "3";
  seed: number;
  includeDestructive: boolean;
  /** Every listed server got the zero-config battery (absent: it did not). */
  behavior?: true;
}

/** Zero counts for each hint state. */
function zeroStates(): Record<HintState, number> {
  return { TRUE: 0, FALSE: 0, ABSENT: 0, MALFORMED: 0 };
}

/**
 * Hint counts over a list of tools.
 *
 * @example
 * ```ts
 * const c = countHints([]);
 * console.assert(c.tools === 0 && c.perHint.readOnlyHint.ABSENT === 0);
 * ```
 */
export function countHints(tools: readonly CensusTool[]): HintCounts {
  const perHint = Object.fromEntries(
    HINT_NAMES.map((h) => [h, zeroStates()]),
  ) as Record<HintName, Record<HintState, number>>;
  let declaring = 0;
  let complete = 0;
  let malformed = 0;
  for (const t of tools) {
    const states = HINT_NAMES.map((h) => t.hints[h].state);
    HINT_NAMES.forEach((h, i) => perHint[h][states[i]!]++);
    if (states.some((s) => s !== "ABSENT")) declaring++;
    if (states.every((s) => s === "TRUE" || s === "FALSE")) complete++;
    if (states.includes("MALFORMED")) malformed++;
  }
  return {
    tools: tools.length,
    toolsDeclaring: declaring,
    toolsComplete: complete,
    toolsMalformed: malformed,
    perHint,
  };
}

/**
 * The malformed hints of a tool list, with their kind (the part of the
 * detail before the first colon).
 */
export function malformedOf(tools: readonly CensusTool[]): CensusMalformed[] {
  const out: CensusMalformed[] = [];
  for (const t of tools) {
    for (const h of HINT_NAMES) {
      const v = t.hints[h];
      if (v.state !== "MALFORMED") continue;
      const detail = v.detail ?? "";
      const i = detail.indexOf(":");
      out.push({
        tool: t.name,
        hint: h,
        kind: i === -1 ? detail || "unknown" : detail.slice(0, i),
        detail,
      });
    }
  }
  return out;
}

const CREDENTIALS =
  /api[ _-]?key|access[ _-]?token|auth[ _-]?token|bearer|credential|secret|password|unauthori[sz]ed|not authenticated|\b[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PAT)\b/i;
const CONFIGURATION =
  /is not set|must be set|is required|are required|missing required|required (?:environment|env|argument|option|parameter)|no such file|usage:|environment variable/i;

/**
 * Classify a server that ended before its tools were listed: how the wire
 * ended (`reason`, as `lib/wire` names it) and what it said. Credentials and
 * configuration are read from the message and stderr (a heuristic: the
 * message stays beside the kind as evidence).
 *
 * @example
 * ```ts
 * console.assert(classifyFailure("exited", "GITHUB_TOKEN is not set", "") === "needs_credentials");
 * console.assert(classifyFailure("timeout", "no answer in 30 s", "") === "timed_out");
 * ```
 */
export function classifyFailure(
  reason: string | null,
  message: string,
  stderr: string,
): CensusFailureKind {
  if (reason === "timeout" || reason === "deadline") return "timed_out";
  const said = `${message}\n${stderr}`;
  if (reason === "exited" || reason === "spawn_failed" || reason === null) {
    if (CREDENTIALS.test(said)) return "needs_credentials";
    if (CONFIGURATION.test(said)) return "needs_configuration";
    return "crashed";
  }
  return "cannot_list";
}

/** The reality part of a server entry, from a reality report's summary. */
export function censusReality(
  file: string,
  s: RealitySummary,
): CensusReality {
  return {
    file,
    score: s.score,
    grade: s.grade,
    checked: s.checkable,
    total: s.tools,
    passed: s.passed,
    flagged: s.flagged,
    failed: s.failed,
    skipped: s.skipped,
    lowCoverage: s.lowCoverage,
  };
}

/**
 * Summarize servers (order does not matter).
 *
 * @example
 * ```ts
 * console.assert(summarize([]).servers === 0);
 * ```
 */
export function summarize(
  servers: readonly CensusServer[],
  behavior = false,
): CensusSummary {
  const failures = Object.fromEntries(
    FAILURE_KINDS.map((k) => [k, 0]),
  ) as Record<CensusFailureKind, number>;
  const outcomes = { audited: 0, partial: 0, failed: 0 };
  const grades: CensusSummary["grades"] = {
    A: 0,
    B: 0,
    C: 0,
    D: 0,
    F: 0,
    ungraded: 0,
    none: 0,
  };
  const kinds: Record<string, number> = {};
  let declaring = 0;
  let everyTool = 0;
  let malformed = 0;
  for (const s of servers) {
    outcomes[s.outcome]++;
    if (s.failure) failures[s.failure.kind]++;
    if (s.hints.toolsDeclaring > 0) declaring++;
    if (s.hints.tools > 0 && s.hints.toolsDeclaring === s.hints.tools) {
      everyTool++;
    }
    if (s.malformed.length > 0) malformed++;
    for (const m of s.malformed) kinds[m.kind] = (kinds[m.kind] ?? 0) + 1;
    if (s.reality) {
      if (s.reality.grade !== null) grades[s.reality.grade]++;
      else if (s.reality.score !== null) grades.ungraded++;
      else grades.none++;
    }
  }
  const malformedKinds: Record<string, number> = {};
  for (const k of Object.keys(kinds).sort()) malformedKinds[k] = kinds[k]!;
  const battery = behavior ? summarizeBehavior(servers) : null;
  return {
    servers: servers.length,
    outcomes,
    failures,
    serversDeclaring: declaring,
    serversDeclaringEveryTool: everyTool,
    serversMalformed: malformed,
    hints: countHints(servers.flatMap((s) => s.tools)),
    malformedKinds,
    grades,
    claims: {
      falsifiable: servers.reduce((n, s) => n + listedClaims(s), 0),
      tested: battery?.claims.tested ?? 0,
      violated: battery?.claims.violated ?? 0,
      violationRate: battery?.claims.violationRate ?? null,
    },
    ...(battery === null ? {} : { behavior: battery }),
  };
}

/** The falsifiable claims a server's listing makes (one per tool and test). */
function listedClaims(s: CensusServer): number {
  return s.tools.reduce(
    (m, t) => m + TEST_NAMES.filter((test) => isClaim(test, t.hints)).length,
    0,
  );
}

function summarizeBehavior(
  servers: readonly CensusServer[],
): NonNullable<CensusSummary["behavior"]> {
  const claims: CensusClaims = {
    falsifiable: 0,
    tested: 0,
    held: 0,
    violated: 0,
    untested: 0,
    violationRate: null,
  };
  const verdicts = {
    PASS: 0,
    VIOLATION: 0,
    INCONCLUSIVE: 0,
    NOT_APPLICABLE: 0,
  };
  const failed = { timed_out: 0, failed: 0, internal_error: 0 };
  let tried = 0;
  let violating = 0;
  for (const s of servers) {
    if (s.behavior === undefined) continue;
    tried++;
    if (s.behavior.failure) failed[s.behavior.failure.kind]++;
    const c = s.behavior.claims;
    if (c) {
      for (
        const k of [
          "falsifiable",
          "tested",
          "held",
          "violated",
          "untested",
        ] as const
      ) {
        claims[k] += c[k];
      }
    } else {
      // A battery that did not finish tested none of the claims its
      // listing makes: each is counted, untested.
      const made = listedClaims(s);
      claims.falsifiable += made;
      claims.untested += made;
    }
    let violation = false;
    for (const t of s.tools) {
      for (const v of t.verdicts ?? []) {
        const kind = v.outcome.split(":")[0] as keyof typeof verdicts;
        if (kind in verdicts) verdicts[kind]++;
        if (kind === "VIOLATION") violation = true;
      }
    }
    if (violation) violating++;
  }
  claims.violationRate = claims.tested === 0
    ? null
    : claims.violated / claims.tested;
  return {
    servers: tried,
    failed,
    serversViolating: violating,
    claims,
    verdicts,
  };
}

/** Servers in census order: by id, code point order. */
export function sortServers(servers: readonly CensusServer[]): CensusServer[] {
  return [...servers].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** What {@linkcode buildDocument} is made from. */
export interface DocumentInput {
  verity: string;
  list: CensusDocument["list"];
  settings: CensusSettings;
  shard: string;
  servers: readonly CensusServer[];
  run: CensusDocument["run"];
}

/** Assemble a census document: servers sorted, summary computed. */
export function buildDocument(input: DocumentInput): CensusDocument {
  const servers = sortServers(input.servers);
  return {
    schema: CENSUS_SCHEMA,
    verity: input.verity,
    list: input.list,
    settings: input.settings,
    shard: input.shard,
    servers,
    summary: summarize(servers, input.settings.behavior === true),
    run: input.run,
  };
}

/**
 * A document without its timing fields (`run` and each server's
 * `timing`): what two censuses of the same list and code must agree on.
 */
export function withoutTiming(
  doc: CensusDocument,
): Omit<CensusDocument, "run"> {
  const { run: _run, ...rest } = doc;
  return {
    ...rest,
    servers: rest.servers.map((s) => {
      const { timing: _t, ...kept } = s;
      return kept as CensusServer;
    }),
  };
}
