import assert from "node:assert/strict";
import { deathMessage, meaningfulTail } from "./stderr_tail.ts";

const NODE_CRASH = `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module 'better-sqlite3'
Require stack:
- /srv/app/dist/db.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at require (node:internal/modules/helpers:177:18)
    at Object.<anonymous> (/srv/app/dist/db.js:2:16) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/app/dist/db.js' ]
}

Node.js v20.20.2
`;

Deno.test("a Node crash keeps the error and its context, not the version footer or the stack", () => {
  const tail = meaningfulTail(NODE_CRASH);
  assert.ok(tail.includes("Error: Cannot find module 'better-sqlite3'"));
  assert.ok(tail.includes("code: 'MODULE_NOT_FOUND',"));
  assert.ok(!tail.some((l) => l.startsWith("Node.js")), tail.join("\n"));
  assert.ok(!tail.some((l) => l.startsWith("at ")), tail.join("\n"));
  assert.ok(tail.length > 1 && tail.length <= 8);
});

Deno.test("the error headline survives a long tail", () => {
  const text = "Traceback (most recent call last):\n" +
    Array.from({ length: 30 }, (_, i) => `  File "x.py", line ${i}`).join(
      "\n",
    );
  const tail = meaningfulTail(text);
  assert.equal(tail.length, 8);
  assert.equal(tail[0], "Traceback (most recent call last):");
  assert.equal(tail[7], 'File "x.py", line 29');
});

Deno.test("lines and line count are bounded", () => {
  const text = Array.from({ length: 50 }, () => "x".repeat(1000)).join("\n");
  const tail = meaningfulTail(text);
  assert.equal(tail.length, 8);
  assert.ok(tail.every((l) => l.length <= 241));
});

Deno.test("the death message names a signal or an exit code", () => {
  assert.equal(
    deathMessage("server exited", null, "SIGSEGV", ""),
    "server exited (signal SIGSEGV); stderr empty",
  );
  assert.match(
    deathMessage("server exited", 1, null, NODE_CRASH),
    /^server exited \(exit code 1\); stderr: .*Cannot find module 'better-sqlite3'/,
  );
});
