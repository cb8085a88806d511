/**
 * The stored form of a report (`verity.report/2`): the same evidence as
 * `verity.report/1` without repetitions. Pure.
 *
 * - **Snapshots as patches.** The seed state (the snapshot whose digest is
 *   `observations.definition.seedDigest`) is stored whole, once; every
 *   other snapshot is stored as a patch against it: per region of the
 *   snapshot, its category and columns, the records it has that the seed
 *   lacks or holds with another value (`put`), and the keys of the seed's
 *   records it no longer has (`drop`). A region the seed lacks is all
 *   `put`; a seed region the snapshot lacks is simply not listed. A session
 *   that changed one row of a million-row table is stored as that row.
 * - **Frames once.** Every distinct raw `tools/call` response text is stored
 *   once in `frames`, keyed by `sha256:` of its text; a session's
 *   `callResponses` lists those digests (or null), and so does the
 *   `toolsList` a session kept (a listing that differed from the first).
 *
 * {@linkcode unpackReport} turns the stored form back into the in-memory
 * report every renderer and the re-derivation read, and checks the
 * reconstruction: every frame's text must hash to its key; every patch
 * names a base that is stored whole. The snapshot digests are then
 * re-derived from the reconstructed snapshots by `verity report verify`, as
 * for `verity.report/1`, so a patch that does not rebuild its snapshot
 * exactly is refused.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Snapshot } from "../state/types.ts";
import {
  applyPatch,
  diffSnapshot,
  type SnapshotPatch,
} from "../state/patched.ts";
import { isPlainObject as isObject } from "../common/is_plain_object.ts";

/** The schema identifier of packed reports. */
export const PACKED_SCHEMA = "verity.report/2";

/**
 * The schema identifier of packed reports whose seed state is kept by
 * reference (`verity.report/2` otherwise): the seed snapshot's entry in
 * `snapshots` is a {@linkcode SeedReference}, not its records.
 */
export const SEEDREF_SCHEMA = "verity.report/3";

/**
 * The seed snapshot kept by reference: the definition (by digest: its toml
 * text and every seed's bytes) whose reset rebuilds it. The entry's key in
 * `snapshots` is the seed snapshot's digest, which the rebuilt snapshot
 * must hash to.
 */
export interface SeedReference {
  seedRef: {
    /** `provenance.definition.digest` of the definition that seeds it. */
    definition: string;
    /** The definition file as the run named it (`provenance.definition.file`). */
    file: string;
  };
}

/** Whether a stored snapshot entry is a {@linkcode SeedReference}. */
export function isSeedReference(v: unknown): v is SeedReference {
  return isObject(v) && Object.keys(v).join() === "seedRef" &&
    isObject(v.seedRef) && typeof v.seedRef.definition === "string" &&
    typeof v.seedRef.file === "string";
}

/** The seed reference a `verity.report/3` document holds, with its digest, or null. */
export function seedReferenceOf(
  stored: Record<string, unknown>,
): { digest: string; ref: SeedReference["seedRef"] } | null {
  if (!isObject(stored.snapshots)) return null;
  for (const [d, s] of Object.entries(stored.snapshots)) {
    if (isSeedReference(s)) return { digest: d, ref: s.seedRef };
  }
  return null;
}

/** `sha256:<hex>` of a text (how frames are keyed). */
export function frameDigest(text: string): string {
  return "sha256:" + createHash("sha256").update(text).digest("hex");
}

/** A session's stored form: `callResponses` as frame digests. */
type Packed = Record<string, unknown>;

/** Options of {@linkcode packReport}. */
export interface PackOptions {
  /**
   * Keep the seed snapshot by reference to this definition instead of its
   * records (`verity.report/3`): only for a seed every reset rebuilds
   * exactly from the definition (the caller decides). Ignored when the
   * report has no seed snapshot.
   */
  seedRef?: SeedReference["seedRef"] | null;
}

/**
 * The stored form of a `verity.report/1` report (see the module doc).
 * Returns a new object; the report's own objects are shared, not copied.
 * Pure.
 */
