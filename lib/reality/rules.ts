/**
 * Reality rules: judge one tool call from its observed response. Pure: the
 * same tool declaration, arguments and response always give the same
 * verdict, so a saved report can be re-judged.
 *
 * Scored flags: disguised refusal, an error report returned as a success,
 * empty content, `structuredContent` invalid against `outputSchema`,
 * `structuredContent` missing when an `outputSchema` is declared. Notes (reported, never scored): echo mismatch,
 * error-like text in a success, an `outputSchema` that cannot be checked.
 * An honest `isError: true`, a JSON-RPC error or no answer is a failed call:
 * reported apart, never flagged.
 *
 * @module
 */
import { findRefusal, normalizeForMatch } from "./refusal.ts";
import { describeProblems, validateSchema } from "./schema_validate.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** A rule whose finding lowers the score. */
export type FlagRule =
  | "disguised_refusal"
  | "error_as_success"
  | "empty_content"
  | "output_schema_invalid"
  | "structured_content_missing";

/** A rule whose finding is reported but never scored. */
export type NoteRule =
  | "echo_mismatch"
  | "error_text"
  | "output_schema_unchecked";

/** One finding with its evidence. */
export interface RealityFinding<R extends string = FlagRule | NoteRule> {
  rule: R;
  /** One line a person can read. */
  message: string;
  /** The part of the response that shows it. */
  evidence?: unknown;
}

/** What came back from `tools/call`, as observed on the wire. */
export type RealityCallObservation =
  | { kind: "result"; result: unknown; ms: number }
  | { kind: "rpc_error"; error: unknown; ms: number }
  | { kind: "no_answer"; message: string; ms: number };

/** Why a call counts as failed (reported apart, not scored). */
export type FailureKind =
  | "is_error"
  | "rpc_error"
  | "no_answer"
  | "malformed_result";

/** The verdict on one call. */
export type CallVerdict =
  | { status: "passed"; flags: []; notes: RealityFinding<NoteRule>[] }
  | {
    status: "flagged";
    flags: RealityFinding<FlagRule>[];
    notes: RealityFinding<NoteRule>[];
  }
  | {
    status: "failed";
    failure: { kind: FailureKind; message: string };
    flags: [];
    notes: [];
  };

/** The declaration facts the rules need. */
export interface CallContext {
  /** The tool's `outputSchema` as listed, or `undefined` when none was declared. */
  outputSchema: unknown;
  /** The arguments sent. */
  arguments: Record<string, unknown>;
}

function clip(s: string, n = 160): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

/** The text blocks of a result's content, in order. */
function textBlocks(content: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const b of content) {
    if (isPlainObject(b) && b.type === "text" && typeof b.text === "string") {
      out.push(b.text);
    }
  }
  return out;
}

function nonEmptyString(v: unknown): boolean {
  return typeof v === "string" && v.trim() !== "";
}

/** Does a content block carry anything? */
function blockHasSubstance(b: unknown): boolean {
  if (!isPlainObject(b)) return false;
  switch (b.type) {
    case "text":
      return nonEmptyString(b.text);
    case "image":
    case "audio":
      return nonEmptyString(b.data);
    case "resource": {
      const r = b.resource;
      return isPlainObject(r) &&
        (nonEmptyString(r.text) || nonEmptyString(r.blob));
    }
    case "resource_link":
      return nonEmptyString(b.uri);
    default:
      // A block of a kind we do not know is still something returned.
      return Object.keys(b).length > 1;
  }
}

function structuredHasSubstance(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

/** Every string (and number) in a value, for echo matching. */
function leaves(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (typeof v === "number" || typeof v === "boolean") out.push(String(v));
  else if (Array.isArray(v)) v.forEach((x) => leaves(x, out));
  else if (isPlainObject(v)) Object.values(v).forEach((x) => leaves(x, out));
}

/** The string inputs the echo check looks for (at least 2 characters). */
export function echoInputs(args: Record<string, unknown>): string[] {
  const all: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      if (v.trim().length >= 2) all.push(v.trim());
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (isPlainObject(v)) Object.values(v).forEach(walk);
  };
  walk(args);
  return [...new Set(all)];
}

