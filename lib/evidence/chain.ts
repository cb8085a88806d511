/**
 * The ledger's SHA-256 hash chain: building blocks and verifying a chain
 * against a head kept elsewhere. Pure.
 *
 * A block is `{index, prev_hash, type, record, hash}` with
 * `hash = "sha256:" + hex(SHA-256(prev_hash + canonicalJson({type, record})))`
 * (UTF-8), the first `prev_hash` being {@linkcode GENESIS}. This is
 * mcp-evidence-validator's construction, so its 0.2/0.3 ledgers verify here
 * and verity's verify there (apart from the `ledger` name field).
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  canonicalEnd,
  canonicalJson,
  DuplicateKeyError,
  parseEvidenceJson,
} from "./canonical.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** Each digest starts from a copy of this empty hash (a few percent cheaper than createHash). */
const SHA256 = createHash("sha256");

/** The `prev_hash` of block 0: `sha256:` and 64 zeros. */
export const GENESIS: string = "sha256:" + "0".repeat(64);

/** The `ledger` field of a verity ledger. */
export const LEDGER_NAME = "verity";
/** The `version` field of a verity ledger. */
export const LEDGER_VERSION = "1";

/** Ledger formats verify accepts: name → versions. */
export const ACCEPTED_FORMATS: Readonly<Record<string, readonly string[]>> = {
  [LEDGER_NAME]: [LEDGER_VERSION],
  "mcp-evidence-validator": ["0.2", "0.3"],
};

/** The first line of a verity ledger that holds blocks (each on a line of its own after it). */
export const HEADER_LINE =
  `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[`;
/** The one line of an empty verity ledger. */
export const EMPTY_LINE = `${HEADER_LINE}]}`;

/** One block of the chain. */
export interface Block {
  index: number;
  prev_hash: string;
  type: string;
  record: unknown;
  hash: string;
}

/** A record to append. */
export interface Entry {
  type: string;
  record: unknown;
}

/** What a verification found wrong. */
export interface LedgerProblem {
  /** The block's position, or null for the ledger as a whole (format, head). */
  index: number | null;
  kind: "index" | "prev_hash" | "hash" | "head" | "format";
  message: string;
}

/** The outcome of {@linkcode verifyLedger}. */
export interface LedgerVerification {
  ok: boolean;
  /** How many blocks the ledger holds. */
  blocks: number;
  problems: LedgerProblem[];
  /** The head the chain replays to from genesis, or null when a block could not be replayed. */
  head: string | null;
  /** `ledger` and `version` fields as found. */
  format: { ledger: unknown; version: unknown };
  /** Count of blocks per `type`. */
  types: Record<string, number>;
}

/**
 * The canonical body a block hash covers: `canonicalJson({type, record})`.
 * Throws `TypeError` when the record has no canonical form.
 */
export function blockBody(type: string, record: unknown): string {
  return `{"record":${canonicalJson(record)},"type":${canonicalJson(type)}}`;
}

/** `sha256:` + hex SHA-256 of `prev + body` (UTF-8). */
export function chainHash(prev: string, body: string): string {
  return "sha256:" + SHA256.copy().update(prev + body).digest("hex");
}

/**
 * Build the blocks that extend a chain whose head is `head` and which
 * already holds `start` blocks, with each block's file line.
 * Throws `TypeError` for an empty type or a record with no canonical form.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const { blocks, head } = chainBlocks(GENESIS, 0, [{ type: "report", record: {} }]);
 * assert.equal(blocks[0]!.hash, head);
 * ```
 */
export function chainBlocks(
  head: string,
  start: number,
  entries: readonly Entry[],
): { blocks: Block[]; lines: string[]; head: string } {
  const blocks: Block[] = [];
  const lines: string[] = [];
  let prev = head;
  for (const [i, { type, record }] of entries.entries()) {
    if (typeof type !== "string" || type === "") {
      throw new TypeError(
        `a block type must be a non-empty string, got ${JSON.stringify(type)}`,
      );
    }
    if (record === undefined) {
      throw new TypeError(`block ${start + i} (${type}) has no record`);
    }
    const rec = canonicalJson(record);
    const typ = canonicalJson(type);
    const hash = chainHash(prev, `{"record":${rec},"type":${typ}}`);
    const index = start + i;
    blocks.push({ index, prev_hash: prev, type, record, hash });
    lines.push(
      `{"index":${index},"prev_hash":"${prev}","type":${typ},"record":${rec},"hash":"${hash}"}`,
    );
    prev = hash;
  }
  return { blocks, lines, head: prev };
}

