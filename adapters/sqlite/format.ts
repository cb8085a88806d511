/**
 * The SQLite file format as the page reader reads it: pages from a
 * {@linkcode PageSource}, the one varint decoder ({@linkcode VarintReader}),
 * record headers ({@linkcode RecordHeader}), the one serial-type decoder
 * ({@linkcode valueAt}) and overflow chains. Pure.
 *
 * Format: https://www.sqlite.org/fileformat2.html
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { PageWalkError } from "./page_walk_error.ts";

/** Random access to the pages of one database (WAL already applied). */
export interface PageSource {
  readonly pageSize: number;
  /** Pages in the database. */
  readonly pageCount: number;
  /**
   * Page `pgno` (1-based), `pageSize` bytes. A source may reuse memory:
   * the bytes stay valid for at least the next 64 reads of other pages of
   * the same source (a reader holds one leaf at a time, and reads it
   * again after following an overflow chain).
   */
  page(pgno: number): Uint8Array;
}

const MAGIC = "SQLite format 3\0";

/**
 * Whether bytes start with the SQLite database header.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(isSqliteImage(new TextEncoder().encode("SQLite format 3\0…")));
 * assert.ok(!isSqliteImage(new TextEncoder().encode("{}")));
 * ```
 */
export function isSqliteImage(bytes: Uint8Array): boolean {
  if (bytes.length < 16) return false;
  for (let i = 0; i < 16; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i)) return false;
  }
  return true;
}

/** Page size from a database header (bytes 16-17; 1 means 65536). */
export function imagePageSize(image: Uint8Array): number | null {
  if (image.length < 100) return null;
  const v = (image[16]! << 8) | image[17]!;
  return v === 1 ? 65536 : v;
}

/**
 * A page source over a database image in memory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DatabaseSync } from "node:sqlite";
 *
 * const db = new DatabaseSync(":memory:");
 * db.exec("CREATE TABLE t (x)");
 * const src = imagePageSource(db.serialize());
 * assert.equal(src.page(1).length, src.pageSize);
 * ```
 */
export function imagePageSource(image: Uint8Array): PageSource {
  const pageSize = imagePageSize(image) ?? 4096;
  if (pageSize < 512 || image.length % pageSize !== 0) {
    throw new PageWalkError("unexpected image size");
  }
  const pageCount = image.length / pageSize;
  return {
    pageSize,
    pageCount,
    page(pgno: number): Uint8Array {
      if (!(pgno >= 1 && pgno <= pageCount)) {
        throw new PageWalkError(`bad page ${pgno}`);
      }
      return image.subarray((pgno - 1) * pageSize, pgno * pageSize);
    },
  };
}

/** A big-endian 16-bit integer at `o`. */
export function u16(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

/** A big-endian unsigned 32-bit integer at `o`. */
export function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) >>> 0) + (b[o + 1]! << 16) + (b[o + 2]! << 8) +
    b[o + 3]!;
}

/** Header offset of page `pgno` (page 1 has the 100-byte file header). */
export function hdrOf(pgno: number): number {
  return pgno === 1 ? 100 : 0;
}

/**
 * Reads SQLite varints (1 to 9 bytes, big-endian, 7 bits a byte but the
 * ninth); {@linkcode VarintReader.end} is where the last one read ended.
 * Each reader (a cursor, a header parser) owns one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 *
 * const v = new VarintReader();
 * assert.equal(v.read(new Uint8Array([0x81, 0x00, 0x05]), 0), 128);
 * assert.equal(v.end, 2);
 * ```
 */
export class VarintReader {
  /** Where the last varint read ended. */
  end = 0;

  /** The varint at `at` (its end in {@linkcode VarintReader.end}). */
  read(b: Uint8Array, at: number): number {
    let v = 0;
    for (let i = 0; i < 8; i++) {
      const x = b[at + i];
      if (x === undefined) throw new PageWalkError("varint past the page end");
      v = v * 128 + (x & 0x7f);
      if (x < 0x80) {
        this.end = at + i + 1;
        return v;
      }
    }
    const last = b[at + 8];
    if (last === undefined) throw new PageWalkError("varint past the page end");
    this.end = at + 9;
    return v * 256 + last;
  }
}

