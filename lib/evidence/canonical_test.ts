import assert from "node:assert/strict";
import {
  canonicalEnd,
  canonicalJson,
  DuplicateKeyError,
  needsOwnReader,
  parseEvidenceJson,
  parsePythonJson,
  prettyJson,
  PyFloat,
  pythonFloatRepr,
  sha256Hex,
} from "./canonical.ts";

const DATA = new URL("../../tests/data/evidence/", import.meta.url);

function readData(name: string): string {
  return Deno.readTextFileSync(new URL(name, DATA));
}

Deno.test("canonical JSON equals Python's json.dumps(sort_keys, compact, ensure_ascii=False) on the Python-made cases", () => {
  const cases = JSON.parse(readData("python-canonical.json")) as {
    text: string;
    canonical: string;
    sha256: string;
  }[];
  assert.ok(cases.length >= 7);
  for (const c of cases) {
    const got = canonicalJson(parsePythonJson(c.text));
    assert.equal(got, c.canonical);
    assert.equal(sha256Hex(got), c.sha256);
  }
});

Deno.test("every float prints as Python's repr (7,000 doubles, random bit patterns included)", () => {
  const rows = JSON.parse(readData("python-floats.json")) as [string, string][];
  assert.ok(rows.length > 7000);
  const dv = new DataView(new ArrayBuffer(8));
  let bad = 0;
  for (const [hex, repr] of rows) {
    for (let i = 0; i < 8; i++) {
      dv.setUint8(i, parseInt(hex.slice(2 * i, 2 * i + 2), 16));
    }
    if (pythonFloatRepr(dv.getFloat64(0)) !== repr) bad++;
  }
  assert.equal(bad, 0);
  assert.equal(pythonFloatRepr(1), "1.0");
  assert.equal(pythonFloatRepr(1e-5), "1e-05");
  assert.equal(pythonFloatRepr(1e16), "1e+16");
  assert.equal(pythonFloatRepr(1e15), "1000000000000000.0");
  assert.equal(pythonFloatRepr(-0), "-0.0");
});

Deno.test("keys sort by code point, as Python's sort_keys does, not by UTF-16 unit", () => {
  // U+FFFF sorts before U+1F600 by code point; by UTF-16 unit (0xD83D) it would not.
  assert.equal(
    canonicalJson({ "😀": 2, "\uffff": 1, a: 0 }),
    '{"a":0,"\uffff":1,"😀":2}',
  );
  // Integer-like keys sort as strings ("10" < "9").
  assert.equal(canonicalJson({ 9: "n", 10: "t" }), '{"10":"t","9":"n"}');
});

Deno.test("the canonical form does not depend on key order; numbers Python prints differently; __proto__ is an ordinary key", () => {
  const sorted = {
    a: [1, 2.5, "x", null, true],
    b: { c: { d: "é\n" }, e: [] },
    f: 0.0001,
  };
  const shuffled = {
    f: 0.0001,
    b: { e: [], c: { d: "é\n" } },
    a: [1, 2.5, "x", null, true],
  };
  assert.equal(canonicalJson(shuffled), canonicalJson(sorted));
  assert.equal(
    canonicalJson(sorted),
    '{"a":[1,2.5,"x",null,true],"b":{"c":{"d":"é\\n"},"e":[]},"f":0.0001}',
  );
  // Numbers JavaScript prints differently from Python.
  assert.equal(
    canonicalJson({ small: 0.00001, big: 1e21, neg: -1.5e-7 }),
    '{"big":1e+21,"neg":-1.5e-07,"small":1e-05}',
  );
  // A "__proto__" key read from JSON is an ordinary key.
  assert.equal(
    canonicalJson(JSON.parse('{"__proto__":1,"a":2}')),
    '{"__proto__":1,"a":2}',
  );
  assert.equal(
    canonicalJson(JSON.parse('{"a":2,"__proto__":1}')),
    '{"__proto__":1,"a":2}',
  );
});