/** The text of a verity ledger file: one block per line, records in canonical form. */
export function ledgerText(lines: readonly string[]): string {
  return lines.length === 0
    ? `${EMPTY_LINE}\n`
    : `${HEADER_LINE}\n${lines.join(",\n")}\n]}\n`;
}

/** Printable ASCII but the backslash: no escape, surrogate or control character. */
const PLAIN = /^[\x20-\x5b\x5d-\x7e]*$/;

function short(h: unknown): string {
  return typeof h === "string" && h.length > 23
    ? h.slice(0, 23) + "…"
    : JSON.stringify(h) ?? String(h);
}

/**
 * The problem of a chain that replays to `head`, not `expectedHead`; `at`
 * is the last block whose published hash is the expected head, if any.
 */
function headProblem(
  head: string,
  expectedHead: string,
  at: number | undefined,
  blocks: number,
): LedgerProblem {
  let why =
    "no block carries the expected head: blocks were removed, or the chain was rewritten";
  if (at !== undefined && at < blocks - 1) {
    why = `the expected head is block ${at}'s published hash: ${
      blocks - 1 - at
    } block(s) were added after it`;
  } else if (at !== undefined) {
    why =
      "the expected head is the last block's published hash, but the chain does not replay to it: an earlier block was changed";
  } else if (expectedHead === GENESIS) {
    why = "the expected head is genesis (an empty ledger)";
  }
  return {
    index: null,
    kind: "head",
    message:
      `the chain replays to ${head}, expected head ${expectedHead}: ${why}`,
  };
}

const BLOCK_KEYS = new Set(["index", "prev_hash", "type", "record", "hash"]);

/**
 * The chain checks of one block after another: fed each block in order
 * ({@linkcode ChainCheck.add}), then asked for the head
 * ({@linkcode ChainCheck.verification}), so a ledger file read a line at a time
 * gets exactly {@linkcode verifyLedger}'s problems in bounded memory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const { blocks, head } = chainBlocks(GENESIS, 0, [{ type: "report", record: {} }]);
 * const check = new ChainCheck(head);
 * for (const b of blocks) check.add(b);
 * const v = check.verification({ ledger: "verity", version: "1" });
 * assert.deepEqual([v.ok, v.blocks, v.head], [true, 1, head]);
 * ```
 */
export class ChainCheck {
  /** Problems found so far. */
  readonly problems: LedgerProblem[] = [];
  /** Count of blocks per `type` so far. */
  readonly types: Record<string, number> = {};
  #count = 0;
  /** Replayed from genesis, for the head; null after a malformed block. */
  #strict: string | null = GENESIS;
  /** Resynchronised on each published hash, so one edit is one problem. */
  #local: string | null = GENESIS;
  readonly #expectedHead: string | null;
  /** The last block whose published hash is the expected head. */
  #expectedAt: number | undefined = undefined;

  /** `expectedHead`: the head kept elsewhere (null: the chain is checked against itself only). */
  constructor(expectedHead: string | null) {
    this.#expectedHead = expectedHead;
  }

