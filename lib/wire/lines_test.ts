import assert from "node:assert/strict";
import { boundedLines, LineTooLong } from "./lines.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function lines(chunks: string[], max: number): Promise<string[]> {
  const out: string[] = [];
  const s = ReadableStream.from(chunks.map((c) => enc.encode(c)));
  for await (const l of boundedLines(s, max)) out.push(dec.decode(l));
  return out;
}

Deno.test("boundedLines: lines split across chunks, several in one chunk, a last line without a newline", async () => {
  assert.deepEqual(await lines(["ab", "c\nd\n\ne", "f\ng"], 8), [
    "abc",
    "d",
    "",
    "ef",
    "g",
  ]);
  assert.deepEqual(await lines([], 8), []);
});

Deno.test("boundedLines: a line over the bound throws before the rest of it is read, with its first bytes", async () => {
  let pulled = 0;
  const s = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled++;
      c.enqueue(enc.encode(pulled === 1 ? "ok\n12345" : "6789"));
    },
  });
  const got: string[] = [];
  await assert.rejects(async () => {
    for await (const l of boundedLines(s, 8)) got.push(dec.decode(l));
  }, (e: unknown) => {
    assert.ok(e instanceof LineTooLong);
    assert.equal(dec.decode(e.head), "123456789");
    return true;
  });
  assert.deepEqual(got, ["ok"]);
  // The stream never ends: the line was refused while it was still arriving.
  assert.ok(pulled <= 3, `${pulled} chunks pulled`);
  // Exactly at the bound is fine; one byte more is not.
  assert.deepEqual(await lines(["12345678\n"], 8), ["12345678"]);
  await assert.rejects(() => lines(["1234", "56789\n"], 8), LineTooLong);
});
