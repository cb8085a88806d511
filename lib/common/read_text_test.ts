import assert from "node:assert/strict";
import { readTextMaybeGzip } from "./read_text.ts";

Deno.test("readTextMaybeGzip: plain and gzipped text read the same; bad gzip names the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const text = '{"a": "é", "n": [1, 2, 3]}\n'.repeat(100);
    await Deno.writeTextFile(`${dir}/r.json`, text);
    const gz = new Blob([text]).stream().pipeThrough(
      new CompressionStream("gzip"),
    );
    await Deno.writeFile(
      `${dir}/r.json.gz`,
      new Uint8Array(await new Response(gz).arrayBuffer()),
    );
    assert.equal(await readTextMaybeGzip(`${dir}/r.json`), text);
    assert.equal(await readTextMaybeGzip(`${dir}/r.json.gz`), text);
    await Deno.writeTextFile(`${dir}/bad.json.gz`, text);
    await assert.rejects(
      () => readTextMaybeGzip(`${dir}/bad.json.gz`),
      (e: Error) =>
        e instanceof SyntaxError && e.message.includes("bad.json.gz"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
