import assert from "node:assert/strict";
import { canonicalJson, parsePythonJson, PyFloat } from "./canonical.ts";
import { canonicalValueEnd, isCanonicalText } from "./canonical_text.ts";

/** The definition the checker must match: the text is what canonicalJson writes for what Python reads. */
function oracle(text: string): boolean {
  try {
    return canonicalJson(parsePythonJson(text)) === text;
  } catch {
    return false;
  }
}

let seed = 8;
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
function str(): string {
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

const MUTANTS = [
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
  "\ud800",
  "}",
  "]",
  "E",
  "+",
];

Deno.test("every canonical text passes; every mutation is judged exactly as parse-and-reserialize judges it", () => {
  let mutations = 0;
  let accepted = 0;
  for (let n = 0; n < 1500; n++) {
    const text = canonicalJson(gen(0));
    assert.equal(isCanonicalText(text), true, text);
    for (let m = 0; m < 6; m++) {
      const at = Math.floor(rnd() * (text.length + 1));
      const k = rnd();
      const piece = MUTANTS[Math.floor(rnd() * MUTANTS.length)]!;
      const mutated = k < 0.4
        ? text.slice(0, at) + piece + text.slice(at)
        : k < 0.7
        ? text.slice(0, at) + text.slice(at + 1)
        : text.slice(0, at) + piece + text.slice(at + piece.length);
      const expected = oracle(mutated);
      assert.equal(isCanonicalText(mutated), expected, JSON.stringify(mutated));
      mutations++;
      if (expected) accepted++;
    }
  }
  // The mutations exercise both answers.
  assert.ok(
    mutations > 8000 && accepted > 100,
    `${mutations} mutations, ${accepted} still canonical`,
  );
});

Deno.test("the checker refuses each way a text can be valid JSON but not canonical", () => {
  const refused = [
    '{"b":1,"a":2}', // key order
    '{"a":1,"a":2}', // duplicate key
    '{"a": 1}', // whitespace
    "[1.50]", // not Python's repr
    "[1E5]",
    "[100000]", // fine: an integer; paired with the next
    "[1e5]", // Python prints 100000.0
    "[-0]", // Python's int -0 is 0
    '["\\/"]', // Python does not escape /
    '["\\u0041"]', // nor ASCII letters
    '["\\u001F"]', // lowercase hex only
    '["\\u000a"]', // \n has a short form
    '["\u0001"]', // a raw control character
    '["\ud800"]', // a lone surrogate
    '{"😀":1,"\uffff":2}', // code point order puts U+FFFF first
    "[NaN]",
    "[1e400]",
  ];
  for (const t of refused) assert.equal(isCanonicalText(t), oracle(t), t);
  assert.equal(isCanonicalText("[100000]"), true);
  assert.equal(isCanonicalText('{"\uffff":2,"😀":1}'), true);
  assert.equal(
    isCanonicalText(
      '[1.0,-0.0,1e-05,1e+16,"\\u001f\\n",123456789012345678901234567890]',
    ),
    true,
  );
  assert.equal(canonicalValueEnd('{"a":[1,2]},"rest"', 0), 11);
  assert.equal(canonicalValueEnd('{"a":[1,2]', 0), -1);
});
