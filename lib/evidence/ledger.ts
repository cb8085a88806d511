/**
 * The evidence ledger on disk: an append-only SHA-256 hash chain in one JSON
 * file, written atomically. The chain itself (hashing, verification) is the
 * pure `chain.ts`; this module reads and writes files.
 *
 * Requires `--allow-read` and `--allow-write` for the ledger's directory.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { readJsonDocument, readTextDocument } from "./files.ts";
import { parseEvidenceJson } from "./canonical.ts";
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
  type Entry,
  GENESIS,
  LEDGER_NAME,
  LEDGER_VERSION,
  ledgerText,
  verifyLedger,
  verifyLedgerText,
  walkVerityText,
} from "./chain.ts";
import { writeTextFileAtomic } from "./atomic_write.ts";

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
 * {@linkcode UsageError} naming the file when it is missing or not JSON.
 */
export async function readLedgerFile(path: string): Promise<unknown> {
  return (await readJsonDocument(path)).value;
}

/**
 * Verify a ledger file against a head kept elsewhere (see `verifyLedger`).
 * verity's own layout is checked straight from the text; anything else is
 * parsed as Python reads it. Throws {@linkcode UsageError} for a missing,
 * unreadable or non-JSON file.
 */
export async function verifyLedgerFile(
  path: string,
  expectedHead: string,
): Promise<LedgerVerification> {
  const { text } = await readTextDocument(path);
  try {
    return verifyLedgerText(text, expectedHead);
  } catch (e) {
    if (e instanceof SyntaxError) {
      throw new UsageError(`${path}: not valid JSON: ${e.message}`);
    }
    throw e;
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
    throw new UsageError(
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
    throw new UsageError(
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
 * ledger when it is missing. Refuses (with {@linkcode UsageError}) a file
 * that is not a verity ledger, or whose own chain does not verify.
 * Returns the first new index, how many were added, and the new head.
 */
export async function appendBlocks(
  ledgerPath: string,
  entries: readonly Entry[],
): Promise<{ first: number; count: number; head: string }> {
  return await withLedgerLock(ledgerPath, async () => {
    let existing: Block[] = [];
    let head = GENESIS;
    let start = 0;
    let kept: string | null = null; // the existing block lines, when kept as text
    if (await exists(ledgerPath, { followSymlinks: false })) {
      const { text } = await readTextDocument(ledgerPath);
      const w = walkVerityText(text);
      if (w !== null) {
        // verity's own layout, every block chained: keep its text as it is.
        head = w.head;
        start = w.blocks;
        kept = w.blocks === 0 ? "" : text.slice(0, w.end);
      } else {
        let doc: unknown;
        try {
          // The strict reader: a duplicated key anywhere is refused, never
          // read as its last copy.
          doc = parseEvidenceJson(text, { numbers: "python" });
        } catch (e) {
          throw new UsageError(
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
          throw new UsageError(
            `${ledgerPath}: not a verity ledger (ledger field ${
              JSON.stringify(d?.ledger) ?? "missing"
            }); verity appends only to its own ledgers`,
          );
        }
        if (d.version !== LEDGER_VERSION) {
          throw new UsageError(
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
          throw new UsageError(
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
    const { lines, head: next } = chainBlocks(head, start, entries);
    let text: string;
    if (kept === null) {
      text = ledgerText([...existing.map(blockLine), ...lines]);
    } else if (kept === "") {
      text = ledgerText(lines);
    } else if (lines.length === 0) {
      text = `${kept}\n]}\n`;
    } else {
      text = `${kept},\n${lines.join(",\n")}\n]}\n`;
    }
    await writeTextFileAtomic(ledgerPath, text);
    return { first: start, count: entries.length, head: next };
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
