/**
 * The evidence ledger on disk: an append-only SHA-256 hash chain in one JSON
 * file, written atomically. The chain itself (hashing, verification) is the
 * pure `chain.ts`; this module reads and writes files.
 *
 * Requires `--allow-read` and `--allow-write` for the ledger's directory.
 *
 * @module
 */
import { EvidenceError } from "../errors.ts";
import { readJsonDocument, readTextDocument } from "./files.ts";
import {
  canonicalJson,
  nativeIsCanonical,
  parseEvidenceJson,
} from "./canonical.ts";
import {
  type Owner,
  ownerText,
  parseOwner,
  selfOwner,
} from "../common/owner.ts";
import {
  type Block,
  blockLine,
  chainBlocks,
  ChainCheck,
  EMPTY_LINE,
  type Entry,
  GENESIS,
  HEADER_LINE,
  LEDGER_NAME,
  LEDGER_VERSION,
  ledgerRecipesText,
  ledgerText,
  verifyLedger,
  verifyLedgerText,
} from "./chain.ts";
import { writeChunksAtomic } from "./atomic_write.ts";
import { bindingOf, bindToLedger, type LedgerBinding } from "./binding.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

export { GENESIS, verifyLedger, verifyLedgerText };
export type { Block, Entry };
export type { LedgerProblem, LedgerVerification } from "./chain.ts";
import type { LedgerVerification } from "./chain.ts";
import { exists } from "../common/exists.ts";

/** The result of an append: the new block's index and hash; the hash is the new head. */
export interface AppendResult {
  index: number;
  hash: string;
  head: string;
}

/**
 * Read and parse a ledger file (numbers as Python reads them, so ledgers
 * written by mcp-evidence-validator verify exactly). Throws
 * {@linkcode EvidenceError} naming the file when it is missing or not JSON.
 */
export async function readLedgerFile(path: string): Promise<unknown> {
  await tooLargeToReadWhole(path);
  return (await readJsonDocument(path)).value;
}

