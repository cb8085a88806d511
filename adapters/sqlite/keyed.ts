/**
 * The keyed page code: tables identified by a primary key other than the
 * rowid, compared page by page in key order. A `WITHOUT ROWID` table (an
 * index b-tree) is merge-compared in its key's order (collations BINARY,
 * NOCASE and RTRIM, ascending or descending); a rowid table identified by
 * another primary key is merged by rowid, its rows whose rowid or key
 * changed matched by key. Pure.
 *
 * @module
 */
import type { MaskRule } from "../../lib/definition/types.ts";
import {
  diffFields,
  type RecordChange,
  type RecordFieldChange,
  type RegionDiff,
} from "../../lib/state/delta.ts";
import { CELLS_PER_PAGE, type LeafCursor } from "./btree.ts";
import {
  flatOrder,
  NO_CHANGES,
  RowComparer,
  type RowKeeper,
  sameBytes,
  sortByKey,
  type SqliteDiffStats,
} from "./compare.ts";
import {
  assemble,
  type Geometry,
  hdrOf,
  localSize,
  type PageSource,
  RecordHeader,
  u16,
  u32,
  valueAt,
  VarintReader,
} from "./format.ts";
import { PageWalkError } from "./page_walk_error.ts";
import {
  type KeyOrder,
  type PlannedTable,
  rowValue,
  type TablePlan,
} from "./plan.ts";

/** Faults injected on purpose, to show the differential tests catch a wrong answer. */
export interface KeyedFaults {
  /**
   * Take two `WITHOUT ROWID` records whose keys are equal under the key's
   * collation as the same row, without checking that the keys are the
   * same values (wrong under NOCASE: 'a' replaced by 'A' is a row removed
   * and a row added). @default false
   */
  collationEqualIsSameRow?: boolean;
  /**
   * Take the changed rows of a rowid table identified by another primary
   * key, found in rowid order, as in key order without checking (wrong
   * when rows inserted out of key order change). @default false
   */
  changedRowsInKeyOrder?: boolean;
  /**
   * Put a keyed rowid table's changed rows in key order by its primary-key
   * index whenever it can (not only when that is cheaper than a sort).
   * @default false
   */
  indexOrderAlways?: boolean;
}

/** One record of a `WITHOUT ROWID` table: where its key fields are. */
class KeyView {
  /** The bytes holding the record's header and key fields (a page, or the whole payload). */
  buf: Uint8Array = new Uint8Array();
  /** Start of the record in `buf`. */
  at = 0;
  /** Fields in the record. */
  count = 0;
  /** Whether `buf` is this record's own copy (not a page of the source, which may be reused). */
  owned = false;
  readonly header: RecordHeader;
  readonly types: Int32Array;
  readonly offs: Int32Array;
  constructor(max: number) {
    this.header = new RecordHeader(max);
    this.types = this.header.types;
    this.offs = this.header.offs;
  }
}

/**
 * Iterates the records of a `WITHOUT ROWID` table (an index b-tree) in key
 * order: the cells of its leaves and, between them, its interior cells,
 * skipping pages identical on both sides. Checks that every record's key
 * is above the previous one under the table's key order (so a merge of
 * two cursors is exact even where this order and SQLite's might differ:
 * they would disagree here first, and the comparison falls back).
 */
export class KeyCursor {
  #src: PageSource;
  #g: Geometry;
  #units: number[];
  #skip: (pgno: number) => boolean;
  #ui = -1;
  #cells = 0;
  #ci = 0;
  #h = 0;
  #pgno = 0;
  #n: number;
  readonly plan: TablePlan | null;
  readonly order: KeyOrder | null;
  page: Uint8Array = new Uint8Array();
  /** Start of the payload in `page`. */
  at = 0;
  size = 0;
  local = 0;
  /** The current record's key; `prev`: the previous one. */
  key: KeyView;
  #prev: KeyView;
  #started = false;
  #full: Uint8Array | null = null;
  readonly #v = new VarintReader();
  readonly #keys = new KeyWriter();
  leavesRead = 0;

