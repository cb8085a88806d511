/**
 * Merge a SQLite write-ahead log into a database image, in memory. Pure.
 *
 * A database image read as bytes does not hold what an un-checkpointed
 * `-wal` file holds. This applies the WAL's committed frames the way SQLite's
 * recovery does: frames count only while their salts match the WAL header
 * and their cumulative checksums verify; only frames up to the last valid
 * commit frame are applied; the image is sized to that commit's page count.
 * The result is marked as a rollback-journal database (header bytes 18-19
 * = 1) so SQLite reads it as a plain image.
 *
 * Format: https://www.sqlite.org/fileformat2.html#walformat
 *
 * @module
 */
import { imagePageSize } from "./format.ts";

/** The outcome of a WAL merge. */
export interface WalMerge {
  /** The database image with committed frames applied. */
  image: Uint8Array;
  /** Frames applied (up to the last valid commit). */
  framesApplied: number;
  /** Valid frames after the last commit (an open or torn transaction), ignored. */
  framesUncommitted: number;
  /** Why the WAL (or its tail) was not used, if it was not. */
  problems: string[];
}

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Cumulative WAL checksum over `data` (length a multiple of 8), seeded with s0, s1. */
function checksum(
  data: Uint8Array,
  bigEndian: boolean,
  s: [number, number],
): [number, number] {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let s0 = s[0];
  let s1 = s[1];
  const le = !bigEndian;
  for (let i = 0; i < data.byteLength; i += 8) {
    s0 = (s0 + dv.getUint32(i, le) + s1) >>> 0;
    s1 = (s1 + dv.getUint32(i + 4, le) + s0) >>> 0;
  }
  return [s0, s1];
}

/** Where each committed page of a WAL is: what {@linkcode walIndex} returns. */
export interface WalIndex {
  /** Page size of the WAL (0 when the WAL is ignored). */
  pageSize: number;
  /** Page number -> byte offset (in the WAL) of its last committed frame. */
  frames: Map<number, number>;
  /** The database size in pages after the last commit (0: no commit). */
  dbPages: number;
  /** Frames up to the last valid commit. */
  framesApplied: number;
  /** Valid frames after the last commit (an open or torn transaction), ignored. */
  framesUncommitted: number;
  /** Why the WAL (or its tail) was not used, if it was not. */
  problems: string[];
}

/**
 * Index the committed frames of `wal` for a database whose page size is
 * `dbPageSize` (null when the database file is empty or missing): the
 * rules of {@linkcode mergeWal}, without building the image.
 */
export function walIndex(dbPageSize: number | null, wal: Uint8Array): WalIndex {
  const problems: string[] = [];
  const none = (uncommitted = 0): WalIndex => ({
    pageSize: 0,
    frames: new Map(),
    dbPages: 0,
    framesApplied: 0,
    framesUncommitted: uncommitted,
    problems,
  });
  if (wal.length === 0) return none();
  if (wal.length < WAL_HEADER) {
    problems.push(
      `-wal is ${wal.length} bytes, shorter than a WAL header: ignored`,
    );
    return none();
  }
  const dv = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = dv.getUint32(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) {
    problems.push(
      `-wal has no WAL magic number (0x${magic.toString(16)}): ignored`,
    );
    return none();
  }
  const bigEndian = (magic & 1) === 1;
  const pageSize = dv.getUint32(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
    problems.push(`-wal header has an invalid page size ${pageSize}: ignored`);
    return none();
  }
  const salt1 = dv.getUint32(16);
  const salt2 = dv.getUint32(20);
  let sum = checksum(wal.subarray(0, 24), bigEndian, [0, 0]);
  if (sum[0] !== dv.getUint32(24) || sum[1] !== dv.getUint32(28)) {
    problems.push("-wal header checksum does not verify: ignored");
    return none();
  }
  if (dbPageSize !== null && dbPageSize !== pageSize) {
    problems.push(
      `-wal page size ${pageSize} differs from the database's ${dbPageSize}: ignored`,
    );
    return none();
  }
  // Walk frames; remember the last commit.
  const frames: { pgno: number; offset: number }[] = [];
  let committed = 0;
  let dbPages = 0;
  let off = WAL_HEADER;
  const frameSize = FRAME_HEADER + pageSize;
  while (off + frameSize <= wal.length) {
    const pgno = dv.getUint32(off);
    const commitSize = dv.getUint32(off + 4);
    if (
      dv.getUint32(off + 8) !== salt1 || dv.getUint32(off + 12) !== salt2 ||
      pgno === 0
    ) break;
    sum = checksum(wal.subarray(off, off + 8), bigEndian, sum);
    sum = checksum(
      wal.subarray(off + FRAME_HEADER, off + frameSize),
      bigEndian,
      sum,
    );
    if (
      sum[0] !== dv.getUint32(off + 16) || sum[1] !== dv.getUint32(off + 20)
    ) break;
    frames.push({ pgno, offset: off + FRAME_HEADER });
    if (commitSize !== 0) {
      committed = frames.length;
      dbPages = commitSize;
    }
    off += frameSize;
  }
  if (committed === 0) return none(frames.length);
  const map = new Map<number, number>();
  for (let k = 0; k < committed; k++) {
    const f = frames[k]!;
    if (f.pgno <= dbPages) map.set(f.pgno, f.offset);
  }
  return {
    pageSize,
    frames: map,
    dbPages,
    framesApplied: committed,
    framesUncommitted: frames.length - committed,
    problems,
  };
}

/**
 * Apply the committed frames of `wal` to `image` (neither is modified).
 *
 * @example
 * ```ts
 * async function merged(db: string): Promise<Uint8Array> {
 *   return mergeWal(await Deno.readFile(db), await Deno.readFile(`${db}-wal`)).image;
 * }
 * ```
 */
export function mergeWal(image: Uint8Array, wal: Uint8Array): WalMerge {
  const ix = walIndex(image.length > 0 ? imagePageSize(image) : null, wal);
  const result = (img: Uint8Array): WalMerge => ({
    image: markRollback(img),
    framesApplied: ix.framesApplied,
    framesUncommitted: ix.framesUncommitted,
    problems: ix.problems,
  });
  if (ix.dbPages === 0) return result(image);
  const pageSize = ix.pageSize;
  const out = new Uint8Array(ix.dbPages * pageSize);
  out.set(image.subarray(0, Math.min(image.length, out.length)));
  for (const [pgno, offset] of ix.frames) {
    out.set(wal.subarray(offset, offset + pageSize), (pgno - 1) * pageSize);
  }
  return result(out);
}

/** Copy-on-write: mark a WAL-mode header (bytes 18-19 = 2) as rollback mode (1). */
function markRollback(image: Uint8Array): Uint8Array {
  if (image.length >= 100 && (image[18] === 2 || image[19] === 2)) {
    const copy = image.slice();
    copy[18] = 1;
    copy[19] = 1;
    return copy;
  }
  return image;
}
