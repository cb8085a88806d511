/**
 * The declaration-changed rule (verdict rules version 8): a tool whose
 * declaration differs between sessions of one audit (a hint, a schema, the
 * tool itself: a rug pull) is not judged against either contract. Every
 * verdict of the tool is `INCONCLUSIVE:DECLARATION_CHANGED`, with both
 * contracts of every session that differed as evidence, and what the
 * verdict would have been on the first listing alone beside it. Pure.
 *
 * @module
 */
import type { ToolObservations } from "../../history/types.ts";
import type { Verdict } from "../types.ts";
import { describeChange } from "../../contracts/listing_changes.ts";

/**
 * The verdict `v` (judged on the first listing) for a tool whose
 * declaration changed between sessions.
 *
 * @example
 * ```ts ignore
 * declarationChangedVerdict(judged, tool).outcome; // "INCONCLUSIVE:DECLARATION_CHANGED"
 * ```
 */
export function declarationChangedVerdict(
  v: Verdict,
  t: ToolObservations,
): Verdict {
  const changes = t.declarationChanges ?? [];
  const first = v.reason === null ? [] : [v.reason];
  return {
    ...v,
    outcome: "INCONCLUSIVE:DECLARATION_CHANGED",
    kind: "INCONCLUSIVE",
    reason: "DECLARATION_CHANGED",
    secondary: [...new Set([...first, ...v.secondary])].filter((r) =>
      r !== "DECLARATION_CHANGED"
    ),
    overDeclared: false,
    facts: {
      ...v.facts,
      declaration_changed: true,
      on_first_listing: v.outcome,
    },
    details: [
      `the declaration changed between sessions (${
        changes.length === 1 ? "1 session" : `${changes.length} sessions`
      } declared it differently from the first listing): ${
        changes.slice(0, 4).map(describeChange).join("; ")
      }${
        changes.length > 4 ? "; ..." : ""
      }; on the first listing alone: ${v.outcome}`,
      ...v.details,
    ],
    evidence: { ...v.evidence, declaration_changes: changes },
  };
}
