import assert from "node:assert/strict";
import { REDACTED, Redactor } from "./redact.ts";

Deno.test("redact: header values by name and by value, URL secrets", () => {
  const r = new Redactor(["tok-123456", "pw-secret"], ["X-Api-Token"]);
  const h = r.headers({
    "X-Api-Token": "tok-123456",
    "X-Echo": "a tok-123456 b",
    Accept: "x",
  });
  assert.deepEqual(h, [
    ["accept", "x"],
    ["x-api-token", REDACTED],
    ["x-echo", `a ${REDACTED} b`],
  ]);
  assert.deepEqual(r.headers(new Headers({ "set-cookie": "sid=1" })), [[
    "set-cookie",
    REDACTED,
  ]]);
  const url = "https://me:pw-secret@example.com/mcp?key=abcd1234&x=1";
  const shown = new Redactor(Redactor.urlSecrets(url)).url(url);
  assert.ok(!shown.includes("pw-secret") && !shown.includes("abcd1234"), shown);
  assert.equal(r.text("error for tok-123456"), `error for ${REDACTED}`);
});