/** Geometry shared by every page of one database. */
export interface Geometry {
  usable: number;
  /** Largest local payload of a table leaf cell. */
  maxLocal: number;
  /** Largest local payload of an index cell (leaf or interior). */
  maxLocalIndex: number;
  minLocal: number;
}

/**
 * The geometry of a UTF-8 database (encoding 1, or 0: none set yet, which
 * SQLite reads as UTF-8); throws PageWalkError for any other encoding.
 */
export function geometry(src: PageSource): Geometry {
  const p1 = src.page(1);
  if (p1[56] !== 0 || p1[57] !== 0 || p1[58] !== 0 || p1[59]! > 1) {
    throw new PageWalkError("text encoding is not UTF-8");
  }
  const usable = src.pageSize - p1[20]!;
  if (usable < 480) throw new PageWalkError("unusable page size");
  return {
    usable,
    maxLocal: usable - 35,
    maxLocalIndex: Math.floor(((usable - 12) * 64) / 255) - 23,
    minLocal: Math.floor(((usable - 12) * 32) / 255) - 23,
  };
}

/**
 * Local bytes of a payload of `size` bytes: `max` is the page kind's
 * largest local payload (`maxLocal` for table leaves, `maxLocalIndex` for
 * index pages).
 */
export function localSize(g: Geometry, size: number, max = g.maxLocal): number {
  if (size <= max) return size;
  const k = g.minLocal + ((size - g.minLocal) % (g.usable - 4));
  return k <= max ? k : g.minLocal;
}

/** The whole payload of a cell whose local part starts at `at` in `page`. */
export function assemble(
  src: PageSource,
  g: Geometry,
  page: Uint8Array,
  at: number,
  size: number,
  local: number,
): Uint8Array {
  const out = new Uint8Array(size);
  out.set(page.subarray(at, at + local));
  let next = u32(page, at + local);
  let done = local;
  let hops = 0;
  while (done < size) {
    if (next === 0 || ++hops > src.pageCount) {
      throw new PageWalkError("broken overflow chain");
    }
    const p = src.page(next);
    const n = Math.min(g.usable - 4, size - done);
    out.set(p.subarray(4, 4 + n), done);
    done += n;
    next = u32(p, 0);
  }
  return out;
}

/** Body length of serial types 0-11 (-1: reserved, left to SQL). */
const SERIAL_LEN = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1];

/**
 * The header of one record (the SQLite record format): each field's
 * serial type in `types` and its body offset in `offs` (`offs[count]` is
 * the end of the body), for records of at most `max` fields.
 */
export class RecordHeader {
  readonly types: Int32Array;
  readonly offs: Int32Array;
  readonly #max: number;
  readonly #v = new VarintReader();

  constructor(max: number) {
    this.#max = max;
    this.types = new Int32Array(max + 1);
    this.offs = new Int32Array(max + 1);
  }

  /**
   * Parse the record at `buf[at .. at+size)`: the number of fields, or -1
   * when the record holds something only SQL should interpret (reserved
   * serial types, a body longer than the record, more than `max` fields).
   */
  parse(buf: Uint8Array, at: number, size: number): number {
    const { types, offs } = this;
    const v = this.#v;
    const end = at + size;
    let q = at;
    let headerSize = buf[q]!;
    if (headerSize < 0x80) q++;
    else {
      headerSize = v.read(buf, q);
      q = v.end;
    }
    const headerEnd = at + headerSize;
    if (headerEnd > end) return -1;
    let body = headerEnd;
    let i = 0;
    while (q < headerEnd) {
      let t = buf[q]!;
      if (t < 0x80) q++;
      else {
        t = v.read(buf, q);
        q = v.end;
      }
      if (i >= this.#max) return -1;
      let len: number;
      if (t < 12) {
        len = SERIAL_LEN[t]!;
        if (len < 0) return -1;
      } else len = (t - (t & 1 ? 13 : 12)) / 2;
      types[i] = t;
      offs[i] = body;
      body += len;
      i++;
    }
    if (body > end) return -1;
    offs[i] = body;
    return i;
  }
}

const utf8 = new TextDecoder();

/** Bytes of the windows a {@linkcode TextWindow} decodes at once. */
const WINDOW = 4096;

/**
 * ASCII text fields sliced from one Latin-1 decoding of the 4 KiB window
 * of memory they lie in (one native call per window instead of one string
 * built per field). The memory must not change while its `epoch` stays
 * the same: a reader whose pages may be reused passes a new epoch for
 * every page it loads.
 */
export class TextWindow {
  #buffer: ArrayBufferLike | null = null;
  #bytes: Buffer = Buffer.alloc(0);
  #epoch = -1;
  #start = -1;
  #text = "";

