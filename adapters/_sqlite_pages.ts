/**
 * The page decoder of the sqlite adapter: walks a table b-tree in the image,
 * decodes leaf pages in JS, reuses byte-identical pages from the page cache
 * and leaves the rest to SQL range reads. Private to adapters/.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { bytesToBase64 } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import type { SqlDatabase } from "./sql_engine.ts";
import type { PageCache } from "./sqlite_page_cache.ts";
import { PageWalkError, readRows, type TablePlan } from "./_sqlite_table.ts";
import { imagePageSize } from "./wal.ts";

/** One leaf page of a table b-tree. */
interface Leaf {
  /** Byte offset of the page in the image. */
  offset: number;
  cells: number;
  minRowid: number;
  maxRowid: number;
  /** Whether some cell spills to overflow pages (then the page alone does not determine its rows). */
  overflow: boolean;
}

/** Where the last {@linkcode varint} ended (avoids allocating a pair per call). */
let varintEnd = 0;

/** Read a SQLite varint at `at`; its end is left in `varintEnd`. */
function varint(b: Uint8Array, at: number): number {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const x = b[at + i];
    if (x === undefined) {
      throw new PageWalkError("varint past the end of the image");
    }
    v = v * 128 + (x & 0x7f);
    if (x < 0x80) {
      varintEnd = at + i + 1;
      return v;
    }
  }
  const last = b[at + 8];
  if (last === undefined) {
    throw new PageWalkError("varint past the end of the image");
  }
  varintEnd = at + 9;
  return v * 256 + last;
}

/** The leaves of a table b-tree, in rowid order. Throws PageWalkError on anything unexpected. */
function tableLeaves(image: Uint8Array, rootpage: number): Leaf[] {
  const pageSize = imagePageSize(image) ?? 0;
  if (pageSize === 0 || image.length % pageSize !== 0) {
    throw new PageWalkError("unexpected image size");
  }
  if (
    image[56] !== 0 || image[57] !== 0 || image[58] !== 0 ||
    (image[59] !== 1 && image[59] !== 0)
  ) {
    throw new PageWalkError("text encoding is not UTF-8");
  }
  const usable = pageSize - image[20]!;
  const maxLocal = usable - 35;
  const pages = image.length / pageSize;
  const leaves: Leaf[] = [];
  const seen = new Set<number>();
  const u16 = (o: number) => (image[o]! << 8) | image[o + 1]!;
  const u32 = (o: number) =>
    ((image[o]! << 24) >>> 0) + (image[o + 1]! << 16) + (image[o + 2]! << 8) +
    image[o + 3]!;
  function visit(pgno: number, depth: number): void {
    if (pgno < 1 || pgno > pages || seen.has(pgno) || depth > 64) {
      throw new PageWalkError(`bad page ${pgno}`);
    }
    seen.add(pgno);
    const start = (pgno - 1) * pageSize;
    const hdr = pgno === 1 ? start + 100 : start;
    const type = image[hdr];
    const cells = u16(hdr + 3);
    if (type === 0x05) {
      const ptrs = hdr + 12;
      for (let i = 0; i < cells; i++) {
        visit(u32(start + u16(ptrs + 2 * i)), depth + 1);
      }
      visit(u32(hdr + 8), depth + 1);
    } else if (type === 0x0d) {
      if (cells === 0) return;
      const ptrs = hdr + 8;
      let overflow = false;
      let minRowid = 0;
      let maxRowid = 0;
      for (let i = 0; i < cells; i++) {
        const payload = varint(image, start + u16(ptrs + 2 * i));
        if (payload > maxLocal) overflow = true;
        if (i === 0 || i === cells - 1) {
          const rowid = varint(image, varintEnd);
          if (!Number.isSafeInteger(rowid) || rowid > 2 ** 53) {
            throw new PageWalkError("rowid beyond 2^53");
          }
          if (i === 0) minRowid = rowid;
          if (i === cells - 1) maxRowid = rowid;
        }
      }
      leaves.push({ offset: start, cells, minRowid, maxRowid, overflow });
    } else {
      throw new PageWalkError(
        `page ${pgno} is not a table b-tree page (type ${type})`,
      );
    }
  }
  visit(rootpage, 0);
  return leaves;
}