const lossy = new TextDecoder("utf-8", { ignoreBOM: true });
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` as UTF-8 text, or null when they are not UTF-8. The lossy
 * decoder is several times faster (a streaming strict decoder took 50 ms
 * per 48 MB); only text holding U+FFFD can have had invalid bytes, and
 * that is decoded again strictly.
 */
function utf8(bytes: Uint8Array): string | null {
  const text = lossy.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Read a UTF-8 file a line at a time, handing each line without its
 * newline to `line` until it answers false; with the text, the line's
 * bytes when the read's text is ASCII (a string index is then a byte
 * offset), valid during the call only. Reads go into one buffer of 64 KiB,
 * grown to hold the longest line; each read's lines are decoded at once,
 * up to its last newline (a newline byte is never inside a UTF-8
 * sequence), and the bytes after it kept for the next. The reads are
 * synchronous: an asynchronous read is a hop to a thread pool and back, 750
 * of them for a 48 MB ledger (13 to 60 ms measured, more on a loaded
 * machine), where a 64 KiB read of a file blocks for microseconds.
 * Returns the text after the last newline, or
 * null when `line` answered false, the text is not UTF-8, or the first
 * line grew past `firstMax` bytes with no newline (so a file that is not a
 * ledger is never held whole). A leading BOM is dropped. Throws
 * {@linkcode EvidenceError} for a missing or unreadable file.
 */
async function readLines(
  path: string,
  line: (text: string, bytes: Uint8Array | null) => boolean,
  firstMax: number,
): Promise<string | null> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new EvidenceError(`${path}: no such file`);
    }
    throw new EvidenceError(`${path}: cannot read: ${(e as Error).message}`);
  }
  try {
    let buf = new Uint8Array(1 << 16);
    let held = 0; // bytes at the start of buf, after the last newline
    let first = true;
    while (true) {
      if (first && held > firstMax) return null;
      if (held === buf.length) {
        const grown = new Uint8Array(buf.length * 2);
        grown.set(buf);
        buf = grown;
      }
      let n: number | null;
      try {
        n = f.readSync(buf.subarray(held));
      } catch (e) {
        throw new EvidenceError(
          `${path}: cannot read: ${(e as Error).message}`,
        );
      }
      if (n === null) {
        const rest = utf8(buf.subarray(0, held));
        return first && rest?.charCodeAt(0) === 0xfeff ? rest.slice(1) : rest;
      }
      const end = held + n;
      const found = buf.subarray(held, end).lastIndexOf(10);
      held = end;
      if (found === -1) continue;
      const last = end - n + found;
      let text = utf8(buf.subarray(0, last + 1));
      if (text === null) return null;
      if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
      const ascii = text.length === last + 1;
      for (let p = 0; p < text.length;) {
        const q = text.indexOf("\n", p);
        if (!line(text.slice(p, q), ascii ? buf.subarray(p, q) : null)) {
          return null;
        }
        p = q + 1;
      }
      buf.copyWithin(0, last + 1, end);
      held = end - last - 1;
    }
  } finally {
    f.close();
  }
}

/** One block as the line walk saw it: its index, type and parsed record. */
export interface WalkedBlock {
  index: number;
  type: string;
  record: unknown;
}

/** A block line's keys, in verity's order. */
const LINE_KEYS = ["index", "prev_hash", "type", "record", "hash"];

/**
 * The line walk of a ledger file in verity's own layout: the header line,
 * one block per line (a comma after all but the last), `]}`. Each block
 * line is parsed, must be byte for byte the block's line as verity writes
 * it (type and record in canonical form, keys in verity's order, no
 * space), and is fed to {@linkcode ChainCheck}, so the problems found are
 * verifyLedger's. Any line that is not the layout fails the walk (the
 * caller then reads the file whole, with the project's strict reader).
 */
class LineWalk {
  #state: "header" | "blocks" | "closed" | "failed" = "header";
  /** Whether the last block line ended with a comma (true before the first). */
  #comma = true;
  /** Block lines walked. */
  #blocks = 0;
  /** The last re-serialised block's type and its canonical JSON. */
  #type: unknown = undefined;
  #typeJson = "";
  /** Where what a line hashes is put together from its bytes (the longest so far). */
  #input = new Uint8Array(1024);
  readonly check: ChainCheck;
  readonly recipes: Set<string> = new Set();
  readonly onBlock: ((b: WalkedBlock) => void) | null;

  constructor(
    expectedHead: string | null,
    onBlock: ((b: WalkedBlock) => void) | null,
  ) {
    this.check = new ChainCheck(expectedHead);
    this.onBlock = onBlock;
  }

  /**
   * Walk one line (without its newline), with its bytes when it is ASCII;
   * false once the walk has failed.
   */
  line(text: string, bytes: Uint8Array | null): boolean {
    switch (this.#state) {
      case "header":
        if (text === EMPTY_LINE) this.#state = "closed";
        else if (text === HEADER_LINE) this.#state = "blocks";
        else return this.#fail();
        return true;
      case "blocks":
        if (text === "]}") {
          if (this.#comma) return this.#fail(); // no block, or a comma before
          this.#state = "closed";
          return true;
        }
        if (!this.#comma) return this.#fail();
        this.#comma = text.endsWith(",");
        // bytes may run past the text: only its first text.length are read
        return this.#block(this.#comma ? text.slice(0, -1) : text, bytes);
      default:
        return this.#fail(); // nothing may follow "]}"
    }
  }

  /** Whether the walk ended in the layout, given the text after the last newline. */
  end(rest: string | null): boolean {
    return rest === "" && this.#state === "closed";
  }

  #block(text: string, bytes: Uint8Array | null): boolean {
    let b: unknown;
    let input: Uint8Array | null;
    let body: string | Uint8Array | null;
    try {
      // A line with no backslash holds no escaped key, the trigger of
      // JSON.parse's key defect (FACTS.md), and is read by JSON.parse; any
      // other by the project's reader. Either way the value counts only if
      // its canonical line is the text byte for byte (#asIs, #remade),
      // which no misread, duplicated key or number Python reads
      // differently passes.
      const plain = !text.includes("\\");
      b = plain
        ? JSON.parse(text)
        : parseEvidenceJson(text, { numbers: "python" });
      if (!isPlainObject(b)) return this.#fail();
      input = plain && bytes !== null ? this.#asIs(b, text, bytes) : null;
      body = input ?? this.#remade(b, text);
    } catch {
      // Not JSON, a duplicated key, a part missing or with no canonical
      // form: not the layout (the whole-file path names the problem).
      return this.#fail();
    }
    // Not canonical, a key added, or in another order: not the layout.
    if (body === null) return this.#fail();
    const index = this.#blocks++;
    this.check.add(
      b,
      body,
      input === null ? 0 : (b.prev_hash as string).length,
    );
    // "_recipe" is found several times faster than '"contract_recipe'.
    if (text.includes("_recipe")) {
      for (const r of ledgerRecipesText(text)) this.recipes.add(r);
    }
    if (this.onBlock !== null && typeof b.type === "string") {
      this.onBlock({ index, type: b.type, record: b.record });
    }
    return true;
  }

  /**
   * What a line that is canonical as it stands hashes, its prev_hash then
   * its body, cut from its bytes (valid until the next line); or null when
   * that is not shown: the line is ASCII with no backslash (so no string in
   * it holds a quote, an escape or a surrogate), its value's JSON.stringify
   * text with the keys in verity's order, the index a number, the type and
   * hashes strings, and JSON.stringify writes its record canonically. Such a line is the one
   * #remade would make, without making it.
   */
  #asIs(
    b: Record<string, unknown>,
    text: string,
    bytes: Uint8Array,
  ): Uint8Array | null {
    if (
      typeof b.index !== "number" || typeof b.type !== "string" ||
      typeof b.prev_hash !== "string" || typeof b.hash !== "string" ||
      !nativeIsCanonical(b.record) ||
      JSON.stringify(b) !== text
    ) return null;
    let k = 0;
    for (const key in b) if (key !== LINE_KEYS[k++]) return null;
    // The line is {"index":I,"prev_hash":"P","type":"T","record":R,"hash":"H"},
    // P, T and H as they are (nothing escaped), no comma in I; what is
    // hashed is P{"record":R,"type":"T"}, cut from the line's bytes.
    const prev = b.prev_hash.length;
    const p = text.indexOf(",", 9) + 14; // P
    const t = p + prev + 1; // ,"type":"T"
    const r = t + 10 + b.type.length; // ,"record":R
    const h = text.length - 11 - b.hash.length; // ,"hash":"H"}
    const n = prev + (h - t) + 1;
    if (this.#input.length < n) this.#input = new Uint8Array(2 * n);
    const input = this.#input;
    input.set(bytes.subarray(p, p + prev), 0);
    input.set(bytes.subarray(r, h), prev);
    input[prev] = 0x7b; // the comma before "record" made {
    input.set(bytes.subarray(t, r), prev + h - r);
    input[n - 1] = 0x7d; // }
    return input.subarray(0, n);
  }

  /**
   * The body of a line made again from its value, or null when the line is
   * not the one made from that value. Throws `TypeError` when the type or
   * the record has no canonical form.
   */
  #remade(b: Record<string, unknown>, text: string): string | null {
    const rec = canonicalJson(b.record);
    // Most blocks have the type of the one before.
    if (b.type !== this.#type) {
      this.#typeJson = canonicalJson(b.type);
      this.#type = b.type;
    }
    const typ = this.#typeJson;
    // Only the type and the record are hashed: the other parts need only
    // be as JSON.stringify writes them.
    const line = `{"index":${JSON.stringify(b.index)},"prev_hash":${
      JSON.stringify(b.prev_hash)
    },"type":${typ},"record":${rec},"hash":${JSON.stringify(b.hash)}}`;
    return line === text ? `{"record":${rec},"type":${typ}}` : null;
  }

  #fail(): false {
    this.#state = "failed";
    return false;
  }
}

/**
 * The line walk of a ledger file ({@linkcode LineWalk}), or null when the
 * file is not in verity's own layout. Throws {@linkcode EvidenceError} for a
 * missing or unreadable file.
 */
async function walkLines(
  path: string,
  expectedHead: string | null,
  onBlock: ((b: WalkedBlock) => void) | null = null,
): Promise<LineWalk | null> {
  const w = new LineWalk(expectedHead, onBlock);
  const rest = await readLines(
    path,
    (l, bytes) => w.line(l, bytes),
    EMPTY_LINE.length,
  );
  return w.end(rest) ? w : null;
}

/** What {@linkcode walkLedgerFile} found in a ledger in verity's own layout. */
export interface FileWalk {
  blocks: number;
  head: string;
  types: Record<string, number>;
  /** Every contract recipe the records state, sorted. */
  recipes: string[];
}

/**
 * Walk a ledger file in verity's own layout a line at a time (bounded
 * memory, no limit from string length): every record checked canonical
 * and every block hashed and chained. Null when the file is another
 * layout or does not chain (the whole-file path then reports each
 * problem). Throws {@linkcode EvidenceError} for a missing or unreadable
 * file.
 */
export async function walkLedgerFile(
  path: string,
  onBlock: ((b: WalkedBlock) => void) | null = null,
): Promise<FileWalk | null> {
  const w = await walkLines(path, null, onBlock);
  if (w === null) return null;
  const r = w.check.finish();
  if (r.problems.length > 0 || r.head === null) return null;
  return {
    blocks: r.blocks,
    head: r.head,
    types: w.check.types,
    recipes: [...w.recipes].sort(),
  };
}

/**
 * Verify a ledger file against a head kept elsewhere (see `verifyLedger`).
 * verity's own layout is walked a line at a time (any size, bounded
 * memory; see {@linkcode walkLedgerFile}), every problem named; anything
 * else (mcp-evidence-validator's layout, a record not in canonical form)
 * is read whole and parsed as Python reads it, reporting every problem.
 * Throws {@linkcode EvidenceError} for a missing, unreadable or non-JSON
 * file.
 *
 * @example
 * ```ts ignore
 * const v = await verifyLedgerFile("runs/ledger.json", head);
 * if (!v.ok) for (const p of v.problems) console.log(p.message);
 * ```
 */
export async function verifyLedgerFile(
  path: string,
  expectedHead: string,
): Promise<LedgerVerification & { recipes: string[] }> {
  const w = await walkLines(path, expectedHead);
  if (w !== null) {
    const r = w.check.finish();
    return {
      ok: r.problems.length === 0,
      blocks: r.blocks,
      problems: r.problems,
      head: r.head,
      format: { ledger: LEDGER_NAME, version: LEDGER_VERSION },
      types: w.check.types,
      recipes: [...w.recipes].sort(),
    };
  }
  const { text } = await readWholeLedger(path);
  try {
    return {
      ...verifyLedgerText(text, expectedHead),
      recipes: ledgerRecipesText(text),
    };
  } catch (e) {
    if (e instanceof SyntaxError) {
      throw new EvidenceError(`${path}: not valid JSON: ${e.message}`);
    }
    throw e;
  }
}

/** The longest text V8 can hold (UTF-16 code units); a UTF-8 file of at most this many bytes fits. */
const MAX_TEXT = 2 ** 29 - 24;

/**
 * Read a ledger that is not in verity's own line layout whole (the general
 * path parses it). Throws {@linkcode EvidenceError} for a missing or unreadable
 * file, or one too large to be held as one text.
 */
async function readWholeLedger(
  path: string,
): Promise<{ text: string; bytes: Uint8Array }> {
  await tooLargeToReadWhole(path);
  return await readTextDocument(path);
}

/** Throws {@linkcode EvidenceError} when the file is too large to be held as one text. */
async function tooLargeToReadWhole(path: string): Promise<void> {
  const size = await Deno.stat(path).then((s) => s.size, () => 0);
  if (size > MAX_TEXT) {
    throw new EvidenceError(
      `${path}: ${size} bytes and not in verity's own ledger layout (one canonical block per line), which is the only layout read as a stream; other layouts are read whole, up to ${MAX_TEXT} bytes`,
    );
  }
}