  /** Memory of `buf` (from its `ArrayBuffer`'s start) as seen in `epoch`. */
  at(buf: Uint8Array, epoch: number): void {
    if (buf.buffer !== this.#buffer) {
      this.#buffer = buf.buffer;
      this.#bytes = Buffer.from(buf.buffer);
      this.#start = -1;
    } else if (epoch !== this.#epoch) this.#start = -1;
    this.#epoch = epoch;
  }

  /** The text of the ASCII bytes [off, off + len) of the memory given to {@linkcode TextWindow.at}. */
  slice(off: number, len: number): string {
    const w = off - (off % WINDOW);
    if (off + len > w + WINDOW) {
      return this.#bytes.toString("latin1", off, off + len);
    }
    if (w !== this.#start) {
      this.#start = w;
      this.#text = this.#bytes.toString(
        "latin1",
        w,
        Math.min(w + WINDOW, this.#bytes.length),
      );
    }
    return this.#text.slice(off - w, off - w + len);
  }
}

/**
 * The value of one field (serial type `t` at `off` in `buf`) as a snapshot
 * holds it: integers and reals as numbers (integers beyond 2^53 as
 * `{"$int": "…"}`, infinite reals as `{"$real": "…"}`), text as strings,
 * blobs as `{"$bytes": base64}`, NULL as null. `view` (over `buf`) is made
 * here when null and needed; `text`, given `buf`'s memory (offsets from
 * its `ArrayBuffer`'s start), slices ASCII text instead of decoding it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 *
 * // Serial type 1: an 8-bit integer; 13 + 2n: text of n bytes.
 * assert.equal(valueAt(new Uint8Array([0xff]), null, 1, 0), -1);
 * assert.equal(valueAt(new TextEncoder().encode("hi"), null, 17, 0), "hi");
 * ```
 */
export function valueAt(
  buf: Uint8Array,
  view: DataView | null,
  t: number,
  off: number,
  text: TextWindow | null = null,
): unknown {
  switch (t) {
    case 0:
      return null;
    case 1:
      return (buf[off]! << 24) >> 24;
    case 2:
      return ((buf[off]! << 24) >> 16) | buf[off + 1]!;
    case 3:
      return ((buf[off]! << 24) >> 8) | (buf[off + 1]! << 8) | buf[off + 2]!;
    case 4:
      return (buf[off]! << 24) | (buf[off + 1]! << 16) |
        (buf[off + 2]! << 8) | buf[off + 3]!;
    case 5:
    case 6:
    case 7:
      return wideAt(
        view ?? new DataView(buf.buffer, buf.byteOffset, buf.byteLength),
        t,
        off,
      );
    case 8:
      return 0;
    case 9:
      return 1;
  }
  const len = (t - (t & 1 ? 13 : 12)) / 2;
  if (t & 1) {
    if (len <= 256) {
      // ASCII: one flat string from its bytes (no decoder call, no chain
      // of concatenations kept alive with the value).
      for (let k = off; k < off + len; k++) {
        if (buf[k]! > 0x7f) return utf8.decode(buf.subarray(off, off + len));
      }
      if (text !== null) return text.slice(off, len);
      return String.fromCharCode.apply(
        null,
        buf.subarray(off, off + len) as unknown as number[],
      );
    }
    return utf8.decode(buf.subarray(off, off + len));
  }
  return { $bytes: buf.subarray(off, off + len).toBase64() };
}

/** A 6- or 8-byte integer (serial types 5, 6) or a real (7). */
function wideAt(view: DataView, t: number, off: number): unknown {
  if (t === 5) return view.getInt16(off) * 4294967296 + view.getUint32(off + 2);
  if (t === 6) {
    const x = view.getInt32(off) * 4294967296 + view.getUint32(off + 4);
    return Number.isSafeInteger(x)
      ? x
      : { $int: view.getBigInt64(off).toString() };
  }
  const x = view.getFloat64(off);
  return Number.isFinite(x) ? x : { $real: String(x) };
}
