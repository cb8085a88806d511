/**
 * The predicate of verity's attestations (`urn:verity:evidence:v1`),
 * built from a verified document. Pure.
 *
 * @module
 */
import { isPlainObject } from "../common/is_plain_object.ts";

/** What the attester adds beyond the document itself. */
export interface PredicateContext {
  /** The attesting verity's version. */
  attester: string;
  /** The definition the report was run from (digest checked against the report), with its `[source]` pin. */
  definition: { digest: string; source: Record<string, unknown> | null } | null;
  /** The ledger block recording the document, and the head it verified against. */
  ledger: { block: number; head: string } | null;
}

const obj = (v: unknown): Record<string, unknown> => isPlainObject(v) ? v : {};

function count<T>(xs: readonly T[], f: (x: T) => boolean): number {
  return xs.filter(f).length;
}

/**
 * The predicate for `doc` of `kind`: `document` (what wrote it and under
 * which rules) and `summary` (counts) are re-derivable from the document
 * alone, so `attest verify --report` recomputes and compares them.
 * Throws `TypeError` when a definition is given whose digest is not the
 * report's.
 */
export function evidencePredicate(
  kind: "report" | "reality" | "manifest",
  doc: Record<string, unknown>,
  ctx: PredicateContext,
): Record<string, unknown> {
  let document: Record<string, unknown>;
  let summary: Record<string, unknown>;
  if (kind === "report") {
    const prov = obj(doc.provenance);
    const def = obj(prov.definition);
    const harness = obj(prov.harness);
    document = {
      schema: doc.schema,
      runId: doc.runId,
      verity: harness.version ?? null,
      commit: harness.commit ?? null,
      verdictRules: prov.engine ?? null,
      definition: { name: def.name ?? null, digest: def.digest ?? null },
      audit: doc.audit,
      backend: obj(doc.sandbox).backend ?? null,
    };
    const verdicts = Array.isArray(doc.verdicts)
      ? doc.verdicts as Record<string, unknown>[]
      : [];
    const exp = obj(doc.expectations);
    summary = {
      verdicts: verdicts.length,
      pass: count(verdicts, (v) => v.kind === "PASS"),
      violation: count(verdicts, (v) => v.kind === "VIOLATION"),
      inconclusive: count(verdicts, (v) => v.kind === "INCONCLUSIVE"),
      notApplicable: count(verdicts, (v) => v.kind === "NOT_APPLICABLE"),
      overDeclared: count(verdicts, (v) => v.overDeclared === true),
      expectations: { matched: exp.matched ?? null, total: exp.total ?? null },
    };
  } else if (kind === "reality") {
    const server = obj(doc.server);
    document = {
      schema: doc.schema,
      verity: doc.verity ?? null,
      definition: server.definition ?? null,
      sandbox: server.sandbox ?? null,
    };
    summary = obj(doc.summary);
  } else {
    const tools = Array.isArray(doc.tools) ? doc.tools : [];
    document = {
      format: doc.format,
      version: doc.version,
      server: doc.server ?? null,
      contractRecipe: doc.contract_recipe ?? null,
      capturedAt: doc.captured_at ?? null,
    };
    summary = {
      tools: tools.length,
      problems: Array.isArray(doc.problems) ? doc.problems.length : 0,
    };
  }
  let target: Record<string, unknown> | null = null;
  if (ctx.definition !== null) {
    const claimed = kind === "manifest"
      ? undefined
      : obj(document.definition).digest;
    if (claimed !== ctx.definition.digest) {
      throw new TypeError(
        `the definition's digest ${ctx.definition.digest} is not the one the ${kind} records (${
          String(claimed)
        })`,
      );
    }
    const s = ctx.definition.source;
    target = s === null ? null : {
      package: s.package ?? null,
      version: s.version ?? null,
      integrity: s.integrity ?? null,
    };
  }
  return {
    attester: ctx.attester,
    kind,
    document,
    target,
    ledger: ctx.ledger,
    summary,
  };
}
