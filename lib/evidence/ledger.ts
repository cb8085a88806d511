/**
 * The evidence ledger on disk: an append-only SHA-256 hash chain in one JSON
 * file, written atomically. The chain itself (hashing, verification) is the
 * pure `chain.ts`; this module reads and writes files.
 *
 * verity's own layout (a header line, one block per line, `]}`) is read a
 * line at a time, in bounded memory and past V8's string limit: each line
 * is fed to `ChainCheck` (as it stands when it is canonical, else parsed),
 * so the problems found are `verifyLedger`'s. Any other layout
 * (mcp-evidence-validator's) is read whole and parsed as Python reads it.
 *
 * Requires `--allow-read` and `--allow-write` for the ledger's directory.
 *
 * @module
 */
import { EvidenceError } from "../errors.ts";
import { decodeUtf8, readJsonDocument, readTextDocument } from "./files.ts";
import { parseEvidenceJson } from "./canonical.ts";
import {
  type Owner,
  ownerText,
  parseOwner,
  selfOwner,
} from "../common/owner.ts";
import {
  type Block,
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
  type LedgerVerification,
  verifyLedger,
  verifyLedgerText,
} from "./chain.ts";
import { writeTextFileAtomic } from "./atomic_write.ts";
import { bindingOf, bindToLedger, type LedgerBinding } from "./binding.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { exists } from "../common/exists.ts";

export { GENESIS, verifyLedger, verifyLedgerText };
export type { Block, Entry, LedgerVerification };
export type { LedgerProblem } from "./chain.ts";

/** A ledger's verification with every contract recipe its records state, sorted. */
export type FileVerification = LedgerVerification & { recipes: string[] };

/**
 * Read and parse a ledger file (numbers as Python reads them, so ledgers
 * written by mcp-evidence-validator verify exactly). Throws
 * {@linkcode EvidenceError} naming the file when it is missing or not JSON.
 */
export async function readLedgerFile(path: string): Promise<unknown> {
  await tooLargeToReadWhole(path);
  return (await readJsonDocument(path)).value;
}

/**
 * The lines of a UTF-8 file without their newlines (a leading BOM
 * dropped), a read's worth at a time, then the text after the last newline
 * (as a last line); null in their place when
 * the file is not UTF-8 or its first line runs past `firstMax` bytes (a
 * file that is not a ledger is never held whole). Reads are synchronous,
 * 64 KiB into one buffer grown to the longest line (an asynchronous read is
 * a hop to a thread pool and back: 13 to 60 ms more for a 48 MB ledger).
 * Throws {@linkcode EvidenceError} for a missing or unreadable file.
 */