/** Options for {@linkcode withLedgerLock}. */
export interface LockOptions {
  /**
   * Give up waiting for another writer after this many milliseconds.
   * @default {30000}
   */
  waitMs?: number;
}

/**
 * The owner written into `<ledger>.lock` by the writer holding it, or null
 * (free, or never used). For messages only: the lock itself is the kernel's.
 */
export async function ledgerLockOwner(
  ledgerPath: string,
): Promise<Owner | null> {
  try {
    return parseOwner(await Deno.readTextFile(`${ledgerPath}.lock`));
  } catch {
    return null;
  }
}

/**
 * Run `fn` holding an exclusive advisory lock (flock) on `<ledger>.lock`, so
 * concurrent appends never lose a block. The kernel drops the lock when its
 * holder dies, however it dies, so a killed writer never leaves a stale
 * lock, and two waiters can never both take one. The lock file stays (an
 * unlinked lock file would let a later writer lock a different file); it
 * holds the current holder's pid and start time.
 */
export async function withLedgerLock<T>(
  ledgerPath: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lock = `${ledgerPath}.lock`;
  const waitMs = options.waitMs ?? 30_000;
  let f: Deno.FsFile;
  try {
    f = await Deno.open(lock, { read: true, write: true, create: true });
  } catch (e) {
    throw new EvidenceError(
      `${lock}: cannot open the ledger lock: ${(e as Error).message}`,
    );
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const got = await Promise.race([
    f.lock(true).then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), waitMs))),
  ]);
  clearTimeout(timer);
  if (!got) {
    const owner = await ledgerLockOwner(ledgerPath);
    // The pending lock request ends with this process (exit 2 follows).
    throw new EvidenceError(
      `${lock}: another verity (pid ${
        owner?.pid ?? "unknown"
      }) has been writing this ledger for more than ${
        Math.round(waitMs / 1000)
      } s`,
    );
  }
  try {
    await f.truncate(0);
    await f.write(new TextEncoder().encode(ownerText(selfOwner())));
    return await fn();
  } finally {
    await f.truncate(0).catch(() => {});
    try {
      f.unlock();
    } catch {
      // closing releases it too
    }
    f.close();
  }
}

