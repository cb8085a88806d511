import assert from "node:assert/strict";
import { findRefusal } from "./refusal.ts";
import { judgeCall, type RealityCallObservation } from "./rules.ts";

function result(r: unknown): RealityCallObservation {
  return { kind: "result", result: r, ms: 1 };
}
function text(
  t: string,
  extra: Record<string, unknown> = {},
): RealityCallObservation {
  return result({ content: [{ type: "text", text: t }], ...extra });
}
const NO_SCHEMA = { outputSchema: undefined, arguments: { city: "Paris" } };

Deno.test("refusal: straight and curly apostrophes, whole phrases, near the start", () => {
  assert.equal(
    findRefusal("I'm sorry, but I can't help with that.")?.phrase,
    "i'm sorry, but i can't",
  );
  assert.equal(
    findRefusal("I\u2019m sorry, but I can\u2019t help with that.")?.phrase,
    "i'm sorry, but i can't",
  );
  assert.equal(
    findRefusal("As an AI language model, I cannot browse.")?.phrase,
    "as an ai",
  );
  assert.equal(
    findRefusal("I don\u2019t have access to real-time data")?.phrase,
    "i don't have access to",
  );
  // Conservative: single words and unrelated apologies are not refusals.
  assert.equal(
    findRefusal("Sorry for the delay: Paris is 18 °C and clear."),
    null,
  );
  assert.equal(
    findRefusal("Unable to find more than 3 results; here they are: ..."),
    null,
  );
  assert.equal(findRefusal("Ask as an aide would: ..."), null);
  // Deep inside a long genuine document it is content, not a refusal.
  assert.equal(
    findRefusal("x".repeat(400) + " I'm unable to attend the meeting."),
    null,
  );
});

Deno.test("refusal: Chinese, Spanish, German and French refusals are flagged", () => {
  const cases: [string, string][] = [
    ["此操作需要确认后才能继续。", "需要确认"],
    ["抱歉，我无法执行该查询。", "我无法"],
    ["无法执行：您没有权限访问此数据库。", "无法执行"],
    ["您没有权限查看该表。", "没有权限"],
    ["作为AI语言模型，我不能访问实时数据。", "作为ai"],
    [
      "Lo siento, no tengo permiso para consultar esa tabla.",
      "no tengo permiso",
    ],
    ["No puedo acceder a datos en tiempo real.", "no puedo"],
    [
      "Es tut mir leid, ich kann nicht auf die Datenbank zugreifen.",
      "ich kann nicht",
    ],
    ["Sie haben keine Berechtigung für diese Abfrage.", "keine berechtigung"],
    ["Désolé, je ne peux pas exécuter cette requête.", "je ne peux pas"],
    ["Erreur : permission refusée.", "permission refusée"],
    // The same accent typed as e + combining acute.
    ["Permission refuse\u0301e pour ce fichier.", "permission refusée"],
    ["Je n\u2019ai pas accès à cette base.", "je n'ai pas accès"],
  ];
  for (const [text, phrase] of cases) {
    const m = findRefusal(text);
    assert.equal(m?.phrase, phrase, text);
    const v = judgeCall(NO_SCHEMA, {
      kind: "result",
      result: { content: [{ type: "text", text }] },
      ms: 1,
    });
    assert.deepEqual(v.flags.map((f) => f.rule), ["disguised_refusal"], text);
  }
});

Deno.test("refusal: honest answers with near-miss words in those languages are not flagged", () => {
  const honest = [
    // Chinese: confirm, execute, permission alone.
    "订单 ABC-1234 已确认，执行成功。",
    "文件权限：只读（rw-r--r--）。共 3 行。",
    "确认码：58213；执行时间 12 ms。",
    // Spanish: "puedo", "permiso" alone; "no" then another verb.
    "¿En qué puedo ayudarte? Resultados: 3 pedidos.",
    "Permisos del archivo: lectura y escritura.",
    "Sino puede esperar, el pedido llega mañana.",
    "No pude encontrar más de 2 resultados; aquí están.",
    // German: "kann", "nicht", "Berechtigung" alone.
    "Das kann helfen: Berlin hat heute 18 °C.",
    "Berechtigungen: lesen, schreiben. Die Datei ist nicht leer.",
    "Berechtigungsprüfung bestanden.",
    // French: "peux", "pas", "permission" alone.
    "Vous pouvez consulter 3 commandes. Ce n'est pas urgent.",
    "Permission accordée : lecture seule.",
    "Je peux confirmer que la commande ABC-1234 est partie.",
  ];
  for (const text of honest) {
    assert.equal(findRefusal(text), null, text);
    const v = judgeCall(NO_SCHEMA, {
      kind: "result",
      result: { content: [{ type: "text", text }] },
      ms: 1,
    });
    assert.equal(
      v.flags.some((f) => f.rule === "disguised_refusal"),
      false,
      text,
    );
  }
});

