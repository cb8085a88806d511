import assert from "node:assert/strict";
import type { AdapterDef } from "../definition/types.ts";
import { adapterDef } from "../../tests/_definition.ts";
import { coverage } from "./coverage.ts";

const a = (kind: AdapterDef["kind"], label: string): AdapterDef =>
  adapterDef(kind, label);

Deno.test("coverage: every declared location observed by a matching adapter", () => {
  const c = coverage({
    locations: ["sqlite:state.db", "json:./store.json", "fs:notes/"],
    adapters: [
      a("sqlite", "state.db"),
      a("json", "store.json"),
      a("fs", "notes"),
    ],
  });
  assert.equal(c.complete, true);
  assert.deepEqual(c.locations.map((l) => l.observedBy), [
    "sqlite:state.db",
    "json:store.json",
    "fs:notes",
  ]);
});

Deno.test("coverage: an unobserved location makes coverage partial and is named", () => {
  const c = coverage({
    locations: ["sqlite:state.db", "fs:hidden.txt", "memory:process"],
    adapters: [a("sqlite", "state.db"), a("fs", "notes")],
  });
  assert.equal(c.complete, false);
  assert.deepEqual(
    c.locations.filter((l) => l.observedBy === null).map((l) => l.location),
    [
      "fs:hidden.txt",
      "memory:process",
    ],
  );
});

Deno.test("coverage: an fs adapter on . observes the whole state directory", () => {
  const c = coverage({
    locations: ["fs:notes/a.txt", "json:x.json", "sqlite:db"],
    adapters: [a("fs", ".")],
  });
  assert.equal(c.complete, true);
  assert.ok(c.locations.every((l) => l.observedBy === "fs:."));
  assert.equal(coverage({ locations: [], adapters: [] }).complete, true);
});
