import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Sha256 } from "./_sha256.ts";

Deno.test("Sha256 matches node:crypto for every length around block edges, fed in uneven chunks", () => {
  const data = new Uint8Array(4096);
  for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 0xff;
  for (
    const n of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000, 4096]
  ) {
    const bytes = data.subarray(0, n);
    const want = createHash("sha256").update(bytes).digest("hex");
    const whole = new Sha256().update(bytes).hex();
    assert.equal(whole, want, `length ${n}`);
    const h = new Sha256();
    for (let i = 0; i < n; i += 37) h.update(bytes.subarray(i, i + 37));
    assert.equal(h.hex(), want, `length ${n} in chunks`);
  }
  assert.equal(
    new Sha256().update(new TextEncoder().encode("abc")).hex(),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});