/**
 * Append several blocks to a verity ledger in one atomic write, creating the
 * ledger when it is missing. Refuses (with {@linkcode EvidenceError}) a file
 * that is not a verity ledger, or whose own chain does not verify.
 * Returns the first new index, how many were added, and the new head.
 *
 * `entries` may be any iterable, sync or async: they are chained and
 * written a few thousand at a time, so an iterable that makes its entries
 * as it goes writes a ledger of any size in bounded memory. A bad entry
 * (empty type, no record, a record with no canonical form) throws
 * `TypeError` and leaves the ledger as it was.
 */
export async function appendBlocks(
  ledgerPath: string,
  entries: Iterable<Entry> | AsyncIterable<Entry>,
): Promise<{ first: number; count: number; head: string }> {
  return await withLedgerLock(ledgerPath, async () => {
    let existing: Block[] = [];
    let head = GENESIS;
    let start = 0;
    // Bytes of the existing file kept as they are (verity's own layout,
    // every block chained): all but the closing "\n]}\n".
    let kept: number | null = null;
    if (await exists(ledgerPath, { followSymlinks: false })) {
      const w = await walkLedgerFile(ledgerPath);
      if (w !== null) {
        head = w.head;
        start = w.blocks;
        kept = w.blocks === 0 ? 0 : (await Deno.stat(ledgerPath)).size - 4;
      } else {
        const { text } = await readWholeLedger(ledgerPath);
        let doc: unknown;
        try {
          // The strict reader: a duplicated key anywhere is refused, never
          // read as its last copy.
          doc = parseEvidenceJson(text, { numbers: "python" });
        } catch (e) {
          throw new EvidenceError(
            `${ledgerPath}: not valid JSON: ${(e as Error).message}`,
          );
        }
        const d = doc as {
          ledger?: unknown;
          version?: unknown;
          blocks?: unknown;
        };
        if (
          typeof doc !== "object" || doc === null || d.ledger !== LEDGER_NAME
        ) {
          throw new EvidenceError(
            `${ledgerPath}: not a verity ledger (ledger field ${
              JSON.stringify(d?.ledger) ?? "missing"
            }); verity appends only to its own ledgers`,
          );
        }
        if (d.version !== LEDGER_VERSION) {
          throw new EvidenceError(
            `${ledgerPath}: unsupported verity ledger version ${
              JSON.stringify(d.version)
            }`,
          );
        }
        // Self-consistency: every check except the comparison with an outside head.
        const v = verifyLedger(doc, GENESIS);
        const problems = v.problems.filter((p) =>
          !(p.kind === "head" && v.head !== null)
        );
        if (problems.length > 0 || v.head === null) {
          throw new EvidenceError(
            `${ledgerPath}: the ledger's own chain does not verify (${problems.length} problem(s); first: ${
              problems[0]?.message ?? "no head"
            }); refusing to append`,
          );
        }
        existing = d.blocks as Block[];
        head = v.head;
        start = existing.length;
      }
    }
    const chain = { head, next: start };
    await writeChunksAtomic(
      ledgerPath,
      ledgerPieces(
        ledgerPath,
        kept,
        existing.map(blockLine),
        chained(entries, chain),
      ),
    );
    return { first: start, count: chain.next - start, head: chain.head };
  });
}

