import assert from "node:assert/strict";
import { canonicalJson, parsePythonJson, PyFloat } from "./canonical.ts";
import { canonicalBytesEnd, sawRecipeKey } from "./canonical_bytes.ts";

const enc = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

/** The definition: the bytes are UTF-8 of exactly what canonicalJson writes for what Python reads. */
function oracle(bytes: Uint8Array): boolean {
  try {
    const text = strict.decode(bytes);
    return canonicalJson(parsePythonJson(text)) === text;
  } catch {
    return false;
  }
}
const whole = (b: Uint8Array): boolean => canonicalBytesEnd(b, 0) === b.length;

let seed = 11;
function rnd(): number {
  seed = (seed * 48271) % 2147483647;
  return seed / 2147483647;
}
const CHARS = [
  "a",
  "b",
  "Z",
  "é",
  "中",
  "😀",
  "\uffff",
  "\ue000",
  "\n",
  '"',
  "\\",
  "/",
  "\u0001",
  "\u001f",
  "\u2028",
  "\u007f",
  " ",
  "\t",
];
// Plain ASCII runs, so the four-bytes-at-a-time path meets every special
// byte at every position of a word.
const RUNS = ["abcdefgh", "0123456789abcdef", "sha256:", "x/y-z_w."];
function str(): string {
  if (rnd() < 0.3) {
    return Array.from(
      { length: Math.floor(rnd() * 8) },
      () =>
        rnd() < 0.5
          ? RUNS[Math.floor(rnd() * RUNS.length)]
          : CHARS[Math.floor(rnd() * CHARS.length)],
    ).join("");
  }
  return Array.from(
    { length: Math.floor(rnd() * 5) },
    () => CHARS[Math.floor(rnd() * CHARS.length)],
  ).join("");
}
function gen(d: number): unknown {
  const r = rnd();
  if (d > 3 || r < 0.35) {
    const k = Math.floor(rnd() * 7);
    if (k === 0) return str();
    if (k === 1) return Math.floor(rnd() * 2e6) - 1e6;
    if (k === 2) return (rnd() - 0.5) * 10 ** Math.floor(rnd() * 44 - 22);
    if (k === 3) return rnd() < 0.5;
    if (k === 4) return null;
    if (k === 5) return new PyFloat(Math.floor(rnd() * 100) - 50);
    return BigInt("123456789012345678901234567890") *
      BigInt(rnd() < 0.5 ? -1 : 1);
  }
  if (r < 0.6) {
    return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(d + 1));
  }
  const o: Record<string, unknown> = {};
  for (let i = 0; i < Math.floor(rnd() * 5); i++) o[str()] = gen(d + 1);
  return o;
}

// Text pieces, and byte sequences that are not UTF-8 (overlong, surrogate,
// above U+10FFFF, a lone continuation byte, a truncated sequence).
const MUTANTS: Uint8Array[] = [
  ...[
    " ",
    "\n",
    ",",
    ":",
    "0",
    "1",
    ".0",
    "e5",
    "-",
    '"',
    "\\",
    "\\/",
    "\\u0041",
    "\\u00E9",
    "\\u001F",
    "\\u001f",
    "\\n",
    "}",
    "]",
    "E",
    "+",
    "é",
  ].map((s) => enc.encode(s)),
  new Uint8Array([0xc0, 0x80]),
  new Uint8Array([0xc1, 0xbf]),
  new Uint8Array([0xe0, 0x9f, 0xbf]),
  new Uint8Array([0xed, 0xa0, 0x80]),
  new Uint8Array([0xf0, 0x8f, 0xbf, 0xbf]),
  new Uint8Array([0xf4, 0x90, 0x80, 0x80]),
  new Uint8Array([0xf5, 0x80, 0x80, 0x80]),
  new Uint8Array([0x80]),
  new Uint8Array([0xbf]),
  new Uint8Array([0xe4, 0xb8]),
  new Uint8Array([0xff]),
];

function splice(
  b: Uint8Array,
  at: number,
  drop: number,
  piece: Uint8Array,
): Uint8Array {
  const out = new Uint8Array(b.length - drop + piece.length);
  out.set(b.subarray(0, at));
  out.set(piece, at);
  out.set(b.subarray(at + drop), at + piece.length);
  return out;
}