/** Everything a response says, as one normalised string. */
function responseHaystack(
  content: readonly unknown[],
  structured: unknown,
): string {
  const parts: string[] = [];
  for (const b of content) {
    if (!isPlainObject(b)) continue;
    leaves(
      b.type === "image" || b.type === "audio" ? { ...b, data: "" } : b,
      parts,
    );
  }
  leaves(structured, parts);
  return normalizeForMatch(parts.join("\n"));
}

/**
 * Signatures of an error report, anywhere in a success's text: an errno
 * code (`ENOENT`), an error class or "Error" right after the start of a
 * line or a `name: ` prefix and followed by `:` or `-` (`notes.txt: Error -
 * ENOENT`, `TypeError: x`), a Python traceback, a JavaScript stack frame.
 * Ordinary prose about errors ("no errors found", "the error rate") has
 * none of them.
 */
const ERROR_SIGNATURES: readonly [string, RegExp][] = [
  [
    "errno code",
    /\b(?:ENOENT|EACCES|EPERM|EISDIR|ENOTDIR|EEXIST|ENOTEMPTY|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EROFS|EMFILE|EBADF|ENOTFOUND|EADDRINUSE|ENAMETOOLONG)\b/,
  ],
  [
    "error line",
    /(?:^|\n)[ \t]*(?:[\w./\\~-]+:[ \t]*)?(?:Error|[A-Z][A-Za-z]*(?:Error|Exception)|Exception|Fatal error)[ \t]*(?::|-|\u2013)[ \t]/,
  ],
  ["traceback", /Traceback \(most recent call last\)/],
  ["stack frame", /\n[ \t]+at [^\n]*?[\w/.-]+\.(?:m?[jt]s|cjs):\d+:\d+/],
];

/** The first error signature in `text`, with an excerpt around it. */
export function findErrorSignature(
  text: string,
): { signature: string; excerpt: string } | null {
  for (const [signature, re] of ERROR_SIGNATURES) {
    const m = re.exec(text);
    if (!m) continue;
    const at = m.index + (m[0].startsWith("\n") ? 1 : 0);
    const start = Math.max(0, at - 20);
    return {
      signature,
      excerpt: (start > 0 ? "…" : "") +
        text.slice(start, at + 100).replace(/\s+/g, " ").trim(),
    };
  }
  return null;
}

const ERROR_OPENING =
  /^\s*(error|exception|traceback|fatal|failed to|failure)\b/i;

/**
 * Judge one call.
 *
 * @example
 * ```ts
 * const v = judgeCall(
 *   { outputSchema: undefined, arguments: { city: "Paris" } },
 *   { kind: "result", result: { content: [] }, ms: 3 },
 * );
 * // v.status === "flagged" && v.flags[0].rule === "empty_content"
 * ```
 */
