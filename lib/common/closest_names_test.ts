import assert from "node:assert/strict";
import { closestNames } from "./closest_names.ts";

Deno.test("closest names: a one-letter slip finds the listed name first", () => {
  assert.deepEqual(
    closestNames("search_node", [
      "create_entities",
      "read_graph",
      "open_nodes",
      "search_nodes",
    ]),
    ["search_nodes", "open_nodes", "read_graph"],
  );
});

Deno.test("closest names: case and a missing word", () => {
  assert.equal(closestNames("Echo", ["add", "echo", "printEnv"], 1)[0], "echo");
  assert.deepEqual(closestNames("x", []), []);
});