export function packReport(report: object, options: PackOptions = {}): Packed {
  const r = report as Record<string, unknown>;
  const obs = r.observations as { definition?: { seedDigest?: unknown } };
  const snaps = r.snapshots as Record<string, Snapshot>;
  const seed = obs?.definition?.seedDigest;
  const snapshots: Record<string, unknown> = {};
  const base = typeof seed === "string" && Object.hasOwn(snaps, seed)
    ? snaps[seed]!
    : null;
  const byRef = base !== null && options.seedRef ? options.seedRef : null;
  for (const [d, s] of Object.entries(snaps)) {
    if (d === seed && byRef !== null) snapshots[d] = { seedRef: byRef };
    else {
      snapshots[d] = base === null || d === seed
        ? s
        : diffSnapshot(seed as string, base, s);
    }
  }
  const frames: Record<string, string> = {};
  const keep = (t: string) => {
    const d = frameDigest(t);
    frames[d] = t;
    return d;
  };
  const sessions = (r.sessions as Record<string, unknown>[]).map((s) => ({
    ...s,
    callResponses: (s.callResponses as (string | null)[]).map((t) =>
      t === null ? null : keep(t)
    ),
    // A listing a session kept (it differed from the first) is stored once
    // however many sessions list it.
    ...(Array.isArray(s.toolsList)
      ? { toolsList: (s.toolsList as string[]).map(keep) }
      : {}),
  }));
  const out: Packed = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === "schema") {
      out[k] = byRef !== null ? SEEDREF_SCHEMA : PACKED_SCHEMA;
    } else if (k === "snapshots") out[k] = snapshots;
    else if (k === "sessions") {
      out.frames = frames;
      out[k] = sessions;
    } else out[k] = v;
  }
  return out;
}

/** One problem found while unpacking (a path into the stored report). */
export interface UnpackProblem {
  where: string;
  message: string;
}

/** Options of {@linkcode unpackReport}. */
export interface UnpackOptions {
  /**
   * `verity.report/3`: the seed snapshot rebuilt from the definition the
   * report names (its digest is re-derived like every other snapshot's).
   * Without it the snapshots cannot be rebuilt: a problem, unless
   * `snapshots` is `"skip"`.
   */
  seed?: Snapshot | null;
  /**
   * `"skip"`: leave `snapshots` as stored (for showing a report: the
   * renderers do not read them).
   */
  snapshots?: "rebuild" | "skip";
}

/**
 * The in-memory report (the `verity.report/1` shape, `schema` kept as
 * stored) from a `verity.report/2` or `/3` document, and every problem met
 * while rebuilding it. A snapshot whose patch cannot be applied is left
 * out (the re-derivation then names every digest that refers to it). Pure.
 */
export function unpackReport(
  stored: Record<string, unknown>,
  options: UnpackOptions = {},
): { report: Record<string, unknown>; problems: UnpackProblem[] } {
  const problems: UnpackProblem[] = [];
  const bad = (where: string, message: string) =>
    problems.push({ where, message });
  const frames = isObject(stored.frames) ? stored.frames : null;
  if (frames === null) bad("frames", "missing or not an object");
  else {
    for (const [d, t] of Object.entries(frames)) {
      if (typeof t !== "string") bad(`frames.${d}`, "not a string");
      else if (frameDigest(t) !== d) {
        bad(`frames.${d}`, `text hashes to ${frameDigest(t)}`);
      }
    }
  }
  const used = new Set<string>();
  /** The frame text `d` names, or `missing` (a problem at `where`). */
  const frame = <T>(d: unknown, where: string, missing: T) => {
    if (
      typeof d !== "string" || frames === null || !Object.hasOwn(frames, d)
    ) {
      bad(where, `names no stored frame: ${String(d).slice(0, 80)}`);
      return missing;
    }
    used.add(d);
    return frames[d];
  };
  const sessions = Array.isArray(stored.sessions)
    ? stored.sessions.map((s, i) => {
      if (!isObject(s) || !Array.isArray(s.callResponses)) return s;
      return {
        ...s,
        callResponses: s.callResponses.map((d, j) =>
          d === null
            ? null
            : frame(d, `sessions[${i}].callResponses[${j}]`, null)
        ),
        ...(Array.isArray(s.toolsList)
          ? {
            toolsList: s.toolsList.map((d, j) =>
              frame(d, `sessions[${i}].toolsList[${j}]`, "")
            ),
          }
          : {}),
      };
    })
    : stored.sessions;
  if (frames !== null) {
    for (const d of Object.keys(frames)) {
      if (!used.has(d)) bad(`frames.${d}`, "stored but named by no session");
    }
  }
  let snapshots: unknown = stored.snapshots;
  if (isObject(stored.snapshots) && options.snapshots !== "skip") {
    const src: Record<string, unknown> = { ...stored.snapshots };
    const refs = Object.entries(src).filter(([, s]) => isSeedReference(s));
    if (refs.length > 0 && stored.schema !== SEEDREF_SCHEMA) {
      bad("snapshots", `a seed reference in a ${String(stored.schema)} report`);
    } else if (refs.length > 1) {
      bad("snapshots", "more than one seed reference");
    } else if (refs.length === 0 && stored.schema === SEEDREF_SCHEMA) {
      bad("snapshots", `a ${SEEDREF_SCHEMA} report without a seed reference`);
    } else if (refs.length === 1) {
      const [d, r] = refs[0]! as [string, SeedReference];
      if (options.seed) src[d] = options.seed;
      else {
        bad(
          `snapshots.${d}`,
          `the seed state is kept by reference to definition ${r.seedRef.definition} (${r.seedRef.file}): not rebuilt`,
        );
        delete src[d];
      }
    }
    const out: Record<string, unknown> = {};
    for (const [d, s] of Object.entries(src)) {
      if (!isObject(s) || !Object.hasOwn(s, "base")) {
        out[d] = s;
        continue;
      }
      const keys = Object.keys(s).sort().join();
      const b = src[s.base as string];
      if (keys !== "base,problems,regions") {
        bad(`snapshots.${d}`, "a patch has exactly base, problems, regions");
      } else if (
        typeof s.base !== "string" || !isObject(b) || Object.hasOwn(b, "base")
      ) {
        bad(`snapshots.${d}`, "patch base is not a stored whole snapshot");
      } else if (!Array.isArray(s.regions) || !Array.isArray(s.problems)) {
        bad(`snapshots.${d}`, "patch regions or problems not a list");
      } else {
        try {
          out[d] = applyPatch(
            b as unknown as Snapshot,
            s as unknown as SnapshotPatch,
          );
        } catch (e) {
          bad(`snapshots.${d}`, `cannot apply patch: ${(e as Error).message}`);
        }
      }
    }
    snapshots = out;
  }
  const report: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(stored)) {
    if (k === "frames") continue;
    report[k] = k === "sessions" ? sessions : k === "snapshots" ? snapshots : v;
  }
  return { report, problems };
}