Deno.test("refusals name the JSON pointer of the refused value", () => {
  const cases: [unknown, RegExp][] = [
    [{ a: [1, { b: NaN }] }, /NaN at \/a\/1\/b/],
    [{ a: Infinity }, /Infinity at \/a/],
    [[1, undefined], /undefined at \/1/],
    [{ d: new Date(0) }, /Date at \/d: only plain objects/],
    [{ m: new Map() }, /Map at \/m/],
    [{ f: () => 1 }, /function at \/f/],
    [{ s: "\ud800" }, /lone surrogate/],
    [{ k: new PyFloat(NaN) }, /NaN at \/k/],
  ];
  for (const [v, re] of cases) {
    assert.throws(
      () => canonicalJson(v),
      (e: Error) => e instanceof TypeError && re.test(e.message),
    );
  }
  assert.throws(() => canonicalJson(undefined), TypeError);
  // An undefined property is omitted, as JSON.stringify does.
  assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}');
});

Deno.test("parsePythonJson keeps what Python sees: 1.0 stays a float, big integers stay exact", () => {
  const v = parsePythonJson(
    '{"x": 1.0, "y": 1, "z": 2e3, "w": 123456789012345678901234567890, "s": "1.0"}',
  );
  assert.equal(
    canonicalJson(v),
    '{"s":"1.0","w":123456789012345678901234567890,"x":1.0,"y":1,"z":2000.0}',
  );
  // Plain JSON.parse loses both (this is why ledgers are read with parsePythonJson).
  assert.equal(canonicalJson(JSON.parse('{"x": 1.0}')), '{"x":1}');
  // Pretty output reads back to the same canonical form.
  assert.equal(canonicalJson(parsePythonJson(prettyJson(v))), canonicalJson(v));
});

Deno.test("needsOwnReader looks at numbers outside strings and at keys with escapes", () => {
  assert.equal(needsOwnReader('{"a\\tb":1}'), true);
  assert.equal(needsOwnReader('{"a":"x\\ty","b\\\\":2}'), true);
  assert.equal(needsOwnReader('{"a":"x\\ty", "b" : "\\\\"}'), false);
  assert.equal(needsOwnReader('["\\\\", "k"]'), false);
  assert.equal(needsOwnReader('{"a":"1.0 and 2e5","b":[1,2.5,-3]}'), false);
  assert.equal(needsOwnReader('{"a":"quote \\" 1.0","b":1.0}'), true);
  assert.equal(needsOwnReader('{"a":"back\\\\","b":3}'), false);
  assert.equal(needsOwnReader("[9007199254740993]"), true);
  assert.equal(needsOwnReader("[9007199254740991, 1e-7, 0.5]"), false);
  assert.equal(needsOwnReader("[1E400]"), true);
});

