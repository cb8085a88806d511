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
import { canonicalBytesEnd, sawRecipeKey } from "./canonical_bytes.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { type HashSlot, inputInPlace, MAX_TYPE_IN_PLACE } from "./slot_hash.ts";

/**
 * A SHA-256 hash with nothing hashed yet: each digest starts from a copy of
 * it, the cheapest way node:crypto gives a fresh SHA-256 here (a few
 * percent less CPU per digest than a createHash call; scripts/bench_ledger.ts
 * prints both).
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

/** `sha256:` + hex SHA-256 of `prev + body`. */
export function chainHash(prev: string, body: string): string {
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
      problems.push(indexProblem(i, b.index));
    }
    if (
      local !== null && typeof b.prev_hash === "string" && b.prev_hash !== local
    ) {
      problems.push(prevProblem(i, b.prev_hash, local));
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
      problems.push(hashProblem(i, b.hash, h));
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
    problems.push(
      headProblem(
        strict,
        expectedHead,
        published.get(expectedHead),
        blocks.length,
      ),
    );
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
 * line) straight from its text (see {@linkcode VerityByteWalker}). Returns
 * null for anything else (another layout, a non-canonical record, a block
 * whose index, prev_hash or hash does not chain): callers then take the
 * general path, which reports each problem.
 */
export function walkVerityText(text: string): TextWalk | null {
  if (!text.startsWith(HEADER)) return null;
  const bytes = new TextEncoder().encode(text);
  const w = new VerityByteWalker();
  const tail = w.lines(bytes);
  if (tail < 0) return null;
  const r = w.end(bytes.subarray(tail));
  if (r === null || r.problems.length > 0) return null;
  return {
    blocks: r.blocks,
    head: r.head,
    types: r.types,
    end: r.blocks === 0 ? HEADER.length : text.length - 4,
  };
}

/**
 * Verify a ledger in verity's exact layout from its bytes with
 * {@linkcode VerityByteWalker}: the same answer as {@linkcode verifyLedger}
 * over the parsed text, or null when the bytes are not in that layout. The
 * bytes are overwritten (see {@linkcode VerityByteWalker.lines}).
 */
export function verifyVerityBytes(
  bytes: Uint8Array,
  expectedHead: string,
): LedgerVerification | null {
  const w = new VerityByteWalker(expectedHead);
  const tail = w.lines(bytes);
  if (tail < 0) return null;
  const r = w.end(bytes.subarray(tail));
  return r === null ? null : walkVerification(w, r);
}

