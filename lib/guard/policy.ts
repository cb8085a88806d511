/**
 * The guard's policy file (`--policy P`, TOML like the definitions): what
 * `verity guard` does with a tool whose contract drifted or that was never
 * audited, and whether a hint the audit refuted is corrected in the listing
 * the client sees. Pure.
 *
 * ```toml
 * [guard]
 * drift = "refuse"       # "refuse" (the default) or "warn"
 * correct_hints = true   # the default
 * ```
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { DefinitionError } from "../errors.ts";

/** What the guard does beyond passing messages through. */
export interface GuardPolicy {
  /**
   * A drifted or un-audited tool: left out of `tools/list` and refused on
   * `tools/call` (`refuse`), or passed with a warning on stderr and in the
   * ledger (`warn`).
   */
  drift: "refuse" | "warn";
  /** A hint the audit refuted (a VIOLATION) is corrected in the listing. */
  correctHints: boolean;
}

/** The policy without a file. */
export const DEFAULT_POLICY: GuardPolicy = {
  drift: "refuse",
  correctHints: true,
};

/**
 * Parse a policy file's text. Throws {@linkcode DefinitionError} naming the
 * file and the key for invalid TOML, an unknown key or a wrong value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parsePolicy('[guard]\ndrift = "warn"\n', "p.toml"), { drift: "warn", correctHints: true });
 * assert.throws(() => parsePolicy('[guard]\ndrift = "allow"\n', "p.toml"), /guard\.drift: expected "refuse" or "warn"/);
 * ```
 */
export function parsePolicy(text: string, file: string): GuardPolicy {
  const fail = (key: string, msg: string): never => {
    throw new DefinitionError(file, key, msg);
  };
  const show = (v: unknown) =>
    typeof v === "object" && v !== null && !(v instanceof Date)
      ? "a table or an array"
      : JSON.stringify(v) ?? String(v);
  let doc: Record<string, unknown> = {};
  try {
    doc = parseToml(text);
  } catch (e) {
    const at = e instanceof TomlError
      ? ` at line ${e.line}, column ${e.column}`
      : "";
    fail("", `invalid TOML${at}: ${(e as Error).message.split("\n")[0]}`);
  }
  for (const k of Object.keys(doc)) {
    if (k !== "guard") fail(k, "unknown key (allowed here: guard)");
  }
  const g = doc.guard;
  if (typeof g !== "object" || g === null || Array.isArray(g)) {
    return fail("guard", "missing [guard] table");
  }
  const t = g as Record<string, unknown>;
  const policy = { ...DEFAULT_POLICY };
  for (const [k, v] of Object.entries(t)) {
    if (k === "drift") {
      if (v !== "refuse" && v !== "warn") {
        fail("guard.drift", `expected "refuse" or "warn", got ${show(v)}`);
      }
      policy.drift = v as GuardPolicy["drift"];
    } else if (k === "correct_hints") {
      if (typeof v !== "boolean") {
        fail("guard.correct_hints", `expected true or false, got ${show(v)}`);
      }
      policy.correctHints = v as boolean;
    } else {fail(
        `guard.${k}`,
        "unknown key (allowed here: drift, correct_hints)",
      );}
  }
  return policy;
}