const python = (() => {
  try {
    return new Deno.Command("python3", {
      args: ["-c", "pass"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name:
    "live cross-check: Python's canonical form of 300 random values equals verity's",
  ignore: !python,
  fn() {
    let seed = 8;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const chars = [
      "a",
      "Z",
      "é",
      "中",
      "😀",
      "\uffff",
      "\n",
      '"',
      "\\",
      "\u0001",
      "\u2028",
      " ",
    ];
    const str = () =>
      Array.from(
        { length: Math.floor(rnd() * 6) },
        () => chars[Math.floor(rnd() * chars.length)],
      ).join("");
    const gen = (d: number): unknown => {
      const r = rnd();
      if (d > 3 || r < 0.3) {
        const k = Math.floor(rnd() * 6);
        if (k === 0) return str();
        if (k === 1) return Math.floor(rnd() * 2e6) - 1e6;
        if (k === 2) return (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20);
        if (k === 3) return rnd() < 0.5;
        if (k === 4) return null;
        return new PyFloat(Math.floor(rnd() * 100));
      }
      if (r < 0.6) {
        return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(d + 1));
      }
      const o: Record<string, unknown> = {};
      for (let i = 0; i < Math.floor(rnd() * 5); i++) o[str() + i] = gen(d + 1);
      return o;
    };
    const values = Array.from({ length: 300 }, () => gen(0));
    const input = values.map((v) => prettyJson(v)).join("\n\u001e\n");
    const out = new Deno.Command("python3", {
      args: [
        "-c",
        'import json,sys\nfor t in sys.stdin.read().split("\\n\\u001e\\n"):\n  print(json.dumps(json.loads(t),sort_keys=True,separators=(",",":"),ensure_ascii=False,allow_nan=False))',
      ],
      stdin: "piped",
      stdout: "piped",
      env: { PYTHONIOENCODING: "utf-8" },
    });
    const p = out.spawn();
    const w = p.stdin.getWriter();
    w.write(new TextEncoder().encode(input));
    w.close();
    return p.output().then((o) => {
      const lines = new TextDecoder().decode(o.stdout).split("\n").filter((l) =>
        l !== ""
      );
      assert.equal(lines.length, values.length);
      values.forEach((v, i) => assert.equal(canonicalJson(v), lines[i]));
    });
  },
});

Deno.test("the V8 JSON.parse key defect in Deno 2.9.6 is pinned, and parsePythonJson is immune to it", () => {
  // In a fresh isolate: after an object with a "\\" key, an object of the same
  // shape with a "\t" key comes back with "\\". When this pin fails, the
  // runtime was fixed: the escaped-key guard in needsOwnReader can go.
  const code =
    `JSON.parse('{"a":0,"\\\\\\\\":1}'); console.log(JSON.stringify(Object.keys(JSON.parse('{"a":1,"\\\\t":2}'))));`;
  const out = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
  }).outputSync();
  assert.equal(new TextDecoder().decode(out.stdout).trim(), '["a","\\\\"]');
  // verity's reading of the same two texts, in this process.
  parsePythonJson('{"a":0,"\\\\":1}');
  JSON.parse('{"a":0,"\\\\":1}');
  assert.deepEqual(Object.keys(parsePythonJson('{"a":1,"\\t":2}') as object), [
    "a",
    "\t",
  ]);
});

Deno.test("the own reader reads back every canonical and pretty text to the same canonical form", () => {
  let seed = 5;
  const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const chars = [
    "a",
    "\\",
    "\t",
    '"',
    "é",
    "😀",
    "\u0001",
    " ",
    "/",
    "__proto__",
  ];
  const key = () =>
    Array.from(
      { length: Math.floor(rnd() * 3) + 1 },
      () => chars[Math.floor(rnd() * chars.length)],
    ).join("");
  const gen = (d: number): unknown => {
    const r = rnd();
    if (d > 3 || r < 0.3) {
      return [
        1,
        -0.5,
        1e-7,
        new PyFloat(3),
        2n ** 70n,
        "s\\t",
        null,
        true,
      ][Math.floor(rnd() * 8)];
    }
    if (r < 0.55) {
      return Array.from({ length: Math.floor(rnd() * 3) }, () => gen(d + 1));
    }
    const o: Record<string, unknown> = {};
    for (let i = 0; i < Math.floor(rnd() * 4); i++) {
      Object.defineProperty(o, key(), {
        value: gen(d + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return o;
  };
  for (let n = 0; n < 2000; n++) {
    const v = gen(0);
    const c = canonicalJson(v);
    assert.equal(canonicalJson(parsePythonJson(c)), c);
    assert.equal(canonicalJson(parsePythonJson(prettyJson(v))), c);
  }
  assert.throws(() => parsePythonJson('{"a\\tb":1,}'), SyntaxError);
  assert.throws(() => parsePythonJson('{"a\\tb":"\\x"}'), SyntaxError);
  assert.throws(() => parsePythonJson("[1.0"), SyntaxError);
  assert.throws(() => parsePythonJson("[1.0] x"), SyntaxError);
  assert.throws(() => parsePythonJson('[1.0, "\u0001"]'), SyntaxError);
});

Deno.test("parseEvidenceJson: the JSON.parse fast path is exactly as strict as verity's own reader", () => {
  // Duplicates anywhere, however spaced, are refused and named.
  for (
    const [text, key] of [
      ['{"a":1,"a":2}', "a"],
      ['{ "x" : { "b" : [ {"c":1, "c" :1} ] } }', "c"],
      ['[{"k":{}},{"k":1,"k":{"z":0}}]', "k"],
      ['{"__proto__":1,"__proto__":2}', "__proto__"],
    ] as const
  ) {
    assert.throws(
      () => parseEvidenceJson(text),
      (e: unknown) => e instanceof DuplicateKeyError && e.key === key,
      text,
    );
  }
  // A value containing what looks like a key, or quotes, is not a key.
  assert.deepEqual(parseEvidenceJson('{"a":"\\"a\\":1","b":["a",":"]}'), {
    a: '"a":1',
    b: ["a", ":"],
  });
  // Numbers Python reads differently still go to the own reader.
  const v = parseEvidenceJson('{"x":1.0,"y":12345678901234567890}', {
    numbers: "python",
  }) as Record<string, unknown>;
  assert.equal(canonicalJson(v), '{"x":1.0,"y":12345678901234567890}');
  // An escaped key (the V8 defect) is read by the own reader, right.
  JSON.parse('{"a":0,"\\\\":1}');
  assert.deepEqual(
    Object.keys(parseEvidenceJson('{"a":1,"\\t":2}') as object),
    [
      "a",
      "\t",
    ],
  );
  // Invalid text is still refused with the own reader's message.
  assert.throws(() => parseEvidenceJson('{"a":}'), SyntaxError);
  // "__proto__" is an own key, as with the own reader.
  const p = parseEvidenceJson('{"__proto__":{"x":1}}') as object;
  assert.ok(Object.hasOwn(p, "__proto__"));
});

Deno.test("canonicalEnd accepts a text exactly when it is the canonical form of what Python reads there (random values and edits)", () => {
  let seed = 11;
  const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const atoms = [
    0,
    -1,
    7,
    2 ** 53 + 2,
    0.5,
    -1.25,
    1e-5,
    1e21,
    1e16,
    "",
    "a",
    "b c",
    true,
    false,
    null,
  ];
  const value = (d: number): unknown => {
    const r = rnd();
    if (d > 3 || r < 0.4) return pick(atoms);
    if (r < 0.7) {
      return Array.from({ length: Math.floor(rnd() * 4) }, () => value(d + 1));
    }
    const o: Record<string, unknown> = {};
    for (let k = Math.floor(rnd() * 4); k > 0; k--) {
      o[pick(["a", "b", "ab", "", "10", "9", "B"])] = value(d + 1);
    }
    return o;
  };
  // Edits a writer that is not canonical would make.
  const edits: ((t: string) => string)[] = [
    (t) => t.replace(/"(\w*)":/, '"$1": '),
    (t) => t.replace(/\b(\d+)\b(?![.e])/, "$1.0"),
    (t) => t.replace("0.5", "5e-1"),
    (t) => t.replace("1e-05", "1e-5"),
    (t) => t.replace(/\b0\b/, "-0"),
    (t) => t.replace(/\b7\b/, "07"),
    (t) => t.replace(/\{"(\w*)":([^,{}\[\]]+),"(\w*)":/, '{"$3":$2,"$1":'),
    (t) => t.replace(/\{"(\w*)":([^,{}\[\]]+)/, '{"$1":$2,"$1":$2'),
    (t) => t.replace("true", "tru"),
    (t) => t.replace("]", ",]"),
    (t) => t + " ",
  ];
  let accepted = 0;
  let refused = 0;
  for (let n = 0; n < 3000; n++) {
    const canonical = canonicalJson(value(0));
    assert.equal(canonicalEnd(canonical, 0), canonical.length, canonical);
    const t = pick(edits)(canonical);
    if (t === canonical) continue;
    let expected: boolean;
    try {
      expected =
        canonicalJson(parseEvidenceJson(t, { numbers: "python" })) === t;
    } catch {
      expected = false; // not JSON, a repeated key or no canonical form
    }
    assert.equal(canonicalEnd(t, 0) === t.length, expected, t);
    if (expected) accepted++;
    else refused++;
  }
  assert.ok(refused > 500 && accepted > 20, `${accepted} / ${refused}`);
  // A value inside a longer text: where it ends.
  assert.equal(canonicalEnd('x{"a":[1,0.5]},"hash"', 1), 14);
});
