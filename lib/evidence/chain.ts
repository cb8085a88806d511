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
import { canonicalValueEnd } from "./canonical_text.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

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

/** `sha256:` + hex SHA-256 of `prev + body`. */
export function chainHash(prev: string, body: string): string {
  return "sha256:" +
    createHash("sha256").update(prev).update(body).digest("hex");
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
 * verifyLedger({ ledger: "verity", version: "1", blocks: [] }, GENESIS).ok; // true
 * ```
 */
export function verifyLedger(
  ledger: unknown,
  expectedHead: string,
): LedgerVerification {
  const problems: LedgerProblem[] = [];
  const types: Record<string, number> = {};
  const out = (
    blocks: number,
    head: string | null,
    format: LedgerVerification["format"],
  ) => ({
    ok: problems.length === 0,
    blocks,
    problems,
    head,
    format,
    types,
  });
  if (!isPlainObject(ledger)) {
    problems.push({
      index: null,
      kind: "format",
      message: "not a ledger: expected a JSON object with a blocks array",
    });
    return out(0, null, { ledger: null, version: null });
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
    return out(0, null, format);
  }
  let strict: string | null = GENESIS; // replay from genesis, for the head
  let local: string | null = GENESIS; // resynchronised on published hashes
  const published = new Map<string, number>();
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    if (!isPlainObject(b)) {
      problems.push({
        index: i,
        kind: "format",
        message: `block ${i} is not an object`,
      });
      strict = null;
      local = null;
      continue;
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
    if (typeof b.type === "string") types[b.type] = (types[b.type] ?? 0) + 1;
    if (typeof b.hash === "string") published.set(b.hash, i);
    if (
      b.index !== i &&
      (typeof b.index === "number" || typeof b.index === "bigint")
    ) {
      problems.push({
        index: i,
        kind: "index",
        message: `block ${i}: published index ${
          String(b.index)
        }, position ${i}`,
      });
    }
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
      strict = null;
      local = typeof b.hash === "string" ? b.hash : null;
      continue;
    }
    const prevForLocal = local ?? (b.prev_hash as string);
    const h = chainHash(prevForLocal, body);
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
    if (strict !== null) {
      strict = strict === prevForLocal ? h : chainHash(strict, body);
    }
    local = b.hash as string;
  }
  if (strict === null) {
    problems.push({
      index: null,
      kind: "head",
      message:
        `the chain cannot be replayed to a head (a malformed block); expected head ${expectedHead}`,
    });
  } else if (strict !== expectedHead) {
    const at = published.get(expectedHead);
    let why: string;
    if (at !== undefined && at < blocks.length - 1) {
      why = `the expected head is block ${at}'s published hash: ${
        blocks.length - 1 - at
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
    problems.push({
      index: null,
      kind: "head",
      message:
        `the chain replays to ${strict}, expected head ${expectedHead}: ${why}`,
    });
  }
  return out(blocks.length, strict, format);
}

const HEADER =
  `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[`;
const EMPTY = `${HEADER}]}\n`;

/** What {@linkcode walkVerityText} found in a ledger written in verity's own layout. */
export interface TextWalk {
  blocks: number;
  head: string;
  types: Record<string, number>;
  /** Offset in the text just after the last block line (before `\n]}\n`). */
  end: number;
}

/**
 * Walk a ledger in the exact layout verity writes (one canonical block per
 * line) straight from its text: each record's text is checked to be
 * canonical JSON in one pass and hashed as it stands, with no parsing into
 * values. Returns null for anything else (another layout, a non-canonical
 * record, a block whose index, prev_hash or hash does not chain): callers
 * then take the general path, which reports each problem.
 */
export function walkVerityText(text: string): TextWalk | null {
  if (text === EMPTY) {
    return { blocks: 0, head: GENESIS, types: {}, end: HEADER.length };
  }
  if (!text.startsWith(HEADER + "\n") || !text.endsWith("\n]}\n")) return null;
  const types: Record<string, number> = {};
  const stop = text.length - 4; // the "\n]}\n" tail
  let pos = HEADER.length + 1;
  let prev = GENESIS;
  let index = 0;
  while (true) {
    // {"index":N,"prev_hash":"<prev>","type":T,"record":R,"hash":"sha256:<hex>"}
    if (!text.startsWith('{"index":', pos)) return null;
    const digits = String(index);
    if (!text.startsWith(digits, pos + 9)) return null;
    const p = pos + 9 + digits.length;
    if (
      !text.startsWith(',"prev_hash":"', p) || !text.startsWith(prev, p + 14)
    ) return null;
    if (!text.startsWith('","type":', p + 85)) return null;
    const typeStart = p + 94;
    if (text.charCodeAt(typeStart) !== 0x22) return null;
    const typeEnd = canonicalValueEnd(text, typeStart);
    if (typeEnd < 0 || !text.startsWith(',"record":', typeEnd)) return null;
    const recStart = typeEnd + 10;
    const recEnd = canonicalValueEnd(text, recStart);
    if (recEnd < 0 || !text.startsWith(',"hash":"sha256:', recEnd)) return null;
    const hexStart = recEnd + 16;
    if (!text.startsWith('"}', hexStart + 64)) return null;
    const hex = text.slice(hexStart, hexStart + 64);
    const typeText = text.slice(typeStart, typeEnd);
    const h = createHash("sha256").update(
      prev + '{"record":' + text.slice(recStart, recEnd) + ',"type":' +
        typeText + "}",
    ).digest("hex");
    if (h !== hex) return null; // also proves the published hash is 64 lowercase hex digits
    const type = typeText.includes("\\")
      ? JSON.parse(typeText) as string
      : typeText.slice(1, -1);
    types[type] = (types[type] ?? 0) + 1;
    prev = "sha256:" + hex;
    index++;
    pos = hexStart + 66;
    if (pos === stop) return { blocks: index, head: prev, types, end: pos };
    if (!text.startsWith(",\n", pos)) return null;
    pos += 2;
  }
}

