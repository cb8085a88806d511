import assert from "node:assert/strict";
import { overDeclarationText, untestedModes } from "./over_declarations.ts";

Deno.test("untested modes: enum values never sent, free-form code strings; nothing else", () => {
  const schema = {
    type: "object",
    properties: {
      action: { type: "string", enum: ["add", "set-url", "remove"] },
      sql_query: { type: "string" },
      shell_command: { type: ["string", "null"] },
      description: { type: "string" },
      scripture: { type: "string" },
      recursive: { type: "boolean" },
      format: { type: "string", enum: ["csv"] },
      code: { type: "string", const: "x" },
    },
  };
  assert.deepEqual(
    untestedModes(schema, [{ action: "add" }, { action: "remove" }]),
    [
      { argument: "action", kind: "enum", values: ["set-url"] },
      { argument: "sql_query", kind: "free-form" },
      { argument: "shell_command", kind: "free-form" },
    ],
  );
  assert.deepEqual(
    untestedModes(
      { properties: { action: { enum: ["add", "remove"] } } },
      [{ action: "add" }, { action: "remove" }],
    ),
    [],
    "every value sent",
  );
  assert.deepEqual(untestedModes(undefined, []), []);
  // The name says nothing; the description does (@cmd233/mcp-database-server
  // 1.4.1 create_table); a search query is not code.
  assert.deepEqual(
    untestedModes({
      properties: {
        query: {
          type: "string",
          description: "The complete CREATE TABLE SQL statement",
        },
        text: { type: "string", description: "The search query to match" },
      },
    }, [{ query: "CREATE TABLE t (x)", text: "a" }]),
    [{ argument: "query", kind: "free-form" }],
  );
  assert.equal(
    overDeclarationText({
      tool: "remote",
      hint: "readOnlyHint",
      variants: ["list", null],
      untested: [{ argument: "action", kind: "enum", values: ["add"] }],
    }),
    'remote readOnlyHint (observed on argument sets: list, default only; action has untested values ("add"))',
  );
});