/** The verification a finished walk amounts to, against the expected head given to the walker. */
export function walkVerification(
  w: VerityByteWalker,
  r: ByteWalk,
): LedgerVerification {
  const head = w.headProblem();
  const problems = head === null ? r.problems : [...r.problems, head];
  return {
    ok: problems.length === 0,
    blocks: r.blocks,
    problems,
    head: r.head,
    format: { ledger: LEDGER_NAME, version: LEDGER_VERSION },
    types: r.types,
  };
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
  // Only text that begins as verity's layout is worth encoding for the walk.
  if (text.startsWith(HEADER)) {
    const fast = verifyVerityBytes(
      new TextEncoder().encode(text),
      expectedHead,
    );
    if (fast !== null) return fast;
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

/** One block as the walk saw it: its type and the record's canonical text. */
export interface WalkedBlock {
  index: number;
  type: string;
  /** The record's text as it stands in the file (canonical JSON). */
  recordText: string;
}

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);
const HEADER_LINE = ascii(HEADER);
const EMPTY_LINE = ascii(EMPTY.slice(0, -1));
const BODY_TYPE = ascii(',"type":');
const RECORD_OPEN = ascii('{"record":');
const UTF8 = new TextDecoder("utf-8", { fatal: true });
/** Big-endian words of fixed text, for comparisons four bytes at a time. */
const be32 = (t: string, at: number): number =>
  new DataView(ascii(t).buffer).getUint32(at);
const be16 = (t: string, at: number): number =>
  new DataView(ascii(t).buffer).getUint16(at);
const INDEX_KEY = ascii('{"index":');
const PREV_KEY = ascii(',"prev_hash":"');
const K_INDEX0 = be32('{"index"', 0);
const K_INDEX1 = be32('{"index"', 4);
const K_PREV0 = be32(',"prev_hash":"', 0);
const K_PREV1 = be32(',"prev_hash":"', 4);
const K_PREV2 = be32(',"prev_hash":"', 8);
const K_PREV3 = be16(',"prev_hash":"', 12);
const K_TYPE0 = be32('","type":', 0);
const K_TYPE1 = be32('","type":', 4);
const K_RECORD0 = be32(',"record":', 0);
const K_RECORD1 = be32(',"record":', 4);
const K_RECORD2 = be16(',"record":', 8);
const K_HASH0 = be32(',"hash":"sha256:', 0);
const K_HASH1 = be32(',"hash":"sha256:', 4);
const K_HASH2 = be32(',"hash":"sha256:', 8);
const K_HASH3 = be32(',"hash":"sha256:', 12);

/** Whether b[from, to) is printable ASCII with no quote or backslash (a JSON string's text as it stands). */
function plainAscii(b: Uint8Array, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = b[k]!;
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** `sha256:`, the start of every hash a ledger publishes. */
const SHA256_PREFIX = new TextEncoder().encode("sha256:");

/** Whether `b[at, at + word.length)` is `word`. */
function bytesAt(b: Uint8Array, at: number, word: Uint8Array): boolean {
  for (let k = 0; k < word.length; k++) if (b[at + k] !== word[k]) return false;
  return true;
}

/** What {@linkcode VerityByteWalker} found in a ledger in verity's exact layout. */
export interface ByteWalk {
  blocks: number;
  /** The head the chain replays to from genesis. */
  head: string;
  types: Record<string, number>;
  /** verifyLedger's problems for the blocks (none when the chain holds; no head problem). */
  problems: LedgerProblem[];
}

/**
 * What a walker found in one segment of a ledger in verity's layout: the
 * block lines that start in a range of the file's bytes (the first segment
 * also holds the header line, the last the closing `]}`). Segments are
 * walked independently (on different threads) and joined by
 * {@linkcode joinSegments}.
 */
export interface SegmentWalk {
  /**
   * Its first block's index (the one its first line publishes); -1 for a
   * segment that holds only the closing line `]}` (its last block's line
   * being longer than a segment), which has no block and no hash.
   */
  first: number;
  blocks: number;
  /** Its first block's published prev_hash (genesis for the first segment). */
  startPrev: string;
  /** Its last block's published hash (startPrev when it has no block). */
  lastHash: string;
  /** Whether its last block line ended with a comma (true with no block). */
  lastHadComma: boolean;
  /** Whether it ended with the closing `]}` (the last segment must). */
  closed: boolean;
  /** No block problem: every index, prev_hash and hash as the chain says. */
  clean: boolean;
  types: Record<string, number>;
  recipes: string[];
}

/**
 * Join the walks of a file's segments, in file order (segments with no
 * line start left out): the whole file's walk when every segment is clean
 * and each begins where the one before ended (the next index, its last
 * hash as prev_hash, after a comma), the last closing the blocks; null
 * otherwise (the file is then walked again whole, which names every
 * problem). The head is the last block's hash: every hash was recomputed
 * and found equal, so it is where the chain replays to from genesis.
 */
export function joinSegments(
  segments: readonly SegmentWalk[],
): ByteWalk | null {
  let next = 0;
  let prev = GENESIS;
  let comma = true;
  const types: Record<string, number> = {};
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const last = i === segments.length - 1;
    if (s.first === -1) {
      // Only the closing line: after a block line with no comma.
      if (!last || !s.closed || comma || next === 0) return null;
      continue;
    }
    if (
      !s.clean || s.first !== next || s.startPrev !== prev || !comma ||
      s.closed !== last
    ) return null;
    next += s.blocks;
    prev = s.lastHash;
    comma = s.lastHadComma;
    for (const [t, n] of Object.entries(s.types)) {
      types[t] = (types[t] ?? 0) + n;
    }
  }
  if (segments.length === 0) return null;
  return { blocks: next, head: prev, types, problems: [] };
}

/**
 * Walk a ledger in the exact layout verity writes, one canonical block per
 * line, straight from the file's bytes read as a stream (any size, memory
 * bounded by the longest line): feed the bytes to
 * {@linkcode VerityByteWalker.lines} piece by piece, then the bytes after
 * the last newline to {@linkcode VerityByteWalker.end}.
 *
 * Each block's index and `prev_hash` are checked to chain, its type and
 * record checked to be canonical JSON in one scan of their UTF-8 bytes
 * (`canonical_bytes.ts`), and the block hash computed over those bytes as
 * they stand (they are then exactly the canonical body's UTF-8) and compared
 * with the published hash. A block whose index, `prev_hash` or hash is
 * wrong is reported exactly as {@linkcode verifyLedger} reports it (the
 * same problems, the same replayed head), so a tampered ledger of any size
 * is refused with every problem named. Any line that is not verity's exact
 * layout makes the walk fail (null), and callers take the general path.
 * Pure.
 *
 * @example
 * ```ts
 * const w = new VerityByteWalker();
 * const b = new TextEncoder().encode('{"ledger":"verity","version":"1","blocks":[]}\n');
 * const tail = w.lines(b);
 * w.end(b.subarray(tail))?.head; // GENESIS
 * ```
 */
export class VerityByteWalker {
  #state: "header" | "blocks" | "closed" | "done" | "failed" = "header";
  #index = 0;
  #types: Record<string, number> = {};
  #lastHadComma = true;
  #recipes = new Set<string>();
  // The block's published hash, read before its hashed input is built
  // over it; it becomes #prev for the next block.
  #pub = ascii(GENESIS);
  #pubView = new DataView(this.#pub.buffer, this.#pub.byteOffset, 71);
  // The hashed input of a block whose type is too long to build it in place.
  #long = new Uint8Array(0);
  // The previous block's published hash (the chain followed on published
  // hashes; the hash of the previous block when the chain holds).
  #prev = ascii(GENESIS);
  #prevView = new DataView(this.#prev.buffer, this.#prev.byteOffset, 71);
  #lastType = new Uint8Array(0);
  #lastTypeName = "";
  /** Blocks walked since #types last counted #lastTypeName's. */
  #typeRun = 0;
  // What verifyLedger reports, for blocks in the layout whose index,
  // prev_hash or hash is not what the chain says: the chain is then
  // followed on the published hashes (#prev), and #strictHex replays
  // from genesis, exactly as verifyLedger does.
  #problems: LedgerProblem[] = [];
  // The replayed head's 64 hex digits (without "sha256:").
  #strictHex = GENESIS.slice(7);
  /** Whether the replay has left the published chain (it is not #prev). */
  #off = false;
  /** The segment's first block (0 for a whole file). */
  #first = 0;
  /** The segment's first published prev_hash. */
  #startPrev = GENESIS;
  #expectedHead: string | null;
  // Its 64 hex digits (null unless it is "sha256:" and 64 characters) and
  // their first character code, for a cheap comparison per block.
  #expected: string | null;
  #expected0 = -1;
  #expectedAt: number | undefined = undefined;
  /** Called for each block in the layout (the record text is canonical). */
  onBlock: ((b: WalkedBlock) => void) | null = null;
  /** Where blocks go unhashed (see deferTo), and how many went there. */
  #slot: HashSlot | null = null;
  #deferred = 0;
  /** Set when a block could not be deferred (see deferTo). */
  #cannotDefer = false;

  /**
   * `expectedHead`, when given, is looked for among the published hashes
   * (for the reason {@linkcode VerityByteWalker.headProblem} gives).
   */
  constructor(expectedHead: string | null = null) {
    this.#expectedHead = expectedHead;
    this.#expected = expectedHead !== null && expectedHead.length === 71 &&
        expectedHead.startsWith("sha256:")
      ? expectedHead.slice(7)
      : null;
    if (this.#expected !== null) this.#expected0 = this.#expected.charCodeAt(0);
  }

  /**
   * Walk every complete line of `bytes` (each ended by `\n`); return the
   * offset just after the last newline (the start of the incomplete rest,
   * to be fed again with what follows), or -1 once the walk has failed.
   * Each block's hash is computed over its bytes where they lie: the bytes
   * of every block line walked are overwritten (all but its record's); the
   * rest after the last newline is left as it was.
   */
  lines(bytes: Uint8Array): number {
    // Every line up to the last newline is complete; a block's parse ends
    // at its own newline (it fails on any newline inside).
    const limit = bytes.lastIndexOf(0x0a) + 1;
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let pos = 0;
    while (pos < limit) {
      if (this.#state === "blocks" && bytes[pos] === 0x7b) {
        if (!this.#lastHadComma) return this.#failed();
        pos = this.#block(bytes, dv, pos);
        if (pos < 0) return -1;
        continue;
      }
      const nl = bytes.indexOf(0x0a, pos);
      if (!this.#line(bytes, pos, nl)) return -1;
      pos = nl + 1;
    }
    return this.#state === "failed" ? -1 : pos;
  }

  /**
   * The walk's result, given the bytes after the last newline (empty for a
   * file verity wrote): null when the file is not verity's exact layout.
   * `problems` are verifyLedger's for the blocks (none when the chain
   * holds; the comparison with an expected head is the caller's, see
   * {@linkcode VerityByteWalker.headProblem}); `head` is where the chain
   * replays to from genesis.
   */
  end(rest: Uint8Array): ByteWalk | null {
    if (rest.length !== 0 || this.#state !== "closed") return null;
    this.#state = "done";
    this.#countTypes();
    return {
      blocks: this.#index,
      head: "sha256:" + this.#strictHex,
      types: this.#types,
      problems: this.#problems,
    };
  }

  /**
   * A walker for one segment of a ledger's block lines (see
   * {@linkcode SegmentWalk}), whose first line, at `b[s]`, begins
   * `{"index":N,"prev_hash":"<71 bytes>"`: it starts at block N with that
   * prev_hash, in the blocks (after a line that ended with a comma). Null
   * when the line does not begin so.
   */
  static segmentAt(b: Uint8Array, s: number): VerityByteWalker | null {
    if (s + 120 > b.length || !bytesAt(b, s, INDEX_KEY)) return null;
    let p = s + INDEX_KEY.length;
    const d0 = p;
    let n = 0;
    while (b[p]! >= 0x30 && b[p]! <= 0x39 && p - d0 < 16) {
      n = n * 10 + (b[p]! - 0x30);
      p++;
    }
    if (p === d0 || (b[d0] === 0x30 && p - d0 > 1)) return null;
    // The prev_hash must begin "sha256:" (the walker keeps only the
    // digits of each hash it reads; any other start is not a hash this
    // segment can follow, and the whole file is then walked).
    if (
      !bytesAt(b, p, PREV_KEY) || !plainAscii(b, p + 14, p + 85) ||
      !bytesAt(b, p + 14, SHA256_PREFIX)
    ) return null;
    const w = new VerityByteWalker();
    w.#state = "blocks";
    w.#index = n;
    w.#first = n;
    w.#prev = b.slice(p + 14, p + 85);
    w.#prevView = new DataView(w.#prev.buffer, 0, 71);
    w.#startPrev = VerityByteWalker.#text(w.#prev, 0, 71);
    w.#strictHex = w.#startPrev.slice(7);
    return w;
  }

  /**
   * What this walker found in its segment, given whether the segment is
   * the file's last (then `rest`, the bytes after its last newline, must
   * be empty and the blocks closed); null when the walk failed.
   */
  segment(last: boolean, rest: Uint8Array): SegmentWalk | null {
    if (this.#state === "failed") return null;
    let closed = false;
    if (last) {
      if (this.end(rest) === null) return null;
      closed = true;
    } else if (this.#state !== "blocks") return null;
    this.#countTypes();
    return {
      first: this.#first,
      blocks: this.#index - this.#first,
      startPrev: this.#startPrev,
      lastHash: VerityByteWalker.#text(this.#prev, 0, 71),
      lastHadComma: this.#lastHadComma,
      closed,
      clean: this.#problems.length === 0 && !this.#off,
      types: this.#types,
      recipes: this.recipes(),
    };
  }

  /**
   * Hash nothing from here on: leave where each block's parts lie in
   * `slot` (see {@linkcode HashSlot}) for another thread to build its
   * input, hash it and check it, and walk on as if every published hash
   * were the recomputed one. The bytes given to
   * {@linkcode VerityByteWalker.lines} must then lie in `slot.data`. A
   * block that cannot be left there (a type too long to build its input in
   * place, or no room) fails the walk, with
   * {@linkcode VerityByteWalker.cannotDefer} set: its segment is then to be
   * walked with its hashes. Only for a segment walk whose outcome counts
   * once its hashes are checked: the head and problems of a deferred walk
   * are not the chain's.
   */
  deferTo(slot: HashSlot): void {
    this.#slot = slot;
    this.#deferred = 0;
    this.#cannotDefer = false;
  }

  /** How many blocks were left in the slot (see deferTo). */
  get deferred(): number {
    return this.#deferred;
  }

  /** Whether the walk failed because a block could not be deferred. */
  get cannotDefer(): boolean {
    return this.#cannotDefer;
  }

  /**
   * verifyLedger's `head` problem for a finished walk whose head is not the
   * expected head given to the constructor, or null when it is.
   */
  headProblem(): LedgerProblem | null {
    const expectedHead = this.#expectedHead;
    if (expectedHead === null) {
      throw new Error("VerityByteWalker: no expected head was given");
    }
    const strict = "sha256:" + this.#strictHex;
    if (strict === expectedHead) return null;
    return headProblem(
      strict,
      expectedHead,
      this.#expectedAt,
      this.#index,
    );
  }

  /**
   * Whether an incomplete line of `length` bytes (no newline yet) can still
   * be part of the layout: false for a first line longer than the header,
   * so a file that is not a ledger is never buffered whole.
   */
  mayContinue(length: number): boolean {
    if (this.#state === "header" && length > EMPTY_LINE.length) {
      return this.#fail();
    }
    return this.#state !== "failed";
  }

  /** Every contract recipe the records walked so far state, sorted. */
  recipes(): string[] {
    return [...this.#recipes].sort();
  }

  /** Latin-1 text of b[from, to) (ASCII here). */
  static #text(b: Uint8Array, from: number, to: number): string {
    let s = "";
    for (let k = from; k < to; k++) s += String.fromCharCode(b[k]!);
    return s;
  }

  #fail(): false {
    this.#state = "failed";
    return false;
  }

  #failed(): -1 {
    this.#state = "failed";
    return -1;
  }

  #line(b: Uint8Array, s: number, e: number): boolean {
    switch (this.#state) {
      case "header":
        if (e - s === EMPTY_LINE.length && bytesAt(b, s, EMPTY_LINE)) {
          this.#state = "closed";
        } else if (e - s === HEADER_LINE.length && bytesAt(b, s, HEADER_LINE)) {
          this.#state = "blocks";
        } else return this.#fail();
        return true;
      case "blocks":
        if (e - s === 2 && b[s] === 0x5d && b[s + 1] === 0x7d) { // "]}"
          if (this.#index === 0 || this.#lastHadComma) return this.#fail();
          this.#state = "closed";
          return true;
        }
        return this.#fail(); // a block line starts with "{"
      default:
        // Nothing may follow "]}\n".
        return this.#fail();
    }
  }

  /** The block line at b[s]: the offset after its newline, or -1 (the walk failed). */
  #block(b: Uint8Array, dv: DataView, s: number): number {
    // {"index":N,"prev_hash":"<prev>","type":T,"record":R,"hash":"sha256:<hex>"}[,]\n
    // Fixed text is compared four bytes at a time (big-endian words of the
    // keys, computed once); every read is bounds-checked first.
    if (s + 120 > b.length) return this.#failed();
    if (dv.getUint32(s) !== K_INDEX0 || dv.getUint32(s + 4) !== K_INDEX1) {
      return this.#failed();
    }
    // The index in decimal, no leading zero, equal to the position
    // (b[s + 8] is the colon: K_INDEX covers '{"index"').
    if (b[s + 8] !== 0x3a) return this.#failed();
    let p = s + 9;
    let n = 0;
    const d0 = p;
    while (b[p]! >= 0x30 && b[p]! <= 0x39 && p - d0 < 16) {
      n = n * 10 + (b[p]! - 0x30);
      p++;
    }
    if (p === d0 || (b[d0] === 0x30 && p - d0 > 1)) return this.#failed();
    const index = this.#index;
    if (n !== index) this.#problems.push(indexProblem(index, n));
    // ,"prev_hash":"<71 bytes>","type":
    if (p + 96 > b.length) return this.#failed();
    if (
      dv.getUint32(p) !== K_PREV0 || dv.getUint32(p + 4) !== K_PREV1 ||
      dv.getUint32(p + 8) !== K_PREV2 || dv.getUint16(p + 12) !== K_PREV3
    ) return this.#failed();
    // The published prev_hash is the previous block's published hash,
    // #prev.
    const iv = this.#prevView;
    const q = p + 14;
    let samePrev = dv.getUint32(q + 67) === iv.getUint32(67);
    for (let k = 0; k < 68 && samePrev; k += 4) {
      samePrev = dv.getUint32(q + k) === iv.getUint32(k);
    }
    if (!samePrev) {
      if (!plainAscii(b, q, q + 71)) return this.#failed();
      this.#problems.push(
        prevProblem(
          index,
          VerityByteWalker.#text(b, q, q + 71),
          VerityByteWalker.#text(this.#prev, 0, 71),
        ),
      );
    }
    if (
      dv.getUint32(p + 85) !== K_TYPE0 || dv.getUint32(p + 89) !== K_TYPE1 ||
      b[p + 93] !== 0x3a
    ) return this.#failed();
    const typeStart = p + 94;
    const typeEnd = this.#typeEnd(b, typeStart);
    if (typeEnd < 0 || typeEnd + 10 > b.length) return this.#failed();
    if (
      dv.getUint32(typeEnd) !== K_RECORD0 ||
      dv.getUint32(typeEnd + 4) !== K_RECORD1 ||
      dv.getUint16(typeEnd + 8) !== K_RECORD2
    ) return this.#failed();
    const recStart = typeEnd + 10;
    const recEnd = canonicalBytesEnd(b, recStart);
    // ,"hash":"sha256:<64 hex>"}[,]\n
    if (recEnd < 0 || recEnd + 83 > b.length) return this.#failed();
    if (
      dv.getUint32(recEnd) !== K_HASH0 ||
      dv.getUint32(recEnd + 4) !== K_HASH1 ||
      dv.getUint32(recEnd + 8) !== K_HASH2 ||
      dv.getUint32(recEnd + 12) !== K_HASH3
    ) return this.#failed();
    const hexStart = recEnd + 16;
    if (b[hexStart + 64] !== 0x22 || b[hexStart + 65] !== 0x7d) {
      return this.#failed();
    }
    let next = hexStart + 66;
    const comma = b[next] === 0x2c;
    if (comma) next++;
    if (b[next] !== 0x0a) return this.#failed();
    // The published digits, kept: the hashed input may be built over them.
    const pub = this.#pub;
    const uv = this.#pubView;
    for (let k = 0; k < 64; k += 4) {
      uv.setUint32(7 + k, dv.getUint32(hexStart + k));
    }
    const slot = this.#slot;
    if (slot !== null) {
      // Deferred: where the block's parts lie is left for another thread,
      // which builds its input in place, hashes it and compares the digest
      // with the published digits (LaneHasher.check). Its prev_hash is then
      // the line's own, which is #prev when the block has no problem (and
      // a segment with a problem does not count).
      const i = this.#deferred;
      const base = b.byteOffset - slot.data.byteOffset;
      if (
        b.buffer !== slot.data.buffer || base < 0 ||
        4 * i + 4 > slot.at.length ||
        typeEnd - typeStart > MAX_TYPE_IN_PLACE
      ) {
        this.#cannotDefer = true;
        return this.#failed();
      }
      const at = slot.at;
      at[4 * i] = base + typeStart;
      at[4 * i + 1] = base + typeEnd;
      at[4 * i + 2] = base + recEnd;
      at[4 * i + 3] = base + hexStart;
      this.#deferred = i + 1;
    } else {
      const input = this.#input(b, dv, typeStart, typeEnd, recStart, recEnd);
      const h = SHA256.copy().update(input).digest("hex");
      // The recomputed hash is compared with the published one; the
      // published one is #prev for the next block (the chain is followed
      // on published hashes, as verifyLedger follows it).
      let same = true;
      for (let k = 0; k < 64 && same; k++) {
        same = pub[7 + k] === h.charCodeAt(k);
      }
      if (same && !this.#off) {
        // The common case: the published hash is the recomputed one (so 64
        // lowercase hex digits), and the replay from genesis agrees.
        this.#strictHex = h;
        if (h.charCodeAt(0) === this.#expected0 && h === this.#expected) {
          this.#expectedAt = index;
        }
      } else if (!this.#recover(h, index, input)) return -1;
    }
    this.#pub = this.#prev;
    this.#pubView = iv;
    this.#prev = pub;
    this.#prevView = uv;
    this.#typeRun++;
    if (sawRecipeKey()) {
      recordRecipes(UTF8.decode(b.subarray(recStart, recEnd)), this.#recipes);
    }
    if (this.onBlock !== null) {
      this.onBlock({
        index,
        type: this.#lastTypeName,
        recordText: UTF8.decode(b.subarray(recStart, recEnd)),
      });
    }
    this.#index++;
    this.#lastHadComma = comma;
    return next + 1;
  }

  /**
   * A block's hashed input, prev_hash + '{"record":' + R + ',"type":' + T +
   * '}' (prev_hash from #prev; R at b[recStart, recEnd), T at
   * b[typeStart, typeEnd)), built in place around R (inputInPlace: the
   * published digits after R are kept in #pub already, the line's
   * published prev_hash and T read already). A type too long to build in
   * place is built in #long instead.
   */
  #input(
    b: Uint8Array,
    dv: DataView,
    typeStart: number,
    typeEnd: number,
    recStart: number,
    recEnd: number,
  ): Uint8Array {
    const typeLen = typeEnd - typeStart;
    if (typeLen > MAX_TYPE_IN_PLACE) {
      const len = 81 + (recEnd - recStart) + 9 + typeLen;
      if (this.#long.length < len) this.#long = new Uint8Array(len * 2);
      const out = this.#long;
      out.set(this.#prev);
      out.set(RECORD_OPEN, 71);
      out.set(b.subarray(recStart, recEnd), 81);
      const o = 81 + (recEnd - recStart);
      out.set(BODY_TYPE, o);
      out.set(b.subarray(typeStart, typeEnd), o + 8);
      out[len - 1] = 0x7d;
      return out.subarray(0, len);
    }
    const start = inputInPlace(
      b,
      dv,
      this.#prevView,
      0,
      typeStart,
      typeEnd,
      recEnd,
    );
    return b.subarray(start, recEnd + 9 + typeLen);
  }

  /**
   * The slow path of a block: its published hash differs from the
   * recomputed `h`, or the replay from genesis has diverged. Records the
   * hash problem and advances the replay as verifyLedger does (the
   * published hash becomes #prev for the next block). False (the walk
   * failed) when the published hash is not plain text.
   */
  #recover(h: string, index: number, input: Uint8Array): boolean {
    if (!plainAscii(this.#pub, 7, 71)) {
      this.#fail();
      return false;
    }
    const published = VerityByteWalker.#text(this.#pub, 0, 71);
    const recomputed = "sha256:" + h;
    if (recomputed !== published) {
      this.#problems.push(hashProblem(index, published, recomputed));
    }
    if (this.#off) {
      // chainHash(strict, body): the body is in the input after byte 71.
      for (let k = 0; k < 64; k++) {
        input[7 + k] = this.#strictHex.charCodeAt(k);
      }
      this.#strictHex = SHA256.copy().update(input).digest("hex");
    } else this.#strictHex = h;
    this.#off = "sha256:" + this.#strictHex !== published;
    if (published === "sha256:" + (this.#expected ?? "")) {
      this.#expectedAt = index;
    }
    return true;
  }

  /**
   * The end of the block type written canonically at b[t0] (a JSON
   * string), or -1; sets the type's name. A type equal to the previous
   * block's is recognised by its bytes; a new one is checked and decoded.
   */
  #typeEnd(b: Uint8Array, t0: number): number {
    const last = this.#lastType;
    const n = last.length;
    if (n > 0 && b[t0 + n] === 0x2c) {
      let k = 0;
      while (k < n && last[k] === b[t0 + k]) k++;
      if (k === n) return t0 + n;
    }
    if (b[t0] !== 0x22) return -1;
    const t1 = canonicalBytesEnd(b, t0);
    if (t1 < 0) return -1;
    this.#countTypes();
    this.#lastType = b.slice(t0, t1);
    this.#lastTypeName = JSON.parse(UTF8.decode(this.#lastType)) as string;
    return t1;
  }

  /** Adds the blocks walked since the last count to #lastTypeName's count. */
  #countTypes(): void {
    if (this.#typeRun === 0) return;
    const type = this.#lastTypeName;
    this.#types[type] = (this.#types[type] ?? 0) + this.#typeRun;
    this.#typeRun = 0;
  }
}

/** Recipes a record's text states (see {@linkcode ledgerRecipesText}), added to `into`. */
export function recordRecipes(recordText: string, into: Set<string>): void {
  if (!recordText.includes('"contract_recipe')) return;
  for (const r of ledgerRecipesText(recordText)) into.add(r);
}
