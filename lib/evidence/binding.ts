/**
 * Binding a document (a report, a reality report, a capture manifest) to a
 * ledger: the chain verifies against a head kept elsewhere, and one of its
 * blocks records the document's digest. Pure.
 *
 * @module
 */
import { parseEvidenceJson } from "./canonical.ts";
import { type LedgerVerification, verifyLedgerText } from "./chain.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** The outcome of {@linkcode bindToLedger}. */
export interface LedgerBinding {
  ok: boolean;
  /** The chain's own verification against the expected head. */
  ledger: LedgerVerification;
  /** The block that records the digest, when one does. */
  block:
    | { index: number; type: string; record: Record<string, unknown> }
    | null;
  problems: string[];
}

/**
 * Check that `ledgerText` verifies against `expectedHead` and that a block
 * of one of `types` records `digest` (`record.digest`), with `expect`'s
 * fields equal in its record (e.g. the run id). Throws `SyntaxError` when
 * the ledger is not JSON.
 *
 * @example
 * ```ts ignore
 * bindToLedger(text, head, "sha256:…", ["report"], { run_id: "…" }).ok;
 * ```
 */
export function bindToLedger(
  ledgerText: string,
  expectedHead: string,
  digest: string,
  types: readonly string[],
  expect: Readonly<Record<string, unknown>> = {},
): LedgerBinding {
  const ledger = verifyLedgerText(ledgerText, expectedHead);
  if (!ledger.ok) return bindingOf(ledger, null, digest, types, expect);
  const parsed = parseEvidenceJson(ledgerText, { numbers: "python" }) as {
    blocks: { type: string; record: unknown }[];
  };
  const hits = parsed.blocks.map((b, index) => ({ ...b, index })).filter((b) =>
    isPlainObject(b.record) && b.record.digest === digest
  );
  return bindingOf(ledger, hits.at(-1) ?? null, digest, types, expect);
}

/**
 * The binding given the chain's verification and `hit`, the last block
 * whose record's `digest` is the document's, or null. Pure.
 */
export function bindingOf(
  ledger: LedgerVerification,
  hit: { index: number; type: string; record: unknown } | null,
  digest: string,
  types: readonly string[],
  expect: Readonly<Record<string, unknown>> = {},
): LedgerBinding {
  const problems = ledger.problems.map((p) =>
    `ledger ${p.kind}${p.index === null ? "" : `@${p.index}`}: ${p.message}`
  );
  if (!ledger.ok) return { ok: false, ledger, block: null, problems };
  if (hit === null) {
    problems.push(
      `no block of the ledger records ${digest}: the document is not the one the ledger recorded (edited, or never appended)`,
    );
    return { ok: false, ledger, block: null, problems };
  }
  const record = hit.record as Record<string, unknown>;
  if (!types.includes(hit.type)) {
    problems.push(
      `block ${hit.index} records this digest as a ${
        JSON.stringify(hit.type)
      } block, not ${types.join(" or ")}`,
    );
  }
  for (const [k, v] of Object.entries(expect)) {
    if (record[k] !== v) {
      problems.push(
        `block ${hit.index}: ${k} is ${
          JSON.stringify(record[k])
        }, the document says ${JSON.stringify(v)}`,
      );
    }
  }
  return {
    ok: problems.length === 0,
    ledger,
    block: { index: hit.index, type: hit.type, record },
    problems,
  };
}