/**
 * Chain `entries` onto `chain` (its head and next index, updated as it
 * goes), yielding the new block lines a batch at a time.
 */
async function* chained(
  entries: Iterable<Entry> | AsyncIterable<Entry>,
  chain: { head: string; next: number },
): AsyncGenerator<string[]> {
  let batch: Entry[] = [];
  const flush = () => {
    const { lines, head } = chainBlocks(chain.head, chain.next, batch);
    chain.head = head;
    chain.next += batch.length;
    batch = [];
    return lines;
  };
  for await (const e of entries) {
    batch.push(e);
    if (batch.length === 4096) yield flush();
  }
  if (batch.length > 0) yield flush();
}

/**
 * The new ledger file in pieces: the kept bytes of the existing file (or
 * the header and the re-serialized existing blocks), then the new block
 * lines, then the closing bracket. Never one string of the whole file.
 */
async function* ledgerPieces(
  path: string,
  kept: number | null,
  existing: string[],
  batches: AsyncIterable<string[]>,
): AsyncGenerator<string | Uint8Array> {
  const it = batches[Symbol.asyncIterator]();
  const first = await it.next();
  // Whether any block line (existing or new) has been written: the next
  // one is then preceded by ",\n".
  let any = false;
  if (kept !== null && kept > 0) {
    const f = await Deno.open(path, { read: true });
    try {
      const buf = new Uint8Array(1 << 20);
      let left = kept;
      while (left > 0) {
        const n = await f.read(buf.subarray(0, Math.min(buf.length, left)));
        if (n === null) throw new Error(`${path}: shorter than it was`);
        yield buf.slice(0, n);
        left -= n;
      }
    } finally {
      f.close();
    }
    any = true;
  } else {
    if (existing.length === 0 && first.done) {
      yield ledgerText([]);
      return;
    }
    yield `{"ledger":"${LEDGER_NAME}","version":"${LEDGER_VERSION}","blocks":[\n`;
    for (let i = 0; i < existing.length; i += 4096) {
      yield (i > 0 ? ",\n" : "") + existing.slice(i, i + 4096).join(",\n");
    }
    any = existing.length > 0;
  }
  let r = first;
  while (!r.done) {
    if (r.value.length > 0) {
      yield (any ? ",\n" : "") + r.value.join(",\n");
      any = true;
    }
    r = await it.next();
  }
  yield "\n]}\n";
}