function pageHash(words: Int32Array, at: number, len: number): number {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x27d4eb2f | 0;
  for (let i = at, e = at + len; i < e; i++) {
    const w = words[i]!;
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h2 = Math.imul(h2 + w, 0x5bd1e995) ^ (h2 >>> 13);
  }
  return (h1 >>> 0) * 0x200000 + (h2 >>> 11);
}

/** Exact Latin-1 (one byte per character) page text: only sliced where a text value is pure ASCII. */
function latin1(image: Uint8Array, start: number, end: number): string {
  return Buffer.from(image.buffer, image.byteOffset, image.byteLength).toString(
    "latin1",
    start,
    end,
  );
}
const utf8 = new TextDecoder();

/**
 * Decode one leaf page of a rowid table in JS (record format: serial types
 * 0-9 and text/blob), or return null when it holds something this decoder
 * leaves to SQL (a short record whose missing column has a default, a
 * stored value in the INTEGER PRIMARY KEY column, reserved serial types).
 * Leaves with overflow cells never come here.
 */
function decodeLeaf(
  image: Uint8Array,
  view: DataView,
  leaf: Leaf,
  plan: TablePlan,
): StateRecord[] | null {
  const start = leaf.offset;
  const hdr = start === 0 ? 100 : start;
  const pageSize = imagePageSize(image)!;
  const n = plan.columns.length;
  const alias = plan.aliasIdx;
  const out: StateRecord[] = new Array(leaf.cells);
  let pageText: string | null = null;
  const fields: unknown[] = new Array(n);
  for (let c = 0; c < leaf.cells; c++) {
    let p = start + ((image[hdr + 8 + 2 * c]! << 8) | image[hdr + 9 + 2 * c]!);
    let payload = image[p]!;
    if (payload < 0x80) p++;
    else {
      payload = varint(image, p);
      p = varintEnd;
    }
    let rowid = image[p]!;
    if (rowid < 0x80) p++;
    else {
      rowid = varint(image, p);
      p = varintEnd;
    }
    const end = p + payload;
    let q = p;
    let headerSize = image[q]!;
    if (headerSize < 0x80) q++;
    else {
      headerSize = varint(image, q);
      q = varintEnd;
    }
    const headerEnd = p + headerSize;
    let body = headerEnd;
    let i = 0;
    while (q < headerEnd) {
      let t = image[q]!;
      if (t < 0x80) q++;
      else {
        t = varint(image, q);
        q = varintEnd;
      }
      if (i >= n) return null;
      let v: unknown;
      switch (t) {
        case 0:
          v = null;
          break;
        case 1:
          v = view.getInt8(body);
          body += 1;
          break;
        case 2:
          v = view.getInt16(body);
          body += 2;
          break;
        case 3:
          v = (view.getInt8(body) << 16) | view.getUint16(body + 1);
          body += 3;
          break;
        case 4:
          v = view.getInt32(body);
          body += 4;
          break;
        case 5:
          v = view.getInt16(body) * 4294967296 + view.getUint32(body + 2);
          body += 6;
          break;
        case 6: {
          const hi = view.getInt32(body);
          const lo = view.getUint32(body + 4);
          const x = hi * 4294967296 + lo;
          v = Number.isSafeInteger(x)
            ? x
            : { $int: view.getBigInt64(body).toString() };
          body += 8;
          break;
        }
        case 7: {
          const x = view.getFloat64(body);
          v = Number.isFinite(x) ? x : { $real: String(x) };
          body += 8;
          break;
        }
        case 8:
          v = 0;
          break;
        case 9:
          v = 1;
          break;
        case 10:
        case 11:
          return null;
        default: {
          const len = (t - (t & 1 ? 13 : 12)) / 2;
          if (body + len > end) return null;
          if (t & 1) {
            let ascii = true;
            for (let k = body; k < body + len; k++) {
              if (image[k]! > 0x7f) {
                ascii = false;
                break;
              }
            }
            if (ascii) {
              pageText ??= latin1(image, start, start + pageSize);
              v = pageText.slice(body - start, body - start + len);
            } else v = utf8.decode(image.subarray(body, body + len));
          } else {v = {
              $bytes: bytesToBase64(image.subarray(body, body + len)),
            };}
          body += len;
        }
      }
      fields[i++] = v;
    }
    if (body > end) return null;
    for (; i < n; i++) {
      if (plan.hasDefault[i]) return null;
      fields[i] = null;
    }
    if (alias !== -1) {
      if (fields[alias] !== null) return null;
      fields[alias] = rowid;
    }
    out[c] = { key: "[" + rowid + "]", value: plan.make(fields) };
  }
  return out;
}

