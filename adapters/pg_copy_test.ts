import assert from "node:assert/strict";
import { CopyTextRows, unescapeCopyText } from "./pg_copy.ts";

const enc = new TextEncoder();

function decode(
  columns: number,
  pieces: Uint8Array[],
): (string | null)[][] {
  const rows: (string | null)[][] = [];
  const d = new CopyTextRows(columns, (r) => rows.push([...r]));
  for (const p of pieces) d.push(p);
  d.end();
  assert.equal(d.rows, rows.length);
  return rows;
}

Deno.test("pg copy: escapes, NULL and a literal \\N text are told apart", () => {
  assert.equal(unescapeCopyText("a\\tb\\nc\\rd\\\\e"), "a\tb\nc\rd\\e");
  assert.equal(unescapeCopyText("\\b\\f\\v"), "\b\f\v");
  assert.equal(unescapeCopyText("\\101\\x41\\q"), "AAq");
  assert.throws(() => unescapeCopyText("a\\"), SyntaxError);
  // `\N` alone is NULL; the text "\N" is written `\\N`.
  assert.deepEqual(decode(3, [enc.encode("\\N\t\\\\N\t\n")]), [[
    null,
    "\\N",
    "",
  ]]);
});

Deno.test("pg copy: rows come out the same however the bytes are cut (multi-byte characters, escapes)", () => {
  const text = "1\té\\tx\\\\\t\\N\n2\t日本\\n語\t😀\n3\t\t\n";
  const expected = [
    ["1", "é\tx\\", null],
    ["2", "日本\n語", "😀"],
    ["3", "", ""],
  ];
  const bytes = enc.encode(text);
  assert.deepEqual(decode(3, [bytes]), expected);
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.deepEqual(
      decode(3, [bytes.subarray(0, cut), bytes.subarray(cut)]),
      expected,
      `cut at ${cut}`,
    );
  }
  assert.deepEqual(
    decode(3, [...bytes].map((b) => Uint8Array.of(b))),
    expected,
  );
});

Deno.test("pg copy: many rows across batches, and a row longer than a batch", () => {
  const long = "x".repeat(CopyTextRows.batchBytes * 2 + 7);
  const lines: string[] = [];
  for (let i = 0; i < 50_000; i++) lines.push(`${i}\tv${i}\\t`);
  lines.splice(25_000, 0, `long\t${long}`);
  const bytes = enc.encode(lines.join("\n") + "\n");
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += 8191) {
    pieces.push(bytes.subarray(i, i + 8191));
  }
  const rows = decode(2, pieces);
  assert.equal(rows.length, 50_001);
  assert.deepEqual(rows[0], ["0", "v0\t"]);
  assert.deepEqual(rows[25_000], ["long", long]);
  assert.deepEqual(rows[50_000], ["49999", "v49999\t"]);
});

Deno.test("pg copy: a truncated stream, a wrong field count or invalid UTF-8 is an error", () => {
  assert.throws(() => decode(1, [enc.encode("1\n2")]), /ends inside a row/);
  assert.throws(
    () => decode(2, [enc.encode("1\n")]),
    /has 1 fields, expected 2/,
  );
  assert.throws(
    () => decode(2, [enc.encode("1\t2\t3\n")]),
    /has more than 2 fields, expected 2/,
  );
  assert.throws(() => decode(1, [Uint8Array.of(0xff, 0x0a)]), TypeError);
  // A table without columns: one empty line per row.
  assert.deepEqual(decode(0, [enc.encode("\n\n")]), [[], []]);
});
