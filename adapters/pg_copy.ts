/**
 * Rows of `COPY … TO STDOUT` in PostgreSQL's text format. Pure.
 *
 * The text format is one line per row, fields separated by a tab, NULL
 * written `\N`, and a backslash escaping the characters that would break
 * the layout (`\t`, `\n`, `\r`, `\b`, `\f`, `\v`, `\\`). PostgreSQL sends
 * the bytes in CopyData messages; {@linkcode CopyTextRows} takes them in
 * any pieces, keeps at most about {@linkcode CopyTextRows.batchBytes} of
 * them, and hands every complete row to its callback as the same text
 * values a query returns (null for NULL). Raw newlines only end rows (a
 * newline in a value is escaped), so a batch is cut at its last newline
 * and decoded as UTF-8 in one piece.
 *
 * @module
 */

/**
 * Receives one row's fields: text values, null for NULL. The array is
 * reused for the next row: keep its values, not the array.
 */
export type CopyRowSink = (fields: (string | null)[]) => void;

const NEWLINE = 0x0a;
const ESCAPES: Record<string, string> = {
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/**
 * Undo COPY's text-format escaping of one field (`\N`, the NULL marker, is
 * handled by the caller). Besides the letters above, `\` followed by one to
 * three octal digits or by `x` and one or two hex digits is that character
 * code, and a backslash before any other character is that character, as
 * `COPY … FROM` reads them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(unescapeCopyText("a\\tb\\\\c"), "a\tb\\c");
 * ```
 */
export function unescapeCopyText(field: string): string {
  let out = "";
  let from = 0;
  let i = field.indexOf("\\");
  while (i >= 0) {
    out += field.slice(from, i);
    const c = field[i + 1];
    if (c === undefined) {
      throw new SyntaxError("COPY text field ends with a lone backslash");
    }
    let next = i + 2;
    const letter = ESCAPES[c];
    if (letter !== undefined) out += letter;
    else if (c >= "0" && c <= "7") {
      let j = i + 1;
      while (j < i + 4 && field[j]! >= "0" && field[j]! <= "7") j++;
      out += String.fromCharCode(parseInt(field.slice(i + 1, j), 8));
      next = j;
    } else if (c === "x" && /[0-9a-fA-F]/.test(field[i + 2] ?? "")) {
      let j = i + 2;
      while (j < i + 4 && /[0-9a-fA-F]/.test(field[j] ?? "")) j++;
      out += String.fromCharCode(parseInt(field.slice(i + 2, j), 16));
      next = j;
    } else out += c;
    from = next;
    i = field.indexOf("\\", from);
  }
  return out + field.slice(from);
}

/**
 * Incremental decoder of COPY text-format rows with a bounded buffer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const rows: (string | null)[][] = [];
 * // The row array is reused for every row: copy what you keep.
 * const d = new CopyTextRows(2, (r) => rows.push([...r]));
 * d.push(new TextEncoder().encode("1\ta\\tb\n2\t"));
 * d.push(new TextEncoder().encode("\\N\n"));
 * d.end();
 * assert.deepEqual(rows, [["1", "a\tb"], ["2", null]]);
 * ```
 */
export class CopyTextRows {
  /** Bytes gathered before complete rows are decoded. */
  static readonly batchBytes = 1 << 16;
  #buf = new Uint8Array(CopyTextRows.batchBytes + (64 << 10));
  #len = 0;
  #rows = 0;
  readonly #columns: number;
  readonly #sink: CopyRowSink;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  readonly #fields: (string | null)[];

  /**
   * @param columns how many fields every row has (0: each line is an empty row)
   * @param sink called once per row, in order
   */
  constructor(columns: number, sink: CopyRowSink) {
    this.#columns = columns;
    this.#sink = sink;
    this.#fields = new Array(columns).fill(null);
  }

  /** Rows handed to the sink so far. */
  get rows(): number {
    return this.#rows;
  }

  /** Take the next piece of the stream (copied: the caller may reuse it). */
  push(chunk: Uint8Array): void {
    if (this.#len + chunk.length > this.#buf.length) {
      this.#flush(false);
      if (this.#len + chunk.length > this.#buf.length) {
        // One row longer than the buffer: grow to hold it.
        const bigger = new Uint8Array(
          Math.max(this.#buf.length * 2, this.#len + chunk.length),
        );
        bigger.set(this.#buf.subarray(0, this.#len));
        this.#buf = bigger;
      }
    }
    this.#buf.set(chunk, this.#len);
    this.#len += chunk.length;
    if (this.#len >= CopyTextRows.batchBytes) this.#flush(false);
  }

  /** The stream is over: decode what is left; a row without its newline is an error. */
  end(): void {
    this.#flush(true);
  }

  #flush(final: boolean): void {
    const buf = this.#buf;
    let cut = this.#len;
    while (cut > 0 && buf[cut - 1] !== NEWLINE) cut--;
    if (final && cut !== this.#len) {
      throw new SyntaxError(
        `COPY output ends inside a row (${
          this.#len - cut
        } bytes after the last newline)`,
      );
    }
    if (cut === 0) return;
    const text = this.#decoder.decode(buf.subarray(0, cut));
    buf.copyWithin(0, cut, this.#len);
    this.#len -= cut;
    const columns = this.#columns;
    const fields = this.#fields;
    const end = text.length;
    let pos = 0;
    // The next tab at or after pos (end: none), found once per tab.
    let tab = -1;
    while (pos < end) {
      const nl = text.indexOf("\n", pos);
      if (columns === 0) {
        if (nl !== pos) {
          throw new SyntaxError("COPY row has fields: expected none");
        }
        pos = nl + 1;
        this.#sink(fields);
        this.#rows++;
        continue;
      }
      for (let i = 0; i < columns; i++) {
        if (tab < pos) {
          tab = text.indexOf("\t", pos);
          if (tab < 0) tab = end;
        }
        const last = i === columns - 1;
        if (last ? tab < nl : tab > nl) {
          throw new SyntaxError(
            `COPY row ${this.#rows + 1} has ${
              last ? `more than ${columns}` : i + 1
            } fields, expected ${columns}`,
          );
        }
        const stop = last ? nl : tab;
        const f = text.slice(pos, stop);
        pos = stop + 1;
        fields[i] = f === "\\N"
          ? null
          : f.includes("\\")
          ? unescapeCopyText(f)
          : f;
      }
      this.#sink(fields);
      this.#rows++;
    }
  }
}