  constructor(
    src: PageSource,
    g: Geometry,
    units: number[],
    skip: (pgno: number) => boolean,
    table: { t: PlannedTable } | undefined,
  ) {
    this.#src = src;
    this.#g = g;
    this.#units = units;
    this.#skip = skip;
    this.plan = table?.t.plan ?? null;
    this.order = table?.t.key ?? null;
    this.#n = this.plan?.columns.length ?? 0;
    this.key = new KeyView(this.#n);
    this.#prev = new KeyView(this.#n);
  }

  next(): boolean {
    let p: number;
    for (;;) {
      if (this.#ci < this.#cells) {
        p = u16(this.page, this.#h + 8 + 2 * this.#ci++);
        break;
      }
      if (++this.#ui >= this.#units.length) return false;
      const u = this.#units[this.#ui]!;
      if (u > 0) {
        if (this.#skip(u)) {
          this.#cells = 0;
          continue;
        }
        this.page = this.#src.page(u);
        this.leavesRead++;
        this.#pgno = u;
        this.#h = hdrOf(u);
        if (this.page[this.#h] !== 0x0a) {
          throw new PageWalkError(`page ${u} is not an index leaf`);
        }
        this.#cells = u16(this.page, this.#h + 3);
        this.#ci = 0;
        continue;
      }
      // An interior cell: a record between two subtrees.
      this.#cells = 0;
      const pgno = Math.floor(-u / CELLS_PER_PAGE);
      const cell = -u % CELLS_PER_PAGE;
      if (this.#skip(pgno)) continue;
      this.page = this.#src.page(pgno);
      this.#pgno = pgno;
      const h = hdrOf(pgno);
      if (this.page[h] !== 0x02 || cell >= u16(this.page, h + 3)) {
        throw new PageWalkError(`page ${pgno} is not an index interior page`);
      }
      p = u16(this.page, h + 12 + 2 * cell) + 4;
      break;
    }
    const page = this.page;
    let size = page[p]!;
    if (size < 0x80) p++;
    else {
      size = this.#v.read(page, p);
      p = this.#v.end;
    }
    this.at = p;
    this.size = size;
    this.local = localSize(this.#g, size, this.#g.maxLocalIndex);
    if (p + this.local > page.length) {
      throw new PageWalkError("cell past the page end");
    }
    this.#full = null;
    const k = this.#prev;
    this.#prev = this.key;
    this.key = k;
    if (this.local < this.size && !this.#prev.owned && this.#started) {
      // Following this record's chain may reuse the previous one's page.
      this.#prev.buf = this.#prev.buf.slice();
      this.#prev.owned = true;
    }
    this.#parseKey();
    if (this.#started) {
      if (compareRecordKeys(this.#prev, this.key, this.order!) >= 0) {
        throw new PageWalkError(
          `table ${this.plan!.name}: keys not in the order of their collations`,
        );
      }
    }
    this.#started = true;
    return true;
  }

  /** Parse the current record's header; its key fields must be in `key.buf`. */
  #parseKey(): void {
    const k = this.key;
    const order = this.order!;
    let buf = this.page;
    let at = this.at;
    let avail = this.local;
    for (let pass = 0; pass < 2; pass++) {
      // The header size, then the header, then the key fields, all local.
      const hs = buf[at]! < 0x80 ? buf[at]! : this.#v.read(buf, at);
      if (hs <= avail) {
        const count = k.header.parse(buf, at, this.size);
        if (count < 0) throw new PageWalkError("record needs SQL");
        if (count < order.nKey) {
          throw new PageWalkError("record shorter than its key");
        }
        if (k.offs[order.nKey]! <= at + avail) {
          k.buf = buf;
          k.owned = buf !== this.page;
          k.at = at;
          k.count = count;
          return;
        }
      }
      if (pass === 1) break;
      // A long key: read the whole payload.
      buf = this.payload();
      at = 0;
      avail = buf.length;
    }
    throw new PageWalkError("malformed record");
  }

  /** The current record's whole payload (a view into the page when it does not overflow). */
  payload(): Uint8Array {
    if (this.local === this.size) {
      return this.page.subarray(this.at, this.at + this.size);
    }
    if (this.#full !== null) return this.#full;
    const before = this.page;
    const out = assemble(
      this.#src,
      this.#g,
      this.page,
      this.at,
      this.size,
      this.local,
    );
    // A long chain may have pushed the page out of the source's memory.
    this.page = this.#src.page(this.#pgno);
    if (this.key.buf === before) this.key.buf = this.page;
    this.#full = out;
    return out;
  }

  /** The current record's key as the snapshot reader writes it. */
  keyString(): string {
    const k = this.key;
    return this.#keys.write(k.buf, k.types, k.offs, this.order!.nKey, null);
  }
}

/**
 * Writes records' keys as the snapshot reader writes them (`[v1,v2,…]`,
 * encoded values as JSON). A key of integers (up to 6 bytes) and texts
 * that JSON writes as they stand (printable ASCII without `"` or `\\`) is
 * assembled from its bytes as one string; any other as the snapshot
 * reader decodes its values.
 */
export class KeyWriter {
  /** Where a key string is assembled (one character per element: `fromCharCode` reads a plain array faster than a typed one). */
  readonly #chars: number[] = [];

  /** The key of the record: its first `n` fields, or the fields `fields` lists. */
  write(
    buf: Uint8Array,
    types: Int32Array,
    offs: Int32Array,
    n: number,
    fields: readonly number[] | null,
  ): string {
    return keyString(this.#chars, buf, types, offs, n, fields);
  }
}

/** The longest key {@linkcode keyString} assembles from its bytes. */
const KEY_CHARS = 512;

function keyString(
  out: number[],
  buf: Uint8Array,
  types: Int32Array,
  offs: Int32Array,
  n: number,
  fields: readonly number[] | null,
): string {
  let m = 0;
  out[m++] = 0x5b;
  for (let i = 0; i < n; i++) {
    const f = fields === null ? i : fields[i]!;
    const t = types[f]!;
    const off = offs[f]!;
    if (i > 0) out[m++] = 0x2c;
    if ((t >= 1 && t <= 5) || t === 8 || t === 9) {
      if (m + 16 > KEY_CHARS) {
        return keyStringSlow(buf, types, offs, n, fields);
      }
      const v = numberAt(buf, t, off) as number;
      const d = String(v);
      for (let j = 0; j < d.length; j++) out[m++] = d.charCodeAt(j);
      continue;
    }
    if (t < 13 || !(t & 1)) return keyStringSlow(buf, types, offs, n, fields);
    const len = (t - 13) / 2;
    if (m + len + 4 > KEY_CHARS) {
      return keyStringSlow(buf, types, offs, n, fields);
    }
    out[m++] = 0x22;
    for (let j = off; j < off + len; j++) {
      const c = buf[j]!;
      if (c > 0x7f || c < 0x20 || c === 0x22 || c === 0x5c) {
        return keyStringSlow(buf, types, offs, n, fields);
      }
      out[m++] = c;
    }
    out[m++] = 0x22;
  }
  out[m++] = 0x5d;
  out.length = m;
  return String.fromCharCode.apply(null, out);
}

/** {@linkcode KeyWriter.write} of any key, value by value. */
function keyStringSlow(
  buf: Uint8Array,
  types: Int32Array,
  offs: Int32Array,
  n: number,
  fields: readonly number[] | null,
): string {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let out = "[";
  for (let i = 0; i < n; i++) {
    const f = fields === null ? i : fields[i]!;
    const t = types[f]!;
    const off = offs[f]!;
    if (t >= 13 && t & 1) {
      const len = (t - 13) / 2;
      for (let j = off; j < off + len; j++) {
        if (buf[j]! > 0x7f) {
          try {
            strictUtf8.decode(buf.subarray(off, off + len));
          } catch {
            throw new PageWalkError("key text is not valid UTF-8");
          }
          break;
        }
      }
    }
    const v = valueAt(buf, view, t, off);
    if (i > 0) out += ",";
    out += typeof v === "number" ? String(v) : JSON.stringify(v);
  }
  return out + "]";
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Rank of a serial type in SQLite's order: NULL, numbers, text, blobs. */
const classOf = (t: number) => t === 0 ? 0 : t < 10 ? 1 : t & 1 ? 2 : 3;

/** A numeric field (serial types 1-9): a number, or a bigint for integers beyond 2^53. */
function numberAt(buf: Uint8Array, t: number, off: number): number | bigint {
  const v = valueAt(buf, null, t, off);
  if (typeof v === "number") return v;
  const { $int, $real } = v as { $int?: string; $real?: string };
  if ($int !== undefined) return BigInt($int);
  if ($real === "NaN") throw new PageWalkError("NaN in a key");
  return Number($real);
}

/** An integer against a float, exactly. */
function intVersusFloat(i: number | bigint, r: number): number {
  if (typeof i === "number") return i < r ? -1 : i > r ? 1 : 0;
  if (!Number.isFinite(r)) return r > 0 ? -1 : 1;
  if (Number.isInteger(r)) {
    const y = BigInt(r);
    return i < y ? -1 : i > y ? 1 : 0;
  }
  // A float with a fraction is below 2^52 in magnitude; i is beyond 2^53.
  return i > 0n ? 1 : -1;
}

function compareNumeric(
  a: number | bigint,
  fa: boolean,
  b: number | bigint,
  fb: boolean,
): number {
  if (fa === fb || (typeof a === "number" && typeof b === "number")) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    // Two integers, one beyond 2^53.
    const x = BigInt(a), y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return fa ? -intVersusFloat(b, a as number) : intVersusFloat(a, b as number);
}

/**
 * Text under a collation: 0 BINARY (bytes), 1 NOCASE (ASCII letters folded
 * to lower case, byte by byte), 2 RTRIM (trailing spaces ignored, then
 * bytes); then the shorter first.
 */
function compareText(
  a: Uint8Array,
  ai: number,
  al: number,
  b: Uint8Array,
  bi: number,
  bl: number,
  coll: number,
): number {
  if (coll === 2) {
    while (al > 0 && a[ai + al - 1] === 0x20) al--;
    while (bl > 0 && b[bi + bl - 1] === 0x20) bl--;
  }
  const n = al < bl ? al : bl;
  for (let k = 0; k < n; k++) {
    let x = a[ai + k]!;
    let y = b[bi + k]!;
    if (x === y) continue;
    if (coll === 1) {
      if (x >= 0x41 && x <= 0x5a) x += 0x20;
      if (y >= 0x41 && y <= 0x5a) y += 0x20;
      if (x === y) continue;
    }
    return x < y ? -1 : 1;
  }
  return al < bl ? -1 : al > bl ? 1 : 0;
}

/** Two records' keys in a `WITHOUT ROWID` table's key order. */
function compareRecordKeys(x: KeyView, y: KeyView, order: KeyOrder): number {
  for (let i = 0; i < order.nKey; i++) {
    const ta = x.types[i]!;
    const tb = y.types[i]!;
    const ca = classOf(ta);
    const cb = classOf(tb);
    let c: number;
    if (ca !== cb) c = ca < cb ? -1 : 1;
    else if (ca === 0) c = 0;
    else if (ca === 1) {
      c = compareNumeric(
        numberAt(x.buf, ta, x.offs[i]!),
        ta === 7,
        numberAt(y.buf, tb, y.offs[i]!),
        tb === 7,
      );
    } else {
      c = compareText(
        x.buf,
        x.offs[i]!,
        x.offs[i + 1]! - x.offs[i]!,
        y.buf,
        y.offs[i]!,
        y.offs[i + 1]! - y.offs[i]!,
        ca === 2 ? order.coll[i]! : 0,
      );
    }
    if (c !== 0) return order.desc[i] ? -c : c;
  }
  return 0;
}

/**
 * Compare a rowid table identified by another primary key: rows are
 * merge-compared by rowid as usual (equal rowids with equal bytes are the
 * same row: a key is unique, so such rows are nowhere else); the others
 * are the same row when they have the same rowid and key, else they are
 * kept by key (the changed rows only) and matched by key at the end (a
 * row whose rowid changed, `REPLACE`). The lists are then put in key
 * order, as the snapshot lists them.
 */
export function diffRekeyed(
  part: RegionDiff,
  cb: LeafCursor,
  ca: LeafCursor,
  planB: TablePlan | undefined,
  planA: TablePlan | undefined,
  comparer: RowComparer | null,
  masks: readonly MaskRule[] | undefined,
  stats: SqliteDiffStats,
  rows: RowKeeper,
  pkIndex: PkIndex | null,
  faults: KeyedFaults,
): void {
  const nb = planB?.columns.length ?? 0;
  const na = planA?.columns.length ?? 0;
  const hB = new RecordHeader(nb), hA = new RecordHeader(na);
  const keys = new KeyWriter();
  const tb = hB.types, ob = hB.offs, ta = hA.types, oa = hA.offs;
  /** Parse the record at `buf[at, at + size)`: its field count (offsets into `buf`). */
  const parse = (
    buf: Uint8Array,
    at: number,
    size: number,
    plan: TablePlan,
    h: RecordHeader,
  ): number => {
    const count = h.parse(buf, at, size);
    if (count < 0) throw new PageWalkError("record needs SQL");
    for (const c of plan.keyIdx) {
      // Several rows may have a NULL key (a rowid table allows it): the
      // snapshot then numbers them in an order this reader does not know.
      if (c >= count || h.types[c] === 0) {
        throw new PageWalkError(`table ${plan.name}: a NULL primary key`);
      }
    }
    return count;
  };
  const str = (
    buf: Uint8Array,
    plan: TablePlan,
    types: Int32Array,
    offs: Int32Array,
  ): string => keys.write(buf, types, offs, plan.keyIdx.length, plan.keyIdx);
  // The current record of a cursor: in its page when it does not overflow
  // (no copy), else its assembled payload.
  let buf: Uint8Array = cb.page;
  let at = 0;
  const record = (c: LeafCursor): void => {
    if (c.local === c.size) {
      buf = c.page;
      at = c.at;
    } else {
      buf = c.payload();
      at = 0;
    }
  };
  const sameKeyIdx = planB !== undefined && planA !== undefined &&
    planB.keyIdx.length === planA.keyIdx.length &&
    planB.keyIdx.every((c, i) => c === planA.keyIdx[i]);
  // Whether the changed rows, found in rowid order, are in key order too
  // (then they need no sort): each key against the last one's, as bytes.
  let changedInOrder = true;
  const last = planB === undefined ? null : new LastKey(planB.keyIdx);
  // The rowid of each changed row found in the merge (ascending); whether
  // some changed row was matched by key instead (its rowid changed).
  const changedRowids: number[] = [];
  let rematched = false;
  const compare = (
    pb: Uint8Array,
    pa: Uint8Array,
  ): RecordFieldChange[] => {
    if (
      comparer !== null && pb.length === pa.length &&
      sameBytes(pb, 0, pa, 0, pb.length)
    ) return NO_CHANGES;
    stats.rowsDecoded += 2;
    return comparer !== null
      ? comparer.compare(pb, 0, pb.length, pa, 0, pa.length, 0)
      : diffFields(
        rowValue(pb, 0, planB!, masks),
        rowValue(pa, 0, planA!, masks),
      );
  };
  const changed = (
    key: string,
    fields: RecordFieldChange[],
    pb: Uint8Array,
    atB: number,
    sizeB: number,
    pa: Uint8Array,
    atA: number,
    sizeA: number,
  ) =>
    rows.changed(
      part,
      key,
      fields,
      () => rowValue(pb.subarray(atB, atB + sizeB), 0, planB!, masks),
      () => rowValue(pa.subarray(atA, atA + sizeA), 0, planA!, masks),
    );
  // Rows that differ, kept by key until the other side's is found.
  const keptB = new Map<string, Uint8Array>();
  const keptA = new Map<string, Uint8Array>();
  // A table on one side only: nothing to match, its keys are the answer.
  const oneSided = planB === undefined || planA === undefined;
  const seen = new Set<string>();
  const keep = (
    m: Map<string, Uint8Array>,
    key: string,
    b: Uint8Array,
    from: number,
    size: number,
  ) => {
    if (oneSided) {
      if (seen.has(key)) throw new PageWalkError("two rows with one key");
      seen.add(key);
      rows.row(
        part,
        m === keptB ? "was" : "put",
        key,
        () =>
          rowValue(
            b.subarray(from, from + size),
            0,
            (m === keptB ? planB : planA)!,
            masks,
          ),
      );
      return;
    }
    if (m.has(key)) throw new PageWalkError("two rows with one key");
    // A copy: the page's memory is reused.
    m.set(key, b.slice(from, from + size));
  };
  let hb = cb.next();
  let ha = ca.next();
  while (hb || ha) {
    if (hb && ha && cb.rowid === ca.rowid) {
      if (
        comparer !== null && cb.size === ca.size && cb.local === cb.size &&
        ca.local === ca.size &&
        sameBytes(cb.page, cb.at, ca.page, ca.at, cb.size)
      ) {
        hb = cb.next();
        ha = ca.next();
        continue;
      }
      record(cb);
      const pb = buf, atB = at;
      record(ca);
      const pa = buf, atA = at;
      const countB = parse(pb, atB, cb.size, planB!, hB);
      const countA = parse(pa, atA, ca.size, planA!, hA);
      let same = sameKeyIdx;
      for (let i = 0; same && i < planB!.keyIdx.length; i++) {
        const c = planB!.keyIdx[i]!;
        const s = ob[c]!, e = ob[c + 1]!, s2 = oa[c]!;
        if (
          tb[c] !== ta[c] || e - s !== oa[c + 1]! - s2 ||
          !sameBytes(pb, s, pa, s2, e - s)
        ) {
          same = false;
          break;
        }
      }
      // Keys with other bytes may still be the same values (1 and 1.0).
      const kb = same ? null : str(pb, planB!, tb, ob);
      if (same || kb === str(pa, planA!, ta, oa)) {
        let fields: RecordFieldChange[];
        if (comparer === null) {
          stats.rowsDecoded += 2;
          fields = diffFields(
            rowValue(pb.subarray(atB, atB + cb.size), 0, planB!, masks),
            rowValue(pa.subarray(atA, atA + ca.size), 0, planA!, masks),
          );
        } else if (
          cb.size === ca.size && sameBytes(pb, atB, pa, atA, cb.size)
        ) fields = NO_CHANGES;
        else {
          stats.rowsDecoded += 2;
          fields = comparer.compareParsed(
            pb,
            countB,
            tb,
            ob,
            pa,
            countA,
            ta,
            oa,
            0,
          );
        }
        if (fields.length > 0) {
          if (changedInOrder && !faults.changedRowsInKeyOrder) {
            changedInOrder = last!.below(pb, tb, ob);
          }
          changedRowids.push(cb.rowid);
          changed(
            kb ?? str(pb, planB!, tb, ob),
            fields,
            pb,
            atB,
            cb.size,
            pa,
            atA,
            ca.size,
          );
        }
      } else {
        keep(keptB, kb!, pb, atB, cb.size);
        keep(keptA, str(pa, planA!, ta, oa), pa, atA, ca.size);
      }
      hb = cb.next();
      ha = ca.next();
    } else if (hb && (!ha || cb.rowid < ca.rowid)) {
      record(cb);
      parse(buf, at, cb.size, planB!, hB);
      keep(keptB, str(buf, planB!, tb, ob), buf, at, cb.size);
      hb = cb.next();
    } else {
      record(ca);
      parse(buf, at, ca.size, planA!, hA);
      keep(keptA, str(buf, planA!, ta, oa), buf, at, ca.size);
      ha = ca.next();
    }
  }
  for (const [key, pb] of keptB) {
    const pa = keptA.get(key);
    if (pa === undefined) {
      rows.row(part, "was", key, () => rowValue(pb, 0, planB!, masks));
    } else {
      keptA.delete(key);
      const fields = compare(pb, pa);
      if (fields.length > 0) {
        changedInOrder = false;
        rematched = true;
        changed(key, fields, pb, 0, pb.length, pa, 0, pa.length);
      }
    }
  }
  for (const [key, pa] of keptA) {
    rows.row(part, "put", key, () => rowValue(pa, 0, planA!, masks));
  }
  rows.done(part, true);
  stats.leavesRead += cb.leavesRead + ca.leavesRead;
  // Found in rowid order; a snapshot lists them in key order.
  part.added = sortByKey(part.added);
  part.removed = sortByKey(part.removed);
  if (!changedInOrder && !faults.changedRowsInKeyOrder) {
    // Many changed rows out of key order: the primary-key index lists the
    // rowids in key order, in time linear in the table's rows rather than
    // a sort's c log c comparisons (random keys, every row changed).
    const c = part.changed.length;
    const rowsEstimate = ca.leavesRead > 0
      ? (ca.cellsRead / ca.leavesRead) * ca.leafCount
      : Infinity;
    let byIndex: RecordChange[] | null = null;
    if (
      pkIndex !== null && !rematched && changedRowids.length === c &&
      c > 1 &&
      (faults.indexOrderAlways || c * Math.log2(c) >= rowsEstimate)
    ) byIndex = inIndexOrder(part.changed, changedRowids, pkIndex);
    if (byIndex !== null) stats.orderedByIndex++;
    part.changed = byIndex ?? sortByKey(part.changed);
  }
}

/** Where a keyed rowid table's primary-key index is, on the after side. */
export interface PkIndex {
  src: PageSource;
  g: Geometry;
  root: number;
  /** Key columns (the index's records are these, then the rowid). */
  nKey: number;
}

/**
 * `xs` (the changed rows of rowids `rowids`, ascending) in the order of the
 * primary-key index: its records read in key order (leaves and interior
 * cells), each checked to be above the one before (so the order is the
 * snapshot's even where the index were not), each rowid looked up among
 * the changed ones. Null when the index is not as expected.
 */
function inIndexOrder<T>(
  xs: readonly T[],
  rowids: readonly number[],
  ix: PkIndex,
): T[] | null {
  const { src, g, nKey } = ix;
  const out: T[] = [];
  const last = new LastKey(Array.from({ length: nKey }, (_, i) => i));
  const h = new RecordHeader(nKey + 1);
  const { types, offs } = h;
  const v = new VarintReader();
  /** Take the record of the cell at `p`; whether it overflowed (pages were read). */
  const record = (page: Uint8Array, p: number): boolean => {
    const size = v.read(page, p);
    p = v.end;
    const local = localSize(g, size, g.maxLocalIndex);
    if (p + local > page.length) {
      throw new PageWalkError("cell past the page end");
    }
    let buf = page;
    let at = p;
    if (local < size) {
      buf = assemble(src, g, page, p, size, local);
      at = 0;
    }
    const count = h.parse(buf, at, size);
    const t = types[nKey]!;
    if (count !== nKey + 1 || !((t >= 1 && t <= 6) || t === 8 || t === 9)) {
      throw new PageWalkError("unexpected index record");
    }
    if (!last.below(buf, types, offs)) {
      throw new PageWalkError("index keys not in order");
    }
    const rowid = numberAt(buf, t, offs[nKey]!);
    if (typeof rowid !== "number") return local < size;
    // Binary search among the changed rowids.
    let lo = 0, hi = rowids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = rowids[mid]!;
      if (r === rowid) {
        out.push(xs[mid]!);
        break;
      }
      if (r < rowid) lo = mid + 1;
      else hi = mid - 1;
    }
    return local < size;
  };
  const visit = (pgno: number, depth: number): void => {
    if (depth > 64 || pgno < 1 || pgno > src.pageCount) {
      throw new PageWalkError(`bad page ${pgno}`);
    }
    let page = src.page(pgno);
    const h = hdrOf(pgno);
    const type = page[h];
    const cells = u16(page, h + 3);
    if (type === 0x0a) {
      for (let i = 0; i < cells; i++) {
        if (record(page, u16(page, h + 8 + 2 * i))) page = src.page(pgno);
      }
      return;
    }
    if (type !== 0x02) throw new PageWalkError(`page ${pgno} is no index page`);
    for (let i = 0; i < cells; i++) {
      const ptr = u16(page, h + 12 + 2 * i);
      visit(u32(page, ptr), depth + 1);
      // Reading the subtree may have reused this page's memory.
      page = src.page(pgno);
      if (record(page, ptr + 4)) page = src.page(pgno);
    }
    visit(u32(page, h + 8), depth + 1);
  };
  try {
    visit(ix.root, 0);
  } catch (e) {
    if (e instanceof PageWalkError) return null;
    throw e;
  }
  return out.length === xs.length ? out : null;
}

/**
 * The key of the last changed row of a rowid table identified by another
 * primary key (a copy of its key fields), to tell whether the next one is
 * above it in BINARY order (the snapshot's order of key values).
 */
class LastKey {
  #keyIdx: readonly number[];
  #buf = new Uint8Array(64);
  #types: Int32Array;
  #start: Int32Array;
  #end: Int32Array;
  #set = false;
  constructor(keyIdx: readonly number[]) {
    this.#keyIdx = keyIdx;
    this.#types = new Int32Array(keyIdx.length);
    this.#start = new Int32Array(keyIdx.length);
    this.#end = new Int32Array(keyIdx.length);
  }

  /**
   * Whether the key of the record in `buf` (serial types and offsets as
   * a `RecordHeader` gives them) is above the last one; it is the last one
   * then.
   */
  below(buf: Uint8Array, types: Int32Array, offs: Int32Array): boolean {
    const k = this.#keyIdx;
    if (this.#set) {
      let c = 0;
      for (let i = 0; i < k.length && c === 0; i++) {
        const f = k[i]!;
        const tx = this.#types[i]!;
        const ty = types[f]!;
        const cx = classOf(tx);
        const cy = classOf(ty);
        if (cx !== cy) c = cx < cy ? -1 : 1;
        else if (cx === 0) c = 0;
        else if (cx === 1) {
          c = compareNumeric(
            numberAt(this.#buf, tx, this.#start[i]!),
            tx === 7,
            numberAt(buf, ty, offs[f]!),
            ty === 7,
          );
        } else {
          c = compareText(
            this.#buf,
            this.#start[i]!,
            this.#end[i]! - this.#start[i]!,
            buf,
            offs[f]!,
            offs[f + 1]! - offs[f]!,
            0,
          );
        }
      }
      if (c >= 0) return false;
    }
    let n = 0;
    for (const f of k) n += offs[f + 1]! - offs[f]!;
    if (n > this.#buf.length) this.#buf = new Uint8Array(n * 2);
    let p = 0;
    for (let i = 0; i < k.length; i++) {
      const f = k[i]!;
      this.#types[i] = types[f]!;
      this.#start[i] = p;
      for (let j = offs[f]!; j < offs[f + 1]!; j++) this.#buf[p++] = buf[j]!;
      this.#end[i] = p;
    }
    this.#set = true;
    return true;
  }
}

/** Whether two records' key fields have the same serial types and bytes. */
function sameKeyBytes(x: KeyView, y: KeyView, nKey: number): boolean {
  for (let i = 0; i < nKey; i++) {
    if (x.types[i] !== y.types[i]) return false;
  }
  const xs = x.offs[0]!, ys = y.offs[0]!;
  const n = x.offs[nKey]! - xs;
  return n === y.offs[nKey]! - ys && sameBytes(x.buf, xs, y.buf, ys, n);
}

function sameKeyOrder(x: KeyOrder, y: KeyOrder): boolean {
  return x.nKey === y.nKey &&
    x.coll.every((c, i) => c === y.coll[i] && x.desc[i] === y.desc[i]);
}

/**
 * Merge-compare a `WITHOUT ROWID` table's records on both sides in key
 * order: records at the same place with the same bytes are equal; at the
 * same place (keys equal under their collations) with the same key values
 * they are the same row, compared field by field; with other key values
 * (NOCASE 'a' and 'A') one row was removed and another added.
 */
export function diffKeyed(
  part: RegionDiff,
  cb: KeyCursor,
  ca: KeyCursor,
  samePlan: boolean,
  masks: readonly MaskRule[] | undefined,
  stats: SqliteDiffStats,
  rows: RowKeeper,
  faults: KeyedFaults,
): void {
  const order = cb.order ?? ca.order!;
  const wasValue = () =>
    rowValue(cb.payload(), 0, cb.plan!, masks, cb.order!.colField);
  const putValue = () =>
    rowValue(ca.payload(), 0, ca.plan!, masks, ca.order!.colField);
  const removed = () => rows.row(part, "was", cb.keyString(), wasValue);
  const added = () => rows.row(part, "put", ca.keyString(), putValue);
  if (cb.order && ca.order) {
    if (
      !sameKeyOrder(cb.order, ca.order) ||
      cb.plan!.identity.join("\0") !== ca.plan!.identity.join("\0")
    ) {
      throw new PageWalkError(`table ${cb.plan!.name}: its key changed`);
    }
  }
  const comparer = samePlan && flatOrder(cb.plan!.columns)
    ? new RowComparer(cb.plan!, masks, cb.order!.colField)
    : null;
  let hb = cb.next();
  let ha = ca.next();
  while (hb && ha) {
    const c = compareRecordKeys(cb.key, ca.key, order);
    if (c === 0) {
      if (
        samePlan && cb.size === ca.size && cb.local === cb.size &&
        ca.local === ca.size &&
        sameBytes(cb.page, cb.at, ca.page, ca.at, cb.size)
      ) {
        hb = cb.next();
        ha = ca.next();
        continue;
      }
      // Keys with the same serial types and bytes are the same values;
      // others may still be (an integer and an equal real).
      let kb: string | null = null;
      let ka: string | null = null;
      if (
        !sameKeyBytes(cb.key, ca.key, order.nKey) &&
        !faults.collationEqualIsSameRow
      ) {
        kb = cb.keyString();
        ka = ca.keyString();
      }
      if (kb !== ka) {
        rows.row(part, "was", kb!, wasValue);
        rows.row(part, "put", ka!, putValue);
      } else {
        const pb = cb.payload();
        const pa = ca.payload();
        let fields: RecordFieldChange[] = NO_CHANGES;
        if (
          !samePlan || pb.length !== pa.length ||
          !sameBytes(pb, 0, pa, 0, pb.length)
        ) {
          stats.rowsDecoded += 2;
          if (comparer !== null) {
            fields = comparer.compare(pb, 0, pb.length, pa, 0, pa.length, 0);
          } else {
            fields = diffFields(wasValue(), putValue());
          }
        }
        if (fields.length > 0) {
          rows.changed(part, kb ?? cb.keyString(), fields, wasValue, putValue);
        }
      }
      hb = cb.next();
      ha = ca.next();
    } else if (c < 0) {
      removed();
      hb = cb.next();
    } else {
      added();
      ha = ca.next();
    }
  }
  for (; hb; hb = cb.next()) removed();
  for (; ha; ha = ca.next()) added();
  rows.done(part, !order.binaryAsc);
  stats.leavesRead += cb.leavesRead + ca.leavesRead;
  if (!order.binaryAsc) {
    // Found in the table's key order; a snapshot lists keys in BINARY
    // ascending order.
    part.added = sortByKey(part.added);
    part.removed = sortByKey(part.removed);
    part.changed = sortByKey(part.changed);
  }
}

/** Whether an index page (leaf or interior) has a cell spilling to overflow pages. */
export function indexPageOverflows(
  page: Uint8Array,
  pgno: number,
  g: Geometry,
): boolean {
  const h = hdrOf(pgno);
  const type = page[h];
  if (type !== 0x0a && type !== 0x02) return true;
  const cells = u16(page, h + 3);
  const ptrs = h + (type === 0x02 ? 12 : 8);
  const skip = type === 0x02 ? 4 : 0;
  const v = new VarintReader();
  for (let c = 0; c < cells; c++) {
    if (v.read(page, u16(page, ptrs + 2 * c) + skip) > g.maxLocalIndex) {
      return true;
    }
  }
  return false;
}
