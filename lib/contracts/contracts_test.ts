import assert from "node:assert/strict";
import { Hint, parseToolPages } from "./contracts.ts";
import { readJson } from "./json_reader.ts";

function page(tools: string, extra = ""): string {
  return `{"jsonrpc":"2.0","id":2,"result":{"tools":[${tools}]${extra}}}`;
}

Deno.test("readJson reports duplicates by pointer and keeps the last like JSON.parse", () => {
  const r = readJson('{"a":{"b":1,"b":2},"c":[{"d":0,"d":0,"d":1}]}');
  assert.deepEqual(
    r.value,
    JSON.parse('{"a":{"b":1,"b":2},"c":[{"d":0,"d":0,"d":1}]}'),
  );
  assert.deepEqual(r.duplicates, [
    { pointer: "/a", key: "b", count: 2 },
    { pointer: "/c/0", key: "d", count: 3 },
  ]);
});

Deno.test("readJson refuses invalid JSON with an offset", () => {
  assert.throws(
    () => readJson('{"a":}'),
    /SyntaxError|unexpected token at offset 5/,
  );
  assert.throws(() => readJson("[1,2] x"), /trailing characters/);
});

Deno.test("readJson keeps __proto__ as an own key", () => {
  const r = readJson('{"__proto__":{"x":1}}');
  assert.equal(Object.hasOwn(r.value as object, "__proto__"), true);
});

Deno.test("each hint is TRUE, FALSE, ABSENT or MALFORMED with its detail", () => {
  const { contracts } = parseToolPages([
    page(
      '{"name":"a","annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":"false","openWorldHint":{}}}',
    ),
  ]);
  const h = contracts[0]!.hints;
  assert.equal(h.readOnlyHint.state, "TRUE");
  assert.equal(h.destructiveHint.state, "FALSE");
  assert.deepEqual(h.idempotentHint.toJSON(), {
    state: "MALFORMED",
    detail: 'string: "false"',
  });
  assert.deepEqual(h.openWorldHint.toJSON(), {
    state: "MALFORMED",
    detail: "object: {}",
  });
});

Deno.test("absent annotations are ABSENT, never FALSE; a non-object is MALFORMED", () => {
  const { contracts } = parseToolPages([
    page('{"name":"a"},{"name":"b","annotations":[true]}'),
  ]);
  for (const hint of Object.values(contracts[0]!.hints)) {
    assert.equal(hint.state, "ABSENT");
  }
  for (const hint of Object.values(contracts[1]!.hints)) {
    assert.equal(hint.state, "MALFORMED");
    assert.match(hint.detail ?? "", /^annotations_not_object/);
  }
});

Deno.test("a Hint refuses boolean coercion", () => {
  const h = new Hint("ABSENT");
  assert.throws(() => `${h as unknown as string}`, TypeError);
  assert.throws(() => (h as unknown as number) + 1, TypeError);
  assert.throws(() => (h as unknown as boolean) == false, TypeError);
});

Deno.test("one malformed tool never hides the others, across pages", () => {
  const r = parseToolPages([
    page(
      '{"name":"x","annotations":{"readOnlyHint":1}},7',
      ',"nextCursor":"n"',
    ),
    "not json",
    page('{"name":"y","annotations":{"readOnlyHint":false}}'),
  ]);
  assert.deepEqual(
    r.contracts.map((c) => [c.name, c.page, c.hints.readOnlyHint.state]),
    [
      ["x", 0, "MALFORMED"],
      ["y", 2, "FALSE"],
    ],
  );
  assert.equal(r.problems.length, 2);
  assert.match(r.problems[0]!, /tools\[1\] is not an object/);
  assert.match(r.problems[1]!, /page 1/);
});

Deno.test("a duplicated annotations object makes every hint MALFORMED", () => {
  const r = parseToolPages([
    page(
      '{"name":"z","annotations":{"readOnlyHint":true},"annotations":{"readOnlyHint":false}}',
    ),
  ]);
  assert.equal(r.contracts[0]!.hints.readOnlyHint.state, "MALFORMED");
  assert.deepEqual(r.contracts[0]!.problems, ['duplicate key "annotations"']);
});

Deno.test("parseToolPages is linear: 100,000 tools that each repeat a key", () => {
  const build = (n: number) => {
    const tools: string[] = [];
    for (let i = 0; i < n; i++) {
      tools.push(`{"name":"t${i}","name":"t${i}","inputSchema":{}}`);
    }
    return `{"jsonrpc":"2.0","id":2,"result":{"tools":[${tools.join(",")}]}}`;
  };
  const time = (text: string) => {
    const t0 = performance.now();
    const r = parseToolPages([text]);
    return { ms: performance.now() - t0, r };
  };
  const small = build(10_000);
  const large = build(100_000);
  time(small); // warm up
  // The fastest of three each: a shared machine stretches single runs.
  const a = Math.min(time(small).ms, time(small).ms, time(small).ms);
  const { r } = time(large);
  const b = Math.min(time(large).ms, time(large).ms, time(large).ms);
  assert.equal(r.contracts.length, 100_000);
  assert.deepEqual(r.contracts[99_999]!.problems, ['duplicate key "name"']);
  // Ten times the input: linear is ~10x, quadratic ~100x (205 s before).
  // The wide margin keeps a loaded machine from failing a linear parser.
  assert.ok(b / a < 40, `10k: ${a.toFixed(0)} ms, 100k: ${b.toFixed(0)} ms`);
});

Deno.test("readJson refuses nesting deeper than its bound instead of overflowing the stack", () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  assert.throws(() => readJson(deep), /nesting deeper than 256 levels/);
  const ok = "[".repeat(256) + "]".repeat(256);
  assert.doesNotThrow(() => readJson(ok));
});
