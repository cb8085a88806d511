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
import { parsePythonJson } from "./canonical.ts";
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
  /**
   * A lock file older than this is left over from a killed writer and is removed.
   * @default {120000}
   */
  staleMs?: number;
}

/** Run `fn` holding `<ledger>.lock` (created exclusively), so concurrent appends never lose a block. */
export async function withLedgerLock<T>(
  ledgerPath: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lock = `${ledgerPath}.lock`;
  const waitMs = options.waitMs ?? 30_000;
  const staleMs = options.staleMs ?? 120_000;
  const started = Date.now();
  while (true) {
    try {
      const f = await Deno.open(lock, { write: true, createNew: true });
      await f.write(new TextEncoder().encode(`${Deno.pid}\n`));
      f.close();
      break;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) {
        throw new UsageError(
          `${lock}: cannot create the ledger lock: ${(e as Error).message}`,
        );
      }
      const st = await Deno.stat(lock).catch(() => null);
      if (st?.mtime && Date.now() - st.mtime.getTime() > staleMs) {
        await Deno.remove(lock).catch(() => {});
        continue;
      }
      if (Date.now() - started > waitMs) {
        throw new UsageError(
          `${lock}: another verity is writing this ledger (remove the lock if none is running)`,
        );
      }
      await new Promise((r) =>
        setTimeout(r, 25 + Math.floor(Math.random() * 25))
      );
    }
  }
  try {
    return await fn();
  } finally {
    await Deno.remove(lock).catch(() => {});
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
          doc = parsePythonJson(text);
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
