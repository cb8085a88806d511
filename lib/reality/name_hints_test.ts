import assert from "node:assert/strict";
import { matchNameHint, singular, splitWords } from "./name_hints.ts";

Deno.test("name hints: words from camelCase, snake_case, kebab-case and acronyms", () => {
  assert.deepEqual(splitWords("baseURLPath"), ["base", "url", "path"]);
  assert.deepEqual(splitWords("IPAddress"), ["ip", "address"]);
  assert.deepEqual(splitWords("user_email-address"), [
    "user",
    "email",
    "address",
  ]);
  assert.deepEqual(splitWords("userID2"), ["user", "id", "2"]);
  assert.equal(singular("cities"), "city");
  assert.equal(singular("addresses"), "address");
  assert.equal(singular("status"), "status");
});

Deno.test("name hints: the most specific whole-word hint wins", () => {
  const label = (n: string, t?: "string" | "integer") =>
    matchNameHint(n, t)?.hint.label ?? null;
  assert.equal(label("cityName"), "city");
  assert.equal(label("fileName"), "file_name");
  assert.equal(label("emailAddress"), "email");
  assert.equal(label("ipAddress"), "ip");
  assert.equal(label("countryCode"), "country_code");
  assert.equal(label("userId"), "id");
  assert.equal(
    label("maxTokens", "integer"),
    "size",
    "a hint without numbers is skipped for an integer",
  );
  assert.equal(label("capacity"), null, "city inside capacity is not a word");
  assert.equal(label("fileContent"), "text");
  assert.equal(label("keywords"), "query", "plural words match their singular");
});