/**
 * Append one block to a verity ledger (creating it when missing), atomically,
 * and return its index, its hash and the new head (the same value).
 * Refuses a ledger whose own chain does not verify.
 *
 * @example
 * ```ts ignore
 * const { head } = await appendBlock("runs/ledger.json", "report", { digest: "sha256:…" });
 * console.log(`ledger head: ${head}`);
 * ```
 */
export async function appendBlock(
  ledgerPath: string,
  type: string,
  record: unknown,
): Promise<AppendResult> {
  const r = await appendBlocks(ledgerPath, [{ type, record }]);
  return { index: r.first, hash: r.head, head: r.head };
}

/**
 * Bind a document to a ledger file (see `bindToLedger`), walking verity's
 * own layout a line at a time; another layout, or a chain that does not reach
 * the head, is read whole and every problem named. Throws
 * {@linkcode EvidenceError} for a missing, unreadable or non-JSON ledger.
 */
export async function bindToLedgerFile(
  path: string,
  expectedHead: string,
  digest: string,
  types: readonly string[],
  expect: Readonly<Record<string, unknown>> = {},
): Promise<LedgerBinding> {
  // The last block whose record's digest is the document's.
  let found: { index: number; type: string; record: unknown } | null = null;
  const w = await walkLedgerFile(path, (b) => {
    if (isPlainObject(b.record) && b.record.digest === digest) found = b;
  });
  if (w !== null && w.head === expectedHead) {
    const ledger: LedgerVerification = {
      ok: true,
      blocks: w.blocks,
      problems: [],
      head: w.head,
      format: { ledger: LEDGER_NAME, version: LEDGER_VERSION },
      types: w.types,
    };
    return bindingOf(ledger, found, digest, types, expect);
  }
  const { text } = await readWholeLedger(path);
  try {
    return bindToLedger(text, expectedHead, digest, types, expect);
  } catch (e) {
    throw new EvidenceError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}
