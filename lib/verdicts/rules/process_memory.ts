/**
 * The process-memory rule: state the server keeps where no adapter looks
 * shows in its answers. When it does while the observed state stayed put,
 * nothing "holds": the behaviour is unknown. Pure.
 *
 * @module
 */
import type { Rule } from "../rule.ts";
import { leftStateAlone } from "../_observe.ts";
import {
  probeEvidence,
  processMemoryEvidence,
  responsePreview,
} from "../process_memory.ts";

/**
 * Identical calls that answer differently while the observed state stayed
 * put (rules version 3 on): the state lives where verity cannot see it, so
 * nothing "holds" (UNOBSERVED_STATE, both answers as evidence).
 */
export const processMemoryRule: Rule = {
  name: "process memory",
  says:
    "identical calls in one session answer differently (ids and timestamps masked) while no observed state changed: unknown, UNOBSERVED_STATE",
  applies: (test, rules) => test !== "open_world" && rules >= 3,
  apply(o, { cmp, defn, tool: t }) {
    const ev = processMemoryEvidence(t.once, t.twice);
    if (ev === null || !leftStateAlone(cmp, defn, t.once)) return;
    const first = ev[0]!;
    o.evidence.process_memory = ev;
    o.facts.process_memory = true;
    o.details.unshift(
      `unknown: state may live in process memory: identical calls answered differently with no observed state change (twice run ${first.run}: ${
        JSON.stringify(responsePreview(first.first))
      } then ${JSON.stringify(responsePreview(first.second))})`,
    );
    if (o.behaviour === "holds") {
      o.behaviour = "unknown";
      o.blockers.unshift("UNOBSERVED_STATE");
    } else o.blockers.push("UNOBSERVED_STATE");
  },
};

/**
 * A read after the call that answers differently (the definition's probe):
 * when, in a probed session, the two reads before the call agree and the
 * read after it differs, while neither the once nor the probed sessions
 * changed observed state, the state lives where verity cannot see it, so
 * nothing "holds" (UNOBSERVED_STATE, the reads before and after as
 * evidence). `facts.probe_changed` says whether any stable read changed.
 */
export const probeRule: Rule = {
  name: "probe",
  says:
    "a read after the call (the definition's probe) answers differently from the reads before it while no observed state changed: unknown, UNOBSERVED_STATE",
  applies: (test, rules) => test !== "open_world" && rules >= 3,
  apply(o, { cmp, defn, tool: t }) {
    const ev = probeEvidence(t.probed);
    if (ev === null) return;
    o.evidence.probe = { tool: t.probe?.name ?? null, ...ev };
    if (ev.unstable.length) {
      o.details.push(
        `probe ${t.probe?.name}: the two reads before the call differed in run(s) ${
          ev.unstable.join(", ")
        } (an unstable read is no evidence)`,
      );
    }
    if (ev.readings.length === 0) {
      o.details.push(
        `probe ${t.probe?.name}: no probed session gave a stable read around a successful call`,
      );
      return;
    }
    const changed = ev.readings.filter((r) => r.changed);
    o.facts.probe_changed = changed.length > 0;
    if (changed.length === 0) return;
    const probedAlone = leftStateAlone(cmp, defn, t.probed ?? []);
    if (!probedAlone || !leftStateAlone(cmp, defn, t.once)) {
      o.details.push(
        `probe ${t.probe?.name} answered differently after the call, and observed state changed too`,
      );
      return;
    }
    const first = changed[0]!;
    o.details.unshift(
      `unknown: state may live in process memory: a read after the call answered differently with no observed state change (probe ${t.probe?.name}, probed run ${first.run}: ${
        JSON.stringify(responsePreview(first.before))
      } before, ${JSON.stringify(responsePreview(first.after))} after)`,
    );
    if (o.behaviour === "holds") {
      o.behaviour = "unknown";
      o.blockers.unshift("UNOBSERVED_STATE");
    } else if (!o.blockers.includes("UNOBSERVED_STATE")) {
      o.blockers.push("UNOBSERVED_STATE");
    }
  },
};
