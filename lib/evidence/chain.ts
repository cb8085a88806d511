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
  canonicalJson,
  DuplicateKeyError,
  parseEvidenceJson,
} from "./canonical.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/**
 * A SHA-256 hash with nothing hashed yet: each digest starts from a copy of
 * it, the cheapest way node:crypto gives a fresh SHA-256 here (a few
 * percent less CPU per digest than a createHash call).
 */
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

/**
 * `sha256:` + hex SHA-256 of `prev + body`, the body given as text or as
 * its UTF-8 bytes.
 */
export function chainHash(prev: string, body: string | Uint8Array): string {
  return "sha256:" +
    SHA256.copy().update(prev).update(body).digest("hex");
}

/**
 * Build the blocks that extend a chain whose head is `head` and which
 * already holds `start` blocks, with each block's file line.
 * Throws `TypeError` for an empty type or a record with no canonical form.
 */
export function chainBlocks(
  head: string,
  start: number,
  entries: readonly Entry[],
): { blocks: Block[]; lines: string[]; head: string } {
  const blocks: Block[] = [];
  const lines: string[] = [];
  let prev = head;
  for (let i = 0; i < entries.length; i++) {
    const { type, record } = entries[i]!;
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

/**
 * The text of a verity ledger file: one block per line, records in canonical
 * form (so reading the file back gives the same canonical bodies).
 */
export function ledgerText(lines: readonly string[]): string {
  if (lines.length === 0) {
    return `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[]}\n`;
  }
  return `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[\n${
    lines.join(",\n")
  }\n]}\n`;
}

/** The file line of an existing block (its record re-serialized canonically). */
export function blockLine(b: Block): string {
  return `{"index":${b.index},"prev_hash":${
    canonicalJson(b.prev_hash)
  },"type":${canonicalJson(b.type)},"record":${
    canonicalJson(b.record)
  },"hash":${canonicalJson(b.hash)}}`;
}

const LEDGER_KEYS = new Set(["ledger", "version", "blocks"]);
const BLOCK_KEYS = new Set(["index", "prev_hash", "type", "record", "hash"]);

function short(h: unknown): string {
  return typeof h === "string" && h.length > 23
    ? h.slice(0, 23) + "…"
    : JSON.stringify(h) ?? String(h);
}

function indexProblem(i: number, published: unknown): LedgerProblem {
  return {
    index: i,
    kind: "index",
    message: `block ${i}: published index ${String(published)}, position ${i}`,
  };
}

function prevProblem(
  i: number,
  published: string,
  local: string,
): LedgerProblem {
  return {
    index: i,
    kind: "prev_hash",
    message: `block ${i}: published prev_hash ${short(published)} is not ${
      i === 0 ? "genesis" : `block ${i - 1}'s hash`
    } ${short(local)}`,
  };
}

function hashProblem(i: number, published: unknown, h: string): LedgerProblem {
  return {
    index: i,
    kind: "hash",
    message: `block ${i}: hash ${
      short(published)
    } does not match its content (recomputed ${
      short(h)
    }): its type or record was changed`,
  };
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
  let why: string;
  if (at !== undefined && at < blocks - 1) {
    why = `the expected head is block ${at}'s published hash: ${
      blocks - 1 - at
    } block(s) were added after it`;
  } else if (at !== undefined) {
    why =
      "the expected head is the last block's published hash, but the chain does not replay to it: an earlier block was changed";
  } else if (expectedHead === GENESIS) {
    why = "the expected head is genesis (an empty ledger)";
  } else {
    why =
      "no block carries the expected head: blocks were removed, or the chain was rewritten";
  }
  return {
    index: null,
    kind: "head",
    message:
      `the chain replays to ${head}, expected head ${expectedHead}: ${why}`,
  };
}

/** A body given after `prevBytes` bytes of prev_hash (see {@linkcode ChainCheck.add}), alone. */
function bodyAlone(
  body: string | Uint8Array,
  prevBytes: number,
): string | Uint8Array {
  return prevBytes > 0 ? (body as Uint8Array).subarray(prevBytes) : body;
}

/**
 * The chain checks of one block after another, as {@linkcode verifyLedger}
 * makes them: fed each block in order ({@linkcode ChainCheck.add}), then
 * asked for the head ({@linkcode ChainCheck.finish}). The line walk of a
 * ledger file (`ledger.ts`) feeds it a block at a time, so a ledger of any
 * size is checked in bounded memory with exactly verifyLedger's problems.
 * Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const { blocks, head } = chainBlocks(GENESIS, 0, [{ type: "report", record: {} }]);
 * const check = new ChainCheck(head);
 * for (const b of blocks) check.add(b);
 * assert.deepEqual(check.finish(), { blocks: 1, head, problems: [] });
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
  /** Resynchronised on each published hash. */
  #local: string | null = GENESIS;
  readonly #expectedHead: string | null;
  /** The last block whose published hash is the expected head. */
  #expectedAt: number | undefined = undefined;

  /**
   * `expectedHead`: the head kept elsewhere that {@linkcode ChainCheck.finish}
   * compares with (null: the chain is checked against itself only).
   */
  constructor(expectedHead: string | null) {
    this.#expectedHead = expectedHead;
  }

  /**
   * Check the next block. `body`, when given, is its
   * {@linkcode blockBody} already made, as text or as its UTF-8 bytes (a
   * caller that holds the block's canonical line saves making it again);
   * it must be that of `b.type` and `b.record`, and is not kept. Bytes may
   * start with those of `b.prev_hash`, `prevBytes` of them: a block chained
   * to the one before is then hashed in one piece.
   */
  add(
    b: unknown,
    body: string | Uint8Array | null = null,
    prevBytes = 0,
  ): void {
    const i = this.#count++;
    const problems = this.problems;
    if (!isPlainObject(b)) {
      problems.push({
        index: i,
        kind: "format",
        message: `block ${i} is not an object`,
      });
      this.#strict = null;
      this.#local = null;
      return;
    }
    const bad: string[] = [];
    for (const k of Object.keys(b)) {
      if (!BLOCK_KEYS.has(k)) bad.push(`unexpected key ${JSON.stringify(k)}`);
    }
    if (typeof b.type !== "string") bad.push("type is not a string");
    if (b.record === undefined) bad.push("record is missing");
    if (typeof b.hash !== "string") bad.push("hash is not a string");
    if (typeof b.prev_hash !== "string") bad.push("prev_hash is not a string");
    if (typeof b.index !== "number" && typeof b.index !== "bigint") {
      bad.push("index is not a number");
    }
    const types = this.types;
    if (typeof b.type === "string") types[b.type] = (types[b.type] ?? 0) + 1;
    if (b.hash === this.#expectedHead) this.#expectedAt = i;
    if (
      b.index !== i &&
      (typeof b.index === "number" || typeof b.index === "bigint")
    ) {
      problems.push(indexProblem(i, b.index));
    }
    const local = this.#local;
    if (
      local !== null && typeof b.prev_hash === "string" && b.prev_hash !== local
    ) {
      problems.push(prevProblem(i, b.prev_hash, local));
    }
    if (body === null && typeof b.type === "string" && b.record !== undefined) {
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
    const prevForLocal = local ?? (b.prev_hash as string);
    // Bytes that start with prev_hash's are hashed whole when the block is
    // chained to its prev_hash, the body alone after anything else.
    const h = prevBytes > 0 && prevForLocal === b.prev_hash
      ? "sha256:" + SHA256.copy().update(body).digest("hex")
      : chainHash(prevForLocal, bodyAlone(body, prevBytes));
    if (h !== b.hash) problems.push(hashProblem(i, b.hash, h));
    const strict = this.#strict;
    if (strict !== null) {
      this.#strict = strict === prevForLocal
        ? h
        : chainHash(strict, bodyAlone(body, prevBytes));
    }
    this.#local = b.hash as string;
  }

  /**
   * The blocks checked, the head the chain replays to from genesis (null
   * after a malformed block) and every problem, with the `head` problem
   * when it is not the expected head (none when that is null).
   */
  finish(): { blocks: number; head: string | null; problems: LedgerProblem[] } {
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
    return { blocks: this.#count, head: strict, problems };
  }
}

/**
 * Walk every block of a parsed ledger and compare the head it reaches with
 * `expectedHead`, reporting every problem:
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
  expectedHead: string,
): LedgerVerification {
  const check = new ChainCheck(expectedHead);
  const out = (format: LedgerVerification["format"], blocks = false) => {
    const r = blocks
      ? check.finish()
      : { blocks: 0, head: null, problems: check.problems };
    return {
      ok: r.problems.length === 0,
      blocks: r.blocks,
      problems: r.problems,
      head: r.head,
      format,
      types: check.types,
    };
  };
  const problems = check.problems;
  if (!isPlainObject(ledger)) {
    problems.push({
      index: null,
      kind: "format",
      message: "not a ledger: expected a JSON object with a blocks array",
    });
    return out({ ledger: null, version: null });
  }
  const format = { ledger: ledger.ledger, version: ledger.version };
  const accepted = typeof ledger.ledger === "string" &&
      Object.hasOwn(ACCEPTED_FORMATS, ledger.ledger)
    ? ACCEPTED_FORMATS[ledger.ledger]
    : undefined;
  if (!accepted) {
    problems.push({
      index: null,
      kind: "format",
      message: `unknown ledger ${
        JSON.stringify(ledger.ledger) ?? "(none)"
      } (accepted: ${Object.keys(ACCEPTED_FORMATS).join(", ")})`,
    });
  } else if (!accepted.includes(ledger.version as string)) {
    problems.push({
      index: null,
      kind: "format",
      message: `unsupported ${ledger.ledger} ledger version ${
        JSON.stringify(ledger.version) ?? "(none)"
      } (accepted: ${accepted.join(", ")})`,
    });
  }
  for (const k of Object.keys(ledger)) {
    if (!LEDGER_KEYS.has(k)) {
      problems.push({
        index: null,
        kind: "format",
        message: `unexpected top-level key ${
          JSON.stringify(k)
        } (a ledger holds only ledger, version and blocks; no hash covers anything else)`,
      });
    }
  }
  const blocks = ledger.blocks;
  if (!Array.isArray(blocks)) {
    problems.push({
      index: null,
      kind: "format",
      message: "blocks is not an array",
    });
    return out(format);
  }
  for (const b of blocks) check.add(b);
  return out(format, true);
}

/** The first line of a verity ledger that holds blocks (each on a line of its own after it). */
export const HEADER_LINE =
  `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[`;
/** The one line of an empty verity ledger. */
export const EMPTY_LINE = `${HEADER_LINE}]}`;

/**
 * Verify a ledger from its text: {@linkcode verifyLedger} over the text
 * parsed strictly, numbers as Python reads them (every problem reported; a
 * duplicated key anywhere is a `format` problem). Throws `SyntaxError`
 * when the text is not JSON.
 */
export function verifyLedgerText(
  text: string,
  expectedHead: string,
): LedgerVerification {
  let parsed: unknown;
  try {
    parsed = parseEvidenceJson(text, { numbers: "python" });
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
    return {
      ok: false,
      blocks: 0,
      problems: [{
        index: null,
        kind: "format",
        message:
          `${e.message}: refused, since readers that keep the first or the last of two keys would see different ledgers`,
      }],
      head: null,
      format: { ledger: null, version: null },
      types: {},
    };
  }
  return verifyLedger(parsed, expectedHead);
}

/** Every contract recipe a ledger's records mention (`contract_recipe`, `contract_recipes`). */
export function ledgerRecipes(ledger: unknown): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (!isPlainObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (k === "contract_recipe" && typeof x === "string") found.add(x);
      else if (k === "contract_recipes" && Array.isArray(x)) {
        for (const r of x) if (typeof r === "string") found.add(r);
      }
      walk(x);
    }
  };
  if (isPlainObject(ledger) && Array.isArray(ledger.blocks)) {
    for (const b of ledger.blocks) if (isPlainObject(b)) walk(b.record);
  }
  return [...found].sort();
}

const RECIPE_KEY =
  /"contract_recipe"\s*:\s*"((?:[^"\\]|\\.)*)"|"contract_recipes"\s*:\s*\[([^\]]*)\]/g;

/**
 * {@linkcode ledgerRecipes} read straight from a ledger's text: a key
 * pattern cannot match inside a JSON string (quotes there are escaped).
 */
export function ledgerRecipesText(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(RECIPE_KEY)) {
    try {
      if (m[1] !== undefined) found.add(JSON.parse(`"${m[1]}"`) as string);
      else {
        const list = JSON.parse(`[${m[2] ?? ""}]`) as unknown[];
        for (const r of list) if (typeof r === "string") found.add(r);
      }
    } catch {
      // not a string or a list of strings: not a recipe statement
    }
  }
  return [...found].sort();
}
