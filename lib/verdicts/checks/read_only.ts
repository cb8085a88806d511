/**
 * The `read_only` check: a call declared read-only must leave business and
 * append-only state as a control session leaves it and (verdict rules
 * version 5) must not attempt a write the sandbox refused. From verdict
 * rules version 7 on, any observed change contradicts the claim, whatever
 * its class: a table or file the definition left unclassified, or that
 * the seed does not have, counts as much as business state (a cache, a
 * log or a result file is a change to the environment). Only what the
 * control sessions also change, and declared masks, do not count. Pure.
 *
 * @module
 */
import type { Check, CheckContext } from "../check.ts";
import {
  any,
  callFailed,
  callMessages,
  type Cat,
  changedRegions,
  controlVsOnce,
  decideRuns,
  type Observation,
  refusedBeyondControl,
  regionText,
} from "../_observe.ts";

/** What bubblewrap (and no sandbox) cannot tell, said on every verdict it judges. */
export const ATTEMPTS_UNSEEN =
  "attempts unseen: this sandbox backend records no attempts (a write outside the state directory fails inside the sandbox and leaves no trace), so only the state was judged";

/** What bubblewrap cannot tell when the session ran on an overlay. */
export const CHECKS_UNSEEN =
  "attempts unseen: this sandbox backend records no permission checks; every write went into the session's overlay and is judged with the state (reads and network attempts are not seen)";

function observeReadOnly(
  { cmp, defn, tool: t, rules }: CheckContext,
): Observation {
  const { o, perRun } = controlVsOnce(cmp, defn, t);
  if (perRun === null) return o;
  o.facts.unclassified_changed = perRun.some(({ d }) => !d.unclassified.empty);
  // Rules version 5: refused writes (and reads) the call attempted, beyond
  // what the control sessions attempt on their own.
  const recorded = rules >= 5;
  const writes = recorded
    ? refusedBeyondControl(defn, t.once, "write") ?? null
    : null;
  const reads = recorded
    ? refusedBeyondControl(defn, t.once, "read") ?? null
    : null;
  if (recorded && refusedBeyondControl(defn, t.once, "write") !== undefined) {
    o.facts.attempts_observed = writes !== null;
    if (writes === null) {
      o.details.push(defn.writes?.observed ? CHECKS_UNSEEN : ATTEMPTS_UNSEEN);
    }
  }
  // Writes outside the state directory the overlay kept, beyond the control sessions'.
  const outside = perRun.map(({ s }) => ({
    run: s.run,
    paths: cmp.outside(s),
  }));
  if (defn.writes?.observed) {
    o.facts.outside_changed = outside.some((x) => x.paths.length > 0);
  }
  if (outside.some((x) => x.paths.length > 0)) {
    o.evidence.outside_writes = outside;
    o.details.push(
      `changed outside its state directory (the overlay's changeset): ${
        [...new Set(outside.flatMap((x) => x.paths))].join(", ")
      }`,
    );
  }
  const attempted = (run: number) =>
    (writes?.find((w) => w.run === run)?.values.length ?? 0) > 0;
  if (writes !== null) {
    o.facts.write_attempted = writes.some((w) => w.values.length > 0);
    o.evidence.attempted_writes = writes;
  }
  if (reads !== null) {
    o.facts.read_refused = reads.some((r) => r.values.length > 0);
    if (o.facts.read_refused) {
      o.evidence.refused_reads = reads;
      o.details.push(
        `reads refused by the sandbox (not a write: readOnlyHint allows reads): ${
          [...new Set(reads.flatMap((r) => r.values))].join(", ")
        }`,
      );
    }
  }
  // Rules version 7: every observed class counts.
  const judged: Cat[] = rules >= 7
    ? ["business", "append_only", "unclassified"]
    : ["business", "append_only"];
  if (rules >= 7) {
    const changed = changedRegions(perRun.map(({ d }) => d));
    if (changed.length > 0) {
      o.evidence.changed_regions = changed;
      const named = (cat: Cat) =>
        changed.filter((c) => c.category === cat).map(regionText).join("; ");
      // Paths outside the state directory are named on their own line.
      const classified = changed.filter((c) =>
        c.category !== "unclassified" && !c.region.startsWith("/")
      );
      if (classified.length > 0) {
        o.details.push(
          `changed: ${
            classified.map((c) => `${regionText(c)} [${c.category}]`).join(
              "; ",
            )
          }`,
        );
      }
      if (changed.some((c) => c.category === "unclassified")) {
        o.details.push(
          `changed state the definition does not classify (any change contradicts readOnlyHint: true): ${
            named("unclassified")
          }`,
        );
      }
    }
  }
  decideRuns(
    o,
    perRun.map(({ s, d }) => ({
      run: s.run,
      effect: any(d, judged) || attempted(s.run),
      unclassifiedOnly: !any(d, judged) &&
        !attempted(s.run) && !d.unclassified.empty,
      failed: callFailed(s),
      messages: callMessages(s),
    })),
    writes !== null && o.facts.write_attempted
      ? "state changed or a write was attempted between control and once"
      : "state changed between control and once",
  );
  if (
    o.behaviour === "fails" && writes !== null &&
    perRun.every(({ d }) => !any(d, judged))
  ) {
    o.violationReason = "ATTEMPTED_WRITE";
    o.details.unshift(
      `attempted to write outside its state directory (refused by the sandbox) in ${
        writes.filter((w) => w.values.length > 0).length
      }/${writes.length} runs: ${
        [...new Set(writes.flatMap((w) => w.values))].join(", ")
      }`,
    );
  }
  return o;
}

/** A call declared read-only must leave business and append-only state as a control session leaves it, and attempt no write. */
export const readOnlyCheck: Check = {
  test: "read_only",
  hint: "readOnlyHint",
  claim: "TRUE",
  property: "read_only",
  observes:
    "control vs once: any observed state differs (business, append-only or unclassified, a region the seed does not have), or (deno) a write the sandbox refused",
  observe: observeReadOnly,
};