export function judgeCall(
  ctx: CallContext,
  obs: RealityCallObservation,
): CallVerdict {
  const failed = (kind: FailureKind, message: string): CallVerdict => ({
    status: "failed",
    failure: { kind, message },
    flags: [],
    notes: [],
  });
  if (obs.kind === "rpc_error") {
    const e = obs.error;
    const msg = isPlainObject(e)
      ? `${e.code ?? "?"} ${typeof e.message === "string" ? e.message : ""}`
        .trim()
      : String(e);
    return failed("rpc_error", `JSON-RPC error ${clip(msg)}`);
  }
  if (obs.kind === "no_answer") return failed("no_answer", obs.message);
  const r = obs.result;
  if (!isPlainObject(r)) {
    return failed(
      "malformed_result",
      `result is not an object: ${clip(JSON.stringify(r) ?? String(r), 80)}`,
    );
  }
  if (r.isError !== undefined && typeof r.isError !== "boolean") {
    return failed(
      "malformed_result",
      `isError is not a boolean: ${clip(JSON.stringify(r.isError) ?? "", 40)}`,
    );
  }
  if (r.content !== undefined && !Array.isArray(r.content)) {
    return failed("malformed_result", "content is not an array");
  }
  const content: unknown[] = Array.isArray(r.content) ? r.content : [];
  const texts = textBlocks(content);
  if (r.isError === true) {
    const first = texts.find((t) => t.trim() !== "") ?? "(no text)";
    return failed("is_error", `isError: true: ${clip(first)}`);
  }

  const flags: RealityFinding<FlagRule>[] = [];
  const notes: RealityFinding<NoteRule>[] = [];

  // Disguised refusal.
  for (let i = 0; i < texts.length; i++) {
    const m = findRefusal(texts[i]!);
    if (m) {
      flags.push({
        rule: "disguised_refusal",
        message: `success that reads as a refusal: "${clip(m.excerpt, 100)}"`,
        evidence: { block: i, phrase: m.phrase, excerpt: m.excerpt },
      });
      break;
    }
  }

  // An error report returned as a success, anywhere in the text.
  if (!flags.some((f) => f.rule === "disguised_refusal")) {
    for (let i = 0; i < texts.length; i++) {
      const e = findErrorSignature(texts[i]!);
      if (e) {
        flags.push({
          rule: "error_as_success",
          message: `success that reports an error (${e.signature}): "${
            clip(e.excerpt, 100)
          }"`,
          evidence: { block: i, signature: e.signature, excerpt: e.excerpt },
        });
        break;
      }
    }
  }

  // Empty content on success.
  const structured = r.structuredContent;
  if (!content.some(blockHasSubstance) && !structuredHasSubstance(structured)) {
    const what = content.length === 0
      ? "content is empty"
      : `content has ${content.length} block(s) with nothing in them`;
    flags.push({
      rule: "empty_content",
      message:
        `success with nothing returned: ${what} and no structuredContent`,
      evidence: { content, structuredContent: structured ?? null },
    });
  }

  // Output schema.
  if (ctx.outputSchema !== undefined) {
    if (!isPlainObject(ctx.outputSchema)) {
      notes.push({
        rule: "output_schema_unchecked",
        message: "outputSchema is not an object; structuredContent not checked",
      });
    } else if (structured === undefined || structured === null) {
      flags.push({
        rule: "structured_content_missing",
        message:
          "outputSchema is declared but the result has no structuredContent",
      });
    } else {
      const v = validateSchema(ctx.outputSchema, structured);
      if (v.status === "invalid") {
        flags.push({
          rule: "output_schema_invalid",
          message: `structuredContent breaks outputSchema (${v.dialect}): ${
            describeProblems(v.problems)
          }`,
          evidence: { problems: v.problems, structuredContent: structured },
        });
      } else if (v.status === "unusable") {
        notes.push({
          rule: "output_schema_unchecked",
          message: `outputSchema not checked: ${v.reason}`,
        });
      }
    }
  }

  // Error-like text in a success (noted, not scored).
  const firstText = texts.find((t) => t.trim() !== "");
  if (
    firstText !== undefined && ERROR_OPENING.test(firstText) &&
    !flags.some((f) =>
      f.rule === "disguised_refusal" || f.rule === "error_as_success"
    )
  ) {
    notes.push({
      rule: "error_text",
      message: `success whose text opens like an error: "${
        clip(firstText, 80)
      }"`,
    });
  }

  // Echo mismatch (noted, not scored). A refusal already says why the
  // input is absent, so it gets no echo note.
  const inputs = echoInputs(ctx.arguments);
  const refused = flags.some((f) => f.rule === "disguised_refusal");
  if (
    !refused && inputs.length > 0 &&
    (content.some(blockHasSubstance) || structuredHasSubstance(structured))
  ) {
    const hay = responseHaystack(content, structured);
    const found = inputs.filter((s) => hay.includes(normalizeForMatch(s)));
    if (found.length === 0) {
      notes.push({
        rule: "echo_mismatch",
        message: `none of the string inputs appear in the response: ${
          inputs.map((s) => JSON.stringify(clip(s, 40))).join(", ")
        }`,
        evidence: { inputs },
      });
    }
  }

  if (flags.length > 0) return { status: "flagged", flags, notes };
  return { status: "passed", flags: [], notes };
}
