import assert from "node:assert/strict";
import { generateFromPattern, UnsupportedPattern } from "./pattern.ts";
import { createPrng } from "./prng.ts";

Deno.test("pattern: generated strings match, for many seeds", () => {
  const patterns = [
    "^[A-Z]{3}-\\d{4}$",
    "^\\+?[1-9]\\d{1,14}$",
    "^(foo|bar|baz)_[a-z]+$",
    "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$",
    "^v\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.-]+)?$",
    "^#[0-9a-fA-F]{6}$",
    "[0-9]+", // unanchored
    "^\\w+(?:\\.\\w+)*$",
    "^.{3}$",
    "^(?<year>\\d{4})-(?<month>0[1-9]|1[0-2])$",
    "^[\\-_a-z]+$",
    "^\\u00e9t\\x65$",
  ];
  for (const p of patterns) {
    for (let seed = 1; seed <= 20; seed++) {
      const s = generateFromPattern(p, createPrng(seed));
      assert.ok(new RegExp(p, "u").test(s), `${p} -> ${JSON.stringify(s)}`);
    }
  }
});

Deno.test("pattern: length limits are honoured together with the pattern", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const s = generateFromPattern("^[a-z]+$", createPrng(seed), {
      minLength: 12,
      maxLength: 14,
    });
    assert.ok(/^[a-z]+$/.test(s) && s.length >= 12 && s.length <= 14, s);
  }
  const u = generateFromPattern("ab", createPrng(1), { minLength: 6 });
  assert.ok(u.includes("ab") && u.length >= 6, u);
});

Deno.test("pattern: what a simple generator cannot do is refused with the reason", () => {
  const cases: [string, RegExp][] = [
    ["^(?=.*\\d)[a-z\\d]{8}$", /lookarounds/],
    ["^(a+)\\1$", /backreferences/],
    ["^\\p{L}+$", /Unicode property/],
    ["^[a-z]{2}$", /no string of length 5\.\.9/],
  ];
  for (const [p, re] of cases) {
    assert.throws(
      () =>
        generateFromPattern(
          p,
          createPrng(1),
          p === "^[a-z]{2}$" ? { minLength: 5, maxLength: 9 } : {},
        ),
      (e: unknown) => e instanceof UnsupportedPattern && re.test(e.message),
      p,
    );
  }
});
