/**
 * A named check: one behavioural test, what it judges and what it
 * observes. The engine composes the five (see `battery.ts`). Pure types.
 *
 * @module
 */
import type { HintName } from "../contracts/contracts.ts";
import type { TestName } from "../definition/types.ts";
import type {
  DefinitionObservations,
  ToolObservations,
} from "../history/types.ts";
import type { Comparator, Observation } from "./_observe.ts";

/** What a check reads: the history of one tool and of its definition. */
export interface CheckContext {
  /** Deltas between stored snapshots (throws on a digest the evidence lacks). */
  cmp: Comparator;
  defn: DefinitionObservations;
  tool: ToolObservations;
  /** The verdict rules version being applied. */
  rules: number;
}

/** One behavioural test as data plus the function that observes it. */
export interface Check {
  /** The test's name in reports. */
  test: TestName;
  /** The hint it judges. */
  hint: HintName;
  /** The declared value that makes a claim this check can contradict. */
  claim: "TRUE" | "FALSE";
  /** The property reported as observed behaviour (`<property>=holds`). */
  property: string;
  /** What it compares, in words. */
  observes: string;
  /** Observe the behaviour from the history, before the declaration is considered. */
  observe(ctx: CheckContext): Observation;
}