function* readLines(
  path: string,
  firstMax: number,
): Generator<string[] | null> {
  let f: Deno.FsFile;
  try {
    f = Deno.openSync(path, { read: true });
  } catch (e) {
    throw new EvidenceError(
      e instanceof Deno.errors.NotFound
        ? `${path}: no such file`
        : `${path}: cannot read: ${(e as Error).message}`,
    );
  }
  try {
    let buf = new Uint8Array(1 << 16);
    let held = 0; // bytes at the start of buf, after the last newline
    let first = true;
    const bom = (t: string | null) =>
      first && t?.charCodeAt(0) === 0xfeff ? t.slice(1) : t;
    while (true) {
      if (first && held > firstMax) return yield null;
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
        const rest = bom(decodeUtf8(buf.subarray(0, held)));
        return yield rest === null ? null : [rest];
      }
      const end = held + n;
      const last = buf.subarray(0, end).lastIndexOf(10, end - 1);
      held = end;
      if (last < end - n) continue; // no newline in this read
      const text = bom(decodeUtf8(buf.subarray(0, last)));
      if (text === null) return yield null;
      first = false;
      yield text.split("\n");
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

/**
 * Verify a ledger file in verity's own layout a line at a time against
 * `expectedHead` (null: against itself only), calling `onBlock` with each
 * block; null when the file is in another layout (or not JSON, or repeats
 * a key), which is then read whole. Throws {@linkcode EvidenceError} for a
 * missing or unreadable file.
 */
export function walkLedgerFile(
  path: string,
  expectedHead: string | null,
  onBlock: ((b: WalkedBlock) => void) | null = null,
): FileVerification | null {
  const check = new ChainCheck(expectedHead);
  const recipes = new Set<string>();
  let blocks = 0;
  // header, then blocks (comma: the last one ended with a comma), "]}",
  // then only the empty text after the final newline
  let state: "header" | "blocks" | "closed" | "done" = "header";
  let comma = true;
  for (const lines of readLines(path, EMPTY_LINE.length)) {
    if (lines === null) return null;
    for (const line of lines) {
      if (state === "done") return null;
      if (state === "header") {
        if (line === EMPTY_LINE) state = "closed";
        else if (line === HEADER_LINE) state = "blocks";
        else return null;
      } else if (state === "closed") {
        if (line !== "") return null;
        state = "done";
      } else if (line === "]}") {
        if (comma) return null; // no block, or a comma before
        state = "closed";
      } else {
        if (!comma) return null;
        comma = line.endsWith(",");
        const text = comma ? line.slice(0, -1) : line;
        // A line as chainBlocks writes it is checked as it stands (its
        // record left as text), any other parsed.
        let block: unknown = check.addLine(text);
        const parsed = block === null;
        if (parsed) {
          try {
            block = parseEvidenceJson(text, { numbers: "python" });
          } catch {
            return null; // not JSON, or a repeated key: read whole, which names it
          }
          check.add(block);
        }
        // "_recipe" is found several times faster than '"contract_recipe'.
        if (line.includes("_recipe")) {
          for (const r of ledgerRecipesText(line)) recipes.add(r);
        }
        if (
          onBlock !== null && isPlainObject(block) &&
          typeof block.type === "string"
        ) {
          // A record left as text holds no backslash: no escaped key (FACTS.md).
          const record = parsed
            ? block.record
            : JSON.parse(block.record as string);
          onBlock({ index: blocks, type: block.type, record });
        }
        blocks++;
      }
    }
  }
  if (state !== "done") return null;
  const format = { ledger: LEDGER_NAME, version: LEDGER_VERSION };
  return { ...check.verification(format), recipes: [...recipes].sort() };
}

/**
 * Verify a ledger file against a head kept elsewhere (see `verifyLedger`;
 * null: against itself only), every problem named: verity's own layout a
 * line at a time ({@linkcode walkLedgerFile}), any other read whole and
 * parsed as Python reads it. Throws {@linkcode EvidenceError} for a
 * missing, unreadable or non-JSON file.
 *
 * @example
 * ```ts ignore
 * const v = await verifyLedgerFile("runs/ledger.json", head);
 * if (!v.ok) for (const p of v.problems) console.log(p.message);
 * ```
 */
export async function verifyLedgerFile(
  path: string,
  expectedHead: string | null,
): Promise<FileVerification> {
  const walked = walkLedgerFile(path, expectedHead);
  if (walked !== null) return walked;
  const text = await readWholeLedger(path);
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
 * The text of a ledger not in verity's own line layout. Throws
 * {@linkcode EvidenceError} for a missing or unreadable file, or one too
 * large to be held as one text.
 */
async function readWholeLedger(path: string): Promise<string> {
  await tooLargeToReadWhole(path);
  return (await readTextDocument(path)).text;
}

async function tooLargeToReadWhole(path: string): Promise<void> {
  const size = await Deno.stat(path).then((s) => s.size, () => 0);
  if (size > MAX_TEXT) {
    throw new EvidenceError(
      `${path}: ${size} bytes and not in verity's own ledger layout (one canonical block per line), which is the only layout read as a stream; other layouts are read whole, up to ${MAX_TEXT} bytes`,
    );
  }
}

/**
 * Run `fn` holding an exclusive advisory lock (flock) on `<ledger>.lock`, so
 * concurrent appends never lose a block. The kernel drops the lock when its
 * holder dies, however it dies, so a killed writer never leaves a stale
 * lock, and two waiters can never both take one. The lock file stays (an
 * unlinked lock file would let a later writer lock a different file); it
 * holds the current holder's pid and start time, for messages. Waits
 * 30 s for another writer, then throws {@linkcode EvidenceError}.
 */
export async function withLedgerLock<T>(
  ledgerPath: string,
  fn: () => Promise<T>,
): Promise<T> {
  const lock = `${ledgerPath}.lock`;
  const waitMs = 30_000;
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
    let owner: Owner | null = null;
    try {
      owner = parseOwner(await Deno.readTextFile(lock));
    } catch {
      // free by now, or never written
    }
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

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Throws {@linkcode EvidenceError} when a ledger's own chain does not verify. */
function refuseBroken(path: string, v: LedgerVerification): void {
  if (v.problems.length > 0 || v.head === null) {
    throw new EvidenceError(
      `${path}: the ledger's own chain does not verify (${v.problems.length} problem(s); first: ${
        v.problems[0]?.message ?? "no head"
      }); refusing to append`,
    );
  }
}

/**
 * Append several blocks to a verity ledger in one atomic write, creating the
 * ledger when it is missing. Refuses (with {@linkcode EvidenceError}) a file
 * that is not a verity ledger in verity's own layout, or whose own chain
 * does not verify.
 * Returns the first new index, how many were added, and the new head.
 * A bad entry (empty type, no record, a record with no canonical form)
 * throws `TypeError` and leaves the ledger as it was.
 */
export async function appendBlocks(
  ledgerPath: string,
  entries: Iterable<Entry>,
): Promise<{ first: number; count: number; head: string }> {
  return await withLedgerLock(ledgerPath, async () => {
    let head = GENESIS;
    let start = 0;
    // The file kept as it is but its closing "\n]}\n" (UTF-8: the walk read it).
    let kept: string | null = null;
    if (await exists(ledgerPath, { followSymlinks: false })) {
      const w = walkLedgerFile(ledgerPath, null);
      if (w === null) {
        throw new EvidenceError(
          `${ledgerPath}: not a verity ledger in verity's own layout (a header line, one canonical block per line); verity appends only to its own ledgers`,
        );
      }
      refuseBroken(ledgerPath, w);
      [head, start] = [w.head!, w.blocks];
      const bytes = start > 0 ? await Deno.readFile(ledgerPath) : null;
      kept = bytes && STRICT_UTF8.decode(bytes.subarray(0, -4));
    }
    const added = chainBlocks(head, start, [...entries]);
    await writeTextFileAtomic(
      ledgerPath,
      kept === null
        ? ledgerText(added.lines)
        : kept + added.lines.map((l) => `,\n${l}`).join("") + "\n]}\n",
    );
    return { first: start, count: added.lines.length, head: added.head };
  });
}

/**
 * Append one block to a verity ledger (creating it when missing), atomically,
 * and return its index, its hash and the new head (the same value).
 * Refuses a ledger whose own chain does not verify.
 *
 * @example
 * ```ts ignore
 * const { head } = await appendBlock("runs/ledger.json", "report", { digest: "sha256:…" });
 * ```
 */
export async function appendBlock(
  ledgerPath: string,
  type: string,
  record: unknown,
): Promise<{ index: number; hash: string; head: string }> {
  const r = await appendBlocks(ledgerPath, [{ type, record }]);
  return { index: r.first, hash: r.head, head: r.head };
}

/**
 * Bind a document to a ledger file (see `bindToLedger`): verity's own
 * layout is walked a line at a time, another read whole, every problem
 * named. Throws {@linkcode EvidenceError} for a missing, unreadable or
 * non-JSON ledger.
 */
export async function bindToLedgerFile(
  path: string,
  expectedHead: string,
  digest: string,
  types: readonly string[],
  expect: Readonly<Record<string, unknown>> = {},
): Promise<LedgerBinding> {
  // The last block whose record's digest is the document's.
  let found: WalkedBlock | null = null;
  const w = walkLedgerFile(path, expectedHead, (b) => {
    if (isPlainObject(b.record) && b.record.digest === digest) found = b;
  });
  if (w !== null) {
    const { recipes: _, ...ledger } = w;
    return bindingOf(ledger, found, digest, types, expect);
  }
  const text = await readWholeLedger(path);
  try {
    return bindToLedger(text, expectedHead, digest, types, expect);
  } catch (e) {
    throw new EvidenceError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}