Deno.test("rules: a genuine answer passes", () => {
  const v = judgeCall(NO_SCHEMA, text("Weather in Paris: 18 °C"));
  assert.equal(v.status, "passed");
  assert.deepEqual(v.notes, []);
});

Deno.test("rules: a disguised refusal is flagged with the text as evidence", () => {
  const v = judgeCall(
    NO_SCHEMA,
    text("I\u2019m unable to look up Paris right now."),
  );
  assert.equal(v.status, "flagged");
  assert.deepEqual(v.flags.map((f) => f.rule), ["disguised_refusal"]);
  assert.match(v.flags[0]!.message, /I\u2019m unable to look up/);
});

Deno.test("rules: an honest isError is never flagged, even when it reads as a refusal", () => {
  const v = judgeCall(
    NO_SCHEMA,
    text("I'm sorry, but I can't access that.", { isError: true }),
  );
  assert.equal(v.status, "failed");
  assert.deepEqual(v.flags, []);
  if (v.status === "failed") assert.equal(v.failure.kind, "is_error");
});

Deno.test("rules: JSON-RPC errors, no answer and malformed results are failed calls, not flags", () => {
  const rpc = judgeCall(NO_SCHEMA, {
    kind: "rpc_error",
    error: { code: -32602, message: "bad params" },
    ms: 1,
  });
  assert.equal(rpc.status, "failed");
  if (rpc.status === "failed") {
    assert.match(rpc.failure.message, /-32602 bad params/);
  }
  const gone = judgeCall(NO_SCHEMA, {
    kind: "no_answer",
    message: "timeout: no answer",
    ms: 1,
  });
  assert.equal(gone.status, "failed");
  for (
    const bad of [42, { content: "text" }, { content: [], isError: "true" }]
  ) {
    const v = judgeCall(NO_SCHEMA, result(bad));
    assert.equal(v.status, "failed", JSON.stringify(bad));
    if (v.status === "failed") assert.equal(v.failure.kind, "malformed_result");
  }
});

Deno.test("rules: empty content on success: no text, no structured content, no other block", () => {
  for (
    const r of [{ content: [] }, {}, {
      content: [{ type: "text", text: "  \n" }],
    }, { content: [], structuredContent: {} }]
  ) {
    const v = judgeCall(NO_SCHEMA, result(r));
    assert.deepEqual(
      v.flags.map((f) => f.rule),
      ["empty_content"],
      JSON.stringify(r),
    );
  }
  for (
    const r of [
      {
        content: [{
          type: "image",
          data: "iVBORw0KGgo=",
          mimeType: "image/png",
        }],
      },
      { content: [{ type: "resource_link", uri: "file:///x", name: "x" }] },
      { content: [], structuredContent: { n: 0 } },
    ]
  ) {
    assert.equal(
      judgeCall({ outputSchema: undefined, arguments: {} }, result(r)).status,
      "passed",
      JSON.stringify(r),
    );
  }
});

const OUT = {
  type: "object",
  properties: { temperature: { type: "number" } },
  required: ["temperature"],
};

Deno.test("rules: structuredContent is checked against outputSchema, and required when one is declared", () => {
  const ok = judgeCall(
    { outputSchema: OUT, arguments: {} },
    result({ content: [], structuredContent: { temperature: 3 } }),
  );
  assert.equal(ok.status, "passed");
  const bad = judgeCall(
    { outputSchema: OUT, arguments: {} },
    result({ content: [], structuredContent: { temperature: "3" } }),
  );
  assert.deepEqual(bad.flags.map((f) => f.rule), ["output_schema_invalid"]);
  assert.match(
    bad.flags[0]!.message,
    /\(2020-12\): \/temperature must be number/,
  );
  const missing = judgeCall({ outputSchema: OUT, arguments: {} }, text("18"));
  assert.deepEqual(missing.flags.map((f) => f.rule), [
    "structured_content_missing",
  ]);
});

