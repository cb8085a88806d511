import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  DIGESTS_AT,
  GROUP_BYTES,
  instantiateLanes,
  SCRATCH_BYTES,
} from "./sha256_lanes.ts";
import { createPrng } from "../reality/prng.ts";

/** The lanes module over a fresh shared memory of `pages` pages. */
function lanes(pages: number) {
  const memory = new WebAssembly.Memory({
    initial: pages,
    maximum: pages,
    shared: true,
  });
  const { many, compare } = instantiateLanes(memory);
  return { memory, many, compare, u8: new Uint8Array(memory.buffer) };
}

/**
 * Hash `messages` (each placed at its offset in a fresh memory, a lane
 * each, four to a group; a last group's spare lanes given length 0) and
 * read back each digest as hex.
 */
function hashAll(messages: Uint8Array[], gap = 7): string[] {
  const groups = Math.ceil(messages.length / 4);
  const list = SCRATCH_BYTES;
  let at = list + groups * GROUP_BYTES;
  const total = at + messages.reduce((n, m) => n + m.length + gap, 0);
  const { memory, many, u8 } = lanes(Math.ceil(total / 65536) + 1);
  const dv = new DataView(memory.buffer);
  // The scratch is full of garbage: the module must not rely on zeros.
  u8.fill(0xa5, 0, SCRATCH_BYTES);
  for (let j = 0; j < 4 * groups; j++) {
    const rec = list + (j >> 2) * GROUP_BYTES + 8 * (j & 3);
    const m = messages[j];
    if (m === undefined) {
      dv.setInt32(rec, 0, true);
      dv.setInt32(rec + 4, 0, true);
      continue;
    }
    u8.set(m, at);
    // What follows a message must not count either.
    u8.fill(0xff, at + m.length, at + m.length + gap);
    dv.setInt32(rec, at, true);
    dv.setInt32(rec + 4, m.length, true);
    at += m.length + gap;
  }
  const before = u8.slice(list + groups * GROUP_BYTES);
  many(list, groups, 0);
  // Messages are read, never written.
  assert.deepEqual(u8.slice(list + groups * GROUP_BYTES), before);
  return messages.map((_, j) => {
    const out = list + (j >> 2) * GROUP_BYTES + DIGESTS_AT + 4 * (j & 3);
    let hex = "";
    for (let w = 0; w < 8; w++) {
      hex += dv.getUint32(out + 16 * w, true).toString(16).padStart(8, "0");
    }
    return hex;
  });
}

const sha = (m: Uint8Array) => createHash("sha256").update(m).digest("hex");

Deno.test("sha256 lanes: every length from 0 to 300 bytes equals node:crypto", () => {
  const rnd = createPrng(11);
  const messages = Array.from({ length: 301 }, (_, n) => {
    const m = new Uint8Array(n);
    for (let i = 0; i < n; i++) m[i] = rnd.int(0, 255);
    return m;
  });
  const got = hashAll(messages);
  messages.forEach((m, n) => assert.equal(got[n], sha(m), `length ${n}`));
});

Deno.test("sha256 lanes: lanes of very different lengths in one group, and spare lanes", () => {
  const rnd = createPrng(12);
  for (let round = 0; round < 20; round++) {
    // 1 to 9 messages: groups with one to four lanes in use.
    const count = rnd.int(1, 9);
    const messages = Array.from({ length: count }, () => {
      const n = rnd.int(0, 3) === 0 ? rnd.int(0, 4999) : rnd.int(0, 599);
      const m = new Uint8Array(n);
      for (let i = 0; i < n; i++) m[i] = rnd.int(0, 255);
      return m;
    });
    const got = hashAll(messages, rnd.int(0, 2) * 61);
    messages.forEach((m, j) =>
      assert.equal(
        got[j],
        sha(m),
        `round ${round} lane ${j} (${m.length} bytes)`,
      )
    );
  }
});

Deno.test("sha256 lanes: known answers (FIPS 180-4 examples)", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const got = hashAll([
    enc("abc"),
    enc(""),
    enc("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
  ]);
  assert.deepEqual(got, [
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  ]);
});

Deno.test("sha256 lanes: compare counts the leading digests whose lowercase hex is exactly the digits given", () => {
  const rnd = createPrng(13);
  const count = 11;
  const messages = Array.from({ length: count }, () => {
    const m = new Uint8Array(rnd.int(0, 700));
    for (let i = 0; i < m.length; i++) m[i] = rnd.int(0, 255);
    return m;
  });
  const groups = Math.ceil(count / 4);
  const list = SCRATCH_BYTES;
  const digits = list + groups * GROUP_BYTES;
  let at = digits + 64 * count;
  const { memory, many, compare, u8 } = lanes(4);
  const dv = new DataView(memory.buffer);
  for (let j = 0; j < 4 * groups; j++) {
    const rec = list + (j >> 2) * GROUP_BYTES + 8 * (j & 3);
    const m = messages[j] ?? new Uint8Array(0);
    u8.set(m, at);
    dv.setInt32(rec, at, true);
    dv.setInt32(rec + 4, m.length, true);
    at += m.length;
  }
  many(list, groups, 0);
  const hexes = messages.map(sha);
  const put = (k: number, hex: string) =>
    u8.set(new TextEncoder().encode(hex), digits + 64 * k);
  hexes.forEach((h, k) => put(k, h));
  assert.equal(compare(list, count, digits), count);
  assert.equal(compare(list, 5, digits), 5);
  assert.equal(compare(list, 0, digits), 0);
  // One digit changed, or made uppercase, at message k: k match.
  for (const k of [0, 3, 4, 10]) {
    for (const pos of [0, 31, 32, 63]) {
      const h = hexes[k]!;
      const c = h[pos]!;
      const other = c === "0" ? "1" : /[a-f]/.test(c) ? c.toUpperCase() : "0";
      put(k, h.slice(0, pos) + other + h.slice(pos + 1));
      assert.equal(
        compare(list, count, digits),
        k,
        `message ${k} digit ${pos}`,
      );
      put(k, h);
    }
  }
  assert.equal(compare(list, count, digits), count);
});