/**
 * Read a rowid-ordered table page by page: leaves whose exact bytes were
 * decoded before reuse those records; new leaves are decoded in JS, and
 * runs of leaves the JS decoder leaves alone (overflow cells, defaults)
 * are read by SQL (`WHERE rowid BETWEEN …`) and checked against the
 * leaves' cell counts and rowid bounds.
 */
export function readTableCached(
  db: SqlDatabase,
  plan: TablePlan,
  image: Uint8Array,
  rootpage: number,
  cache: PageCache,
): StateRecord[] {
  const leaves = tableLeaves(image, rootpage);
  const aligned = image.byteOffset % 4 === 0 ? image : image.slice();
  const words = new Int32Array(
    aligned.buffer,
    aligned.byteOffset,
    aligned.byteLength >> 2,
  );
  const view = new DataView(
    aligned.buffer,
    aligned.byteOffset,
    aligned.byteLength,
  );
  const pageWords = (imagePageSize(image) ?? 4096) >> 2;
  const sig = plan.sql + "\0" + plan.select;
  // Each leaf's records, in leaf order; flattened once at the end.
  const parts: StateRecord[][] = [];
  // Leaves waiting for one SQL range read.
  let pending: { leaf: Leaf; hash: number }[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const lo = pending[0]!.leaf.minRowid;
    const hi = pending[pending.length - 1]!.leaf.maxRowid;
    const rowids: number[] = [];
    const rid = plan.rowidName!;
    const rows = readRows(
      db,
      plan,
      ` WHERE ${rid} BETWEEN ${lo} AND ${hi}`,
      rid,
      rowids,
    );
    let r = 0;
    for (const { leaf, hash } of pending) {
      const part = rows.slice(r, r + leaf.cells);
      if (
        part.length !== leaf.cells || rowids[r] !== leaf.minRowid ||
        rowids[r + leaf.cells - 1] !== leaf.maxRowid
      ) {
        throw new PageWalkError("page walk and SQL disagree");
      }
      if (!leaf.overflow) {
        cache.set(hash, sig, words, leaf.offset >> 2, pageWords, part);
      }
      parts.push(part);
      r += leaf.cells;
    }
    if (r !== rows.length) {
      throw new PageWalkError("page walk and SQL disagree on the row count");
    }
    pending = [];
  };
  for (const leaf of leaves) {
    const at = leaf.offset >> 2;
    if (leaf.overflow) {
      pending.push({ leaf, hash: 0 });
      continue;
    }
    const hash = pageHash(words, at, pageWords);
    let records = cache.get(hash, sig, words, at, pageWords);
    if (records === undefined && plan.decodable) {
      records = decodeLeaf(aligned, view, leaf, plan) ?? undefined;
      if (records !== undefined) {
        cache.set(hash, sig, words, at, pageWords, records);
      }
    }
    if (records === undefined) {
      pending.push({ leaf, hash });
      continue;
    }
    flush();
    parts.push(records);
  }
  flush();
  let total = 0;
  for (const p of parts) total += p.length;
  const out: StateRecord[] = new Array(total);
  let k = 0;
  for (const p of parts) for (let i = 0; i < p.length; i++) out[k++] = p[i]!;
  return out;
}