/**
 * Verify a ledger from its text: the fast walk for verity's own layout when
 * it reaches `expectedHead`, otherwise {@linkcode verifyLedger} over the
 * text parsed strictly, numbers as Python reads them (every problem
 * reported; a duplicated key anywhere is a `format` problem). The same answer
 * either way. Throws `SyntaxError` when the text is not JSON.
 */
export function verifyLedgerText(
  text: string,
  expectedHead: string,
): LedgerVerification {
  const w = walkVerityText(text);
  if (w !== null && w.head === expectedHead) {
    return {
      ok: true,
      blocks: w.blocks,
      problems: [],
      head: w.head,
      format: { ledger: LEDGER_NAME, version: LEDGER_VERSION },
      types: w.types,
    };
  }
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

/** One block as the line walker saw it: its type and the record's canonical text. */
export interface WalkedBlock {
  index: number;
  type: string;
  /** The record's text as it stands in the file (canonical JSON). */
  recordText: string;
}

/**
 * {@linkcode walkVerityText} one line at a time, for ledgers of any size
 * read as a stream: feed every line of the file (without its `\n`) to
 * {@linkcode VerityLineWalker.line}, then call
 * {@linkcode VerityLineWalker.end}. Any line that is not verity's exact
 * layout, or a block that does not chain, makes the walk fail (null), and
 * callers take the general path. Pure.
 *
 * @example
 * ```ts
 * const w = new VerityLineWalker();
 * for (const l of '{"ledger":"verity","version":"1","blocks":[]}\n'.split("\n")) w.line(l);
 * w.end()?.head; // GENESIS
 * ```
 */
export class VerityLineWalker {
  #state: "header" | "blocks" | "closed" | "done" | "failed" = "header";
  #prev = GENESIS;
  #index = 0;
  #types: Record<string, number> = {};
  #lastHadComma = true;
  /** Called for each block that chains (the record text is canonical). */
  onBlock: ((b: WalkedBlock) => void) | null = null;

  /** Feed the next line; false once the walk has failed. */
  line(l: string): boolean {
    switch (this.#state) {
      case "failed":
        return false;
      case "header":
        if (l === EMPTY.slice(0, -1)) this.#state = "closed";
        else if (l === HEADER) this.#state = "blocks";
        else return this.#fail();
        return true;
      case "blocks":
        if (l === "]}") {
          if (this.#index === 0 || this.#lastHadComma) return this.#fail();
          this.#state = "closed";
          return true;
        }
        if (!this.#lastHadComma) return this.#fail();
        return this.#block(l);
      case "closed":
        // The file ends with "\n": the last line is empty.
        if (l !== "") return this.#fail();
        this.#state = "done";
        return true;
      case "done":
        return this.#fail();
    }
  }

  /** The walk's result: null when the file is not verity's layout or does not chain. */
  end(): Omit<TextWalk, "end"> | null {
    if (this.#state !== "done") return null;
    return { blocks: this.#index, head: this.#prev, types: this.#types };
  }

  #fail(): false {
    this.#state = "failed";
    return false;
  }

  #block(l: string): boolean {
    // {"index":N,"prev_hash":"<prev>","type":T,"record":R,"hash":"sha256:<hex>"}[,]
    const comma = l.charCodeAt(l.length - 1) === 0x2c;
    this.#lastHadComma = comma;
    const stop = comma ? l.length - 1 : l.length;
    const prev = this.#prev;
    if (!l.startsWith('{"index":')) return this.#fail();
    const digits = String(this.#index);
    if (!l.startsWith(digits, 9)) return this.#fail();
    const p = 9 + digits.length;
    if (!l.startsWith(',"prev_hash":"', p) || !l.startsWith(prev, p + 14)) {
      return this.#fail();
    }
    if (!l.startsWith('","type":', p + 85)) return this.#fail();
    const typeStart = p + 94;
    if (l.charCodeAt(typeStart) !== 0x22) return this.#fail();
    const typeEnd = canonicalValueEnd(l, typeStart);
    if (typeEnd < 0 || !l.startsWith(',"record":', typeEnd)) {
      return this.#fail();
    }
    const recStart = typeEnd + 10;
    const recEnd = canonicalValueEnd(l, recStart);
    if (recEnd < 0 || !l.startsWith(',"hash":"sha256:', recEnd)) {
      return this.#fail();
    }
    const hexStart = recEnd + 16;
    if (hexStart + 66 !== stop || !l.startsWith('"}', hexStart + 64)) {
      return this.#fail();
    }
    const hex = l.slice(hexStart, hexStart + 64);
    const typeText = l.slice(typeStart, typeEnd);
    const recordText = l.slice(recStart, recEnd);
    const h = createHash("sha256").update(
      prev + '{"record":' + recordText + ',"type":' + typeText + "}",
    ).digest("hex");
    if (h !== hex) return this.#fail();
    const type = typeText.includes("\\")
      ? JSON.parse(typeText) as string
      : typeText.slice(1, -1);
    this.#types[type] = (this.#types[type] ?? 0) + 1;
    this.onBlock?.({ index: this.#index, type, recordText });
    this.#prev = "sha256:" + hex;
    this.#index++;
    return true;
  }
}

/** Recipes a record's text states (see {@linkcode ledgerRecipesText}), added to `into`. */
export function recordRecipes(recordText: string, into: Set<string>): void {
  if (!recordText.includes('"contract_recipe')) return;
  for (const r of ledgerRecipesText(recordText)) into.add(r);
}