Deno.test("canonical bytes: every canonical text's UTF-8 passes; every byte mutation is judged as strict decoding, parsing and re-serializing judge it", () => {
  let mutations = 0;
  let accepted = 0;
  let invalid = 0;
  for (let n = 0; n < 1500; n++) {
    const bytes = enc.encode(canonicalJson(gen(0)));
    assert.equal(whole(bytes), true, strict.decode(bytes));
    for (let m = 0; m < 6; m++) {
      const at = Math.floor(rnd() * (bytes.length + 1));
      const k = rnd();
      const piece = MUTANTS[Math.floor(rnd() * MUTANTS.length)]!;
      const mutated = k < 0.4
        ? splice(bytes, at, 0, piece)
        : k < 0.7
        ? splice(bytes, at, Math.min(1, bytes.length - at), new Uint8Array())
        : splice(
          bytes,
          at,
          Math.min(piece.length, bytes.length - at),
          piece,
        );
      const expected = oracle(mutated);
      assert.equal(whole(mutated), expected, JSON.stringify([...mutated]));
      mutations++;
      if (expected) accepted++;
      try {
        strict.decode(mutated);
      } catch {
        invalid++;
      }
    }
  }
  assert.ok(
    mutations > 8000 && accepted > 100 && invalid > 500,
    `${mutations} mutations, ${accepted} still canonical, ${invalid} not UTF-8`,
  );
});

Deno.test("canonical bytes: each way bytes can be JSON but not canonical is refused, and the end offset is exact", () => {
  const refused = [
    '{"b":1,"a":2}', // key order
    '{"a":1,"a":2}', // duplicate key
    '{"a": 1}', // whitespace
    "[1.50]", // not Python's repr
    "[1E5]",
    "[1e5]", // Python prints 100000.0
    "[-0]", // Python's int -0 is 0
    '["\\/"]', // Python does not escape /
    '["\\u0041"]', // nor ASCII letters
    '["\\u001F"]', // lowercase hex only
    '["\\u000a"]', // \n has a short form
    '["\u0001"]', // a raw control character
    '{"😀":1,"\uffff":2}', // code point order puts U+FFFF first
    '{"a\\n":1,"a\\t":2}', // escaped keys compare by what they denote
    "[NaN]",
    "[1e400]",
  ];
  for (const t of refused) {
    const b = enc.encode(t);
    assert.equal(whole(b), false, t);
    assert.equal(oracle(b), false, t);
  }
  for (
    const t of [
      "[100000]",
      '{"\uffff":2,"😀":1}',
      '{"a\\t":2,"a\\n":1}',
      '[1.0,-0.0,1e-05,1e+16,"\\u001f\\n",123456789012345678901234567890]',
      "123",
      "true",
    ]
  ) assert.equal(whole(enc.encode(t)), true, t);
  assert.equal(canonicalBytesEnd(enc.encode('{"a":[1,2]},"rest"'), 0), 11);
  assert.equal(canonicalBytesEnd(enc.encode('x{"é":[1,2]}\n'), 1), 13);
  assert.equal(canonicalBytesEnd(enc.encode('{"a":[1,2]'), 0), -1);
  // Nesting too deep for the recursion is refused, not thrown.
  const deep = enc.encode("[".repeat(200_000) + "]".repeat(200_000));
  assert.equal(canonicalBytesEnd(deep, 0), -1);
});

Deno.test("canonical bytes: a contract_recipe(s) key anywhere in the value is noticed, a string value is not a key", () => {
  const seen = (t: string): boolean => {
    assert.equal(whole(enc.encode(t)), true, t);
    return sawRecipeKey();
  };
  assert.equal(seen('{"a":{"contract_recipe":"x"}}'), true);
  assert.equal(seen('[{"contract_recipes":["x"]}]'), true);
  assert.equal(seen('{"contract_recipe":"x"}'), true);
  assert.equal(seen('{"a":"contract_recipe","contract_recipex":1}'), false);
  assert.equal(seen('{"contract_recipesx":1}'), false);
});