  /** Check the next block. */
  add(b: unknown): void {
    const i = this.#count++;
    const problems = this.problems;
    if (!isPlainObject(b)) {
      problems.push({
        index: i,
        kind: "format",
        message: `block ${i} is not an object`,
      });
      this.#strict = this.#local = null;
      return;
    }
    const bad: string[] = [];
    for (const k in b) {
      if (!BLOCK_KEYS.has(k)) bad.push(`unexpected key ${JSON.stringify(k)}`);
    }
    if (typeof b.type !== "string") bad.push("type is not a string");
    if (b.record === undefined) bad.push("record is missing");
    if (typeof b.hash !== "string") bad.push("hash is not a string");
    if (typeof b.prev_hash !== "string") bad.push("prev_hash is not a string");
    const numeric = typeof b.index === "number" || typeof b.index === "bigint";
    if (!numeric) bad.push("index is not a number");
    if (typeof b.type === "string") {
      this.types[b.type] = (this.types[b.type] ?? 0) + 1;
    }
    if (b.hash === this.#expectedHead) this.#expectedAt = i;
    if (numeric && b.index !== i) {
      problems.push({
        index: i,
        kind: "index",
        message: `block ${i}: published index ${
          String(b.index)
        }, position ${i}`,
      });
    }
    const local = this.#local;
    if (
      local !== null && typeof b.prev_hash === "string" && b.prev_hash !== local
    ) {
      problems.push({
        index: i,
        kind: "prev_hash",
        message: `block ${i}: published prev_hash ${
          short(b.prev_hash)
        } is not ${i === 0 ? "genesis" : `block ${i - 1}'s hash`} ${
          short(local)
        }`,
      });
    }
    let body: string | null = null;
    if (typeof b.type === "string" && b.record !== undefined) {
      try {
        body = blockBody(b.type, b.record);
      } catch (e) {
        bad.push(`record has no canonical form (${(e as Error).message})`);
      }
    }
    if (bad.length > 0 || body === null) {
      problems.push({
        index: i,
        kind: "format",
        message: `block ${i}: ${bad.join("; ")}`,
      });
      this.#strict = null;
      this.#local = typeof b.hash === "string" ? b.hash : null;
      return;
    }
    const h = chainHash(local ?? (b.prev_hash as string), body);
    if (h !== b.hash) {
      problems.push({
        index: i,
        kind: "hash",
        message: `block ${i}: hash ${
          short(b.hash)
        } does not match its content (recomputed ${
          short(h)
        }): its type or record was changed`,
      });
    }
    const strict = this.#strict;
    if (strict !== null) {
      this.#strict = strict === (local ?? b.prev_hash)
        ? h
        : chainHash(strict, body);
    }
    this.#local = b.hash as string;
  }

  /**
   * Check the next block from its line in verity's layout (without the
   * comma) when that line is exactly the one `chainBlocks` writes for it:
   * this position, the last block's hash, printable ASCII without a
   * backslash, a record canonical as it stands ({@linkcode canonicalEnd},
   * no parsing), the hash of what it says. Returns its type and record
   * text, or null, having checked nothing, for any other line: the caller
   * parses it and {@linkcode ChainCheck.add}s it, which names its problems.
   */
  addLine(line: string): { type: string; record: string } | null {
    const local = this.#local;
    if (local === null) return null;
    const i = this.#count;
    // The index read digit by digit: a number made a string per line would
    // fill V8's number-string cache, whose strings outlive each scavenge.
    let c = 9;
    let index = 0;
    for (; c < 25; c++) {
      const d = line.charCodeAt(c) - 48;
      if (!(d >= 0 && d <= 9)) break;
      index = index * 10 + d;
    }
    const p = c + 14; // where prev_hash starts
    const ts = p + local.length + 10; // where the type starts
    // Compared as slices: a sliced string is flat, a concatenation is not.
    if (
      index !== i || c === 9 || (line.charCodeAt(9) === 48 && c > 10) ||
      line.slice(0, 9) !== '{"index":' ||
      line.slice(c, p) !== ',"prev_hash":"' ||
      line.slice(p, ts - 10) !== local ||
      line.slice(ts - 10, ts) !== '","type":"'
    ) return null;
    const te = line.indexOf('"', ts);
    const re = te > 0 && line.startsWith('","record":', te)
      ? canonicalEnd(line, te + 11)
      : -1;
    const plain = re > 0 && PLAIN.test(line.slice(ts, re));
    // A match keeps its subject (and so the whole read) as RegExp's last
    // match, past every young collection: match "" instead.
    PLAIN.test("");
    if (!plain || line.length !== re + 82) return null;
    const type = line.slice(ts, te);
    const record = line.slice(te + 11, re);
    const body = `{"record":${record},"type":"${type}"}`;
    const hex = SHA256.copy().update(local + body).digest("hex");
    // A new string, not a slice: a slice would keep the whole read alive.
    const h = "sha256:" + hex;
    if (
      line.slice(re, re + 9) !== ',"hash":"' || line.slice(re + 9, -2) !== h ||
      !line.endsWith('"}')
    ) return null;
    this.#count++;
    this.types[type] = (this.types[type] ?? 0) + 1;
    if (h === this.#expectedHead) this.#expectedAt = i;
    const strict = this.#strict;
    if (strict !== null) {
      this.#strict = strict === local ? h : chainHash(strict, body);
    }
    this.#local = h;
    return { type, record };
  }

  /**
   * The verification of the blocks added, for a ledger of `format`: the
   * head the chain replays to from genesis (null after a malformed block)
   * and every problem, with the `head` problem when it is not the expected
   * head (none when that is null).
   */
  verification(format: LedgerVerification["format"]): LedgerVerification {
    const strict = this.#strict;
    const expectedHead = this.#expectedHead;
    const problems = this.problems;
    if (expectedHead !== null && strict === null) {
      problems.push({
        index: null,
        kind: "head",
        message:
          `the chain cannot be replayed to a head (a malformed block); expected head ${expectedHead}`,
      });
    } else if (expectedHead !== null && strict !== expectedHead) {
      problems.push(
        headProblem(strict!, expectedHead, this.#expectedAt, this.#count),
      );
    }
    const ok = problems.length === 0;
    const { types } = this;
    return { ok, blocks: this.#count, head: strict, problems, format, types };
  }
}

/** The verification of a ledger whose blocks could not be walked. */
function refusedLedger(
  problems: LedgerProblem[],
  format: LedgerVerification["format"] = { ledger: null, version: null },
): LedgerVerification {
  return { ok: false, blocks: 0, problems, head: null, format, types: {} };
}

/**
 * Walk every block of a parsed ledger and compare the head it reaches with
 * `expectedHead` (null: the chain against itself only), reporting every
 * problem:
 * - `index`: a block's published index is not its position;
 * - `prev_hash`: a block's published `prev_hash` is not the previous block's hash;
 * - `hash`: a block's hash is not the hash of the previous hash and its body
 *   (its type or record changed);
 * - `head`: the head the chain replays to from genesis is not the expected
 *   head (a replayed edit, a dropped or added block);
 * - `format`: not a ledger, an unknown format, a malformed block.
 *
 * Local checks resynchronise on each block's published hash, so one edited
 * record is one `hash` problem (plus `head`), not a cascade. Parse the file
 * with `parseEvidenceJson(text, { numbers: "python" })` so that ledgers
 * written by Python verify exactly and duplicated keys are refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(verifyLedger({ ledger: "verity", version: "1", blocks: [] }, GENESIS).ok, true);
 * ```
 */
export function verifyLedger(
  ledger: unknown,
  expectedHead: string | null,
): LedgerVerification {
  const check = new ChainCheck(expectedHead);
  const problem = (message: string) =>
    check.problems.push({ index: null, kind: "format", message });
  if (!isPlainObject(ledger)) {
    problem("not a ledger: expected a JSON object with a blocks array");
    return refusedLedger(check.problems);
  }
  const format = { ledger: ledger.ledger, version: ledger.version };
  const accepted = typeof ledger.ledger === "string" &&
      Object.hasOwn(ACCEPTED_FORMATS, ledger.ledger)
    ? ACCEPTED_FORMATS[ledger.ledger]
    : undefined;
  if (!accepted) {
    problem(
      `unknown ledger ${JSON.stringify(ledger.ledger) ?? "(none)"} (accepted: ${
        Object.keys(ACCEPTED_FORMATS).join(", ")
      })`,
    );
  } else if (!accepted.includes(ledger.version as string)) {
    problem(
      `unsupported ${ledger.ledger} ledger version ${
        JSON.stringify(ledger.version) ?? "(none)"
      } (accepted: ${accepted.join(", ")})`,
    );
  }
  for (const k of Object.keys(ledger)) {
    if (k !== "ledger" && k !== "version" && k !== "blocks") {
      problem(
        `unexpected top-level key ${
          JSON.stringify(k)
        } (a ledger holds only ledger, version and blocks; no hash covers anything else)`,
      );
    }
  }
  if (!Array.isArray(ledger.blocks)) {
    problem("blocks is not an array");
    return refusedLedger(check.problems, format);
  }
  for (const b of ledger.blocks) check.add(b);
  return check.verification(format);
}

/**
 * Verify a ledger from its text: {@linkcode verifyLedger} over the text
 * parsed strictly, numbers as Python reads them (every problem reported; a
 * duplicated key anywhere is a `format` problem). Throws `SyntaxError`
 * when the text is not JSON.
 */
export function verifyLedgerText(
  text: string,
  expectedHead: string | null,
): LedgerVerification {
  let parsed: unknown;
  try {
    parsed = parseEvidenceJson(text, { numbers: "python" });
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
    return refusedLedger([{
      index: null,
      kind: "format",
      message:
        `${e.message}: refused, since readers that keep the first or the last of two keys would see different ledgers`,
    }]);
  }
  return verifyLedger(parsed, expectedHead);
}

const RECIPE_KEY =
  /"contract_recipe"\s*:\s*"((?:[^"\\]|\\.)*)"|"contract_recipes"\s*:\s*\[([^\]]*)\]/g;

/**
 * Every contract recipe a ledger's records state (`contract_recipe`,
 * `contract_recipes`), sorted, read from its text: a key pattern cannot
 * match inside a JSON string (quotes there are escaped).
 */
export function ledgerRecipesText(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(RECIPE_KEY)) {
    try {
      const list = m[1] !== undefined
        ? [JSON.parse(`"${m[1]}"`)]
        : JSON.parse(`[${m[2] ?? ""}]`) as unknown[];
      for (const r of list) if (typeof r === "string") found.add(r);
    } catch {
      // not a string or a list of strings: not a recipe statement
    }
  }
  return [...found].sort();
}