Deno.test("rules: the dialect is 2020-12 when $schema is absent, draft-07 when named", () => {
  // prefixItems is a 2020-12 keyword; draft-07 ignores it.
  const tuple = {
    type: "object",
    properties: { p: { type: "array", prefixItems: [{ type: "number" }] } },
  };
  const sc = result({ content: [], structuredContent: { p: ["x"] } });
  assert.equal(
    judgeCall({ outputSchema: tuple, arguments: {} }, sc).status,
    "flagged",
  );
  const d7 = { $schema: "http://json-schema.org/draft-07/schema#", ...tuple };
  assert.equal(
    judgeCall({ outputSchema: d7, arguments: {} }, sc).status,
    "passed",
  );
  const d4 = { $schema: "http://json-schema.org/draft-04/schema#", ...tuple };
  const v = judgeCall({ outputSchema: d4, arguments: {} }, sc);
  assert.equal(v.status, "passed");
  assert.deepEqual(v.notes.map((n) => n.rule), ["output_schema_unchecked"]);
});

Deno.test("rules: echo mismatch and error-like text are noted, never scored", () => {
  const echo = judgeCall({
    outputSchema: undefined,
    arguments: { city: "Paris" },
  }, text("Sunny, 21 °C"));
  assert.equal(echo.status, "passed");
  assert.deepEqual(echo.notes.map((n) => n.rule), ["echo_mismatch"]);
  const echoed = judgeCall({
    outputSchema: undefined,
    arguments: { city: "Paris" },
  }, text("PARIS: sunny"));
  assert.deepEqual(echoed.notes, [], "case-insensitive");
  const inStructured = judgeCall(
    { outputSchema: undefined, arguments: { city: "Paris" } },
    result({
      content: [{ type: "text", text: "ok" }],
      structuredContent: { where: "Paris" },
    }),
  );
  assert.deepEqual(inStructured.notes, []);
  const noStrings = judgeCall(
    { outputSchema: undefined, arguments: { a: 1 } },
    text("2"),
  );
  assert.deepEqual(noStrings.notes, [], "no string inputs, nothing to echo");
  const err = judgeCall(
    { outputSchema: undefined, arguments: {} },
    text("Failed to reach the cache; served from disk: 42"),
  );
  assert.equal(err.status, "passed");
  assert.deepEqual(err.notes.map((n) => n.rule), ["error_text"]);
});

Deno.test("an error returned as a success is flagged anywhere in the text", () => {
  for (
    const t of [
      "notes.txt: Error - ENOENT: no such file or directory, open '/data/notes.txt'",
      "Results:\nreport.md: ok\nnotes.txt: Error - ENOENT: no such file or directory",
      "Error: file not found",
      "Here is what happened.\nTypeError: Cannot read properties of undefined (reading 'id')",
      "read failed: EACCES, permission denied '/etc/shadow'",
      'Traceback (most recent call last):\n  File "srv.py", line 3, in <module>',
      "boom\n    at readNote (file:///srv/notes.ts:12:7)",
    ]
  ) {
    const v = judgeCall({ outputSchema: undefined, arguments: {} }, text(t));
    assert.equal(v.status, "flagged", t);
    assert.deepEqual(v.flags.map((f) => f.rule), ["error_as_success"], t);
  }
});

Deno.test("ordinary text that mentions errors is not flagged", () => {
  for (
    const t of [
      "No errors found.",
      "The error rate fell to 0.1% after the fix.",
      "Error handling is described in chapter 3.",
      "errors: 0, warnings: 2",
      "Handled 3 errors gracefully; all retries succeeded.",
      "The user asked how to read an Error object in JavaScript.",
      "Errors: none\nWarnings: none",
      "An error-free run: 12 files copied.",
      "See the ErrorBoundary component docs.",
    ]
  ) {
    const v = judgeCall({ outputSchema: undefined, arguments: {} }, text(t));
    assert.equal(v.status, "passed", `${t}: ${JSON.stringify(v.flags)}`);
  }
});