const json = (v: unknown) => JSON.stringify(v) ?? "null";

/** `items` one a line inside `open` and `close` (`open + close` when none). */
function lines(items: string[], open = "[", close = "]"): string {
  return items.length
    ? `${open}\n${items.join(",\n")}\n${close}`
    : open + close;
}

/** `"key":value` for each member of `o` that JSON keeps, the value as `f` writes it. */
function members(
  o: Record<string, unknown>,
  f: (k: string, v: unknown) => string = (_, v) => json(v),
): string[] {
  return Object.entries(o).filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${f(k, v)}`);
}

/** A snapshot or patch as JSON text: one line per region and per record. */
function snapshotText(s: Record<string, unknown>): string {
  if (!Array.isArray(s.regions)) return json(s);
  const region = (r: Record<string, unknown>) =>
    `{${
      members(r, (k, v) =>
        (k === "records" || k === "put") && Array.isArray(v)
          ? lines(v.map(json))
          : json(v)).join(",")
    }}`;
  return `{${
    members(s, (k, v) =>
      k === "regions" ? lines((v as typeof s[]).map(region)) : json(v)).join(
        ",",
      )
  }}`;
}

/**
 * The stored report as JSON text, in key order of the object: one line
 * per top-level key, session, frame, verdict and snapshot record. Pure.
 */
export function reportText(packed: Record<string, unknown>): string {
  const top = (items: string[]) =>
    `{${items.map((i) => `\n${i}`).join(",")}\n}`;
  return top(
    members(
      packed,
      (k, v) =>
        k === "snapshots" && isObject(v)
          ? top(members(v, (_, x) => snapshotText(x as typeof v)))
          : Array.isArray(v)
          ? lines(v.map(json))
          : isObject(v)
          ? lines(members(v), "{", "}")
          : json(v),
    ),
  ) + "\n";
}

/**
 * The in-memory report from a parsed report file of either schema
 * (`verity.report/1` as it is, `verity.report/2` unpacked), or the first
 * problem met rebuilding it. Pure.
 */
export function openReport(
  stored: unknown,
): { report: Record<string, unknown> } | { problem: string } {
  if (!isObject(stored)) return { problem: "not a JSON object" };
  if (stored.schema !== PACKED_SCHEMA && stored.schema !== SEEDREF_SCHEMA) {
    return { report: stored };
  }
  // A seed kept by reference is not rebuilt to show a report: the
  // renderers read the observations, verdicts and effects, not snapshots.
  const { report, problems } = unpackReport(stored, {
    snapshots: stored.schema === SEEDREF_SCHEMA ? "skip" : "rebuild",
  });
  if (problems.length > 0) {
    const p = problems[0]!;
    return {
      problem: `${p.where}: ${p.message}${
        problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""
      }`,
    };
  }
  return { report };
}
