/**
 * Declared contracts, parsed from the raw `tools/list` text. Pure.
 *
 * Each behavioural hint is one of four states. Absent is never false, and
 * the specification's defaults are never applied.
 *
 * @module
 */
import { readJson } from "./json_reader.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** The four hints MCP defines, in report order. */
export const HINT_NAMES = [
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
] as const;

/** A hint's name. */
export type HintName = typeof HINT_NAMES[number];

/** The state of one declared hint. */
export type HintState = "TRUE" | "FALSE" | "ABSENT" | "MALFORMED";

/** What was wrong with a malformed hint. */
export type Malformation =
  | "string"
  | "number"
  | "null"
  | "list"
  | "object"
  | "duplicate_key"
  | "annotations_not_object";

/**
 * A tri-state (plus malformed) hint. It refuses boolean coercion: using it in
 * `if`, `!`, `==` or arithmetic throws `TypeError`, so absence can never
 * silently become false.
 */
export class Hint {
  readonly state: HintState;
  /** For MALFORMED: what kind of malformation, and the raw value. */
  readonly detail: string | null;

  constructor(state: HintState, detail: string | null = null) {
    this.state = state;
    this.detail = detail;
    Object.freeze(this);
  }

  /** True only for an explicit JSON `true`. */
  isTrue(): boolean {
    return this.state === "TRUE";
  }

  /** True only for an explicit JSON `false`. */
  isFalse(): boolean {
    return this.state === "FALSE";
  }

  [Symbol.toPrimitive](): never {
    throw new TypeError(
      "a Hint is not a boolean: compare its state (TRUE, FALSE, ABSENT, MALFORMED)",
    );
  }

  /** JSON form used in reports. */
  toJSON(): { state: HintState; detail: string | null } {
    return { state: this.state, detail: this.detail };
  }
}

/** The declared contract of one tool. */
export interface Contract {
  name: string;
  /** Which `tools/list` page (0-based) carried the tool, and its index there. */
  page: number;
  index: number;
  hints: Record<HintName, Hint>;
  hasOutputSchema: boolean;
  /** The tool object as read (last duplicate wins, like JSON.parse). */
  raw: Record<string, unknown>;
  /** Problems with the tool entry itself (not with hints). */
  problems: string[];
}

/** Result of reading all pages. */
export interface ParsedListing {
  contracts: Contract[];
  /** Problems with whole pages (invalid JSON, no tools array). */
  problems: string[];
}

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined
    ? String(v)
    : s.length > 80
    ? s.slice(0, 77) + "..."
    : s;
}

/** Judge one hint value as read from the wire. */
export function judgeHint(
  present: boolean,
  value: unknown,
  duplicated: number,
): Hint {
  if (duplicated > 1) {
    return new Hint(
      "MALFORMED",
      `duplicate_key: sent ${duplicated} times, last ${describe(value)}`,
    );
  }
  if (!present) return new Hint("ABSENT");
  if (value === true) return new Hint("TRUE");
  if (value === false) return new Hint("FALSE");
  let kind: Malformation;
  if (value === null) kind = "null";
  else if (typeof value === "string") kind = "string";
  else if (typeof value === "number") kind = "number";
  else if (Array.isArray(value)) kind = "list";
  else kind = "object";
  return new Hint("MALFORMED", `${kind}: ${describe(value)}`);
}

/**
 * Parse the raw text of each `tools/list` response frame into contracts.
 * One malformed tool never hides the others.
 *
 * @example
 * ```ts
 * const { contracts } = parseToolPages([
 *   '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{},"annotations":{"readOnlyHint":"true"}}]}}',
 * ]);
 * // contracts[0].hints.readOnlyHint.state === "MALFORMED"
 * ```
 */
export function parseToolPages(pageTexts: readonly string[]): ParsedListing {
  const contracts: Contract[] = [];
  const problems: string[] = [];
  pageTexts.forEach((text, page) => {
    let read;
    try {
      read = readJson(text);
    } catch (e) {
      problems.push(`page ${page}: ${(e as Error).message}`);
      return;
    }
    const dupCount = new Map<string, number>();
    const dupKeysAt = new Map<string, string[]>();
    for (const d of read.duplicates) {
      dupCount.set(`${d.pointer}\u0000${d.key}`, d.count);
      const at = dupKeysAt.get(d.pointer);
      if (at === undefined) dupKeysAt.set(d.pointer, [d.key]);
      else at.push(d.key);
    }
    const result = isPlainObject(read.value) ? read.value.result : undefined;
    const tools = isPlainObject(result) ? result.tools : undefined;
    if (!Array.isArray(tools)) {
      problems.push(`page ${page}: result.tools is not an array`);
      return;
    }
    tools.forEach((tool, index) => {
      const base = `/result/tools/${index}`;
      if (!isPlainObject(tool)) {
        problems.push(`page ${page}: tools[${index}] is not an object`);
        return;
      }
      const t = tool;
      const toolProblems: string[] = [];
      for (const key of dupKeysAt.get(base) ?? []) {
        toolProblems.push(`duplicate key ${JSON.stringify(key)}`);
      }
      const name = typeof t.name === "string"
        ? t.name
        : `<unnamed ${page}:${index}>`;
      if (typeof t.name !== "string") toolProblems.push("name is not a string");
      const ann = t.annotations;
      const hints = {} as Record<HintName, Hint>;
      const annPresent = "annotations" in t && ann !== undefined;
      const annIsObject = isPlainObject(ann);
      const annDup = dupCount.get(`${base}\u0000annotations`) ?? 0;
      for (const h of HINT_NAMES) {
        if (annDup > 1) {
          hints[h] = new Hint(
            "MALFORMED",
            `duplicate_key: annotations sent ${annDup} times`,
          );
        } else if (!annPresent) hints[h] = new Hint("ABSENT");
        else if (!annIsObject) {
          hints[h] = new Hint(
            "MALFORMED",
            `annotations_not_object: ${describe(ann)}`,
          );
        } else {
          const a = ann as Record<string, unknown>;
          hints[h] = judgeHint(
            Object.hasOwn(a, h),
            a[h],
            dupCount.get(`${base}/annotations\u0000${h}`) ?? 0,
          );
        }
      }
      contracts.push({
        name,
        page,
        index,
        hints,
        hasOutputSchema: Object.hasOwn(t, "outputSchema") &&
          t.outputSchema !== undefined,
        raw: t,
        problems: toolProblems,
      });
    });
  });
  return { contracts, problems };
}
