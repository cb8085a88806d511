import assert from "node:assert/strict";
import { OverlayObserver } from "./overlay_observer.ts";
import type { Observation, StateObserver } from "./observer.ts";
import type { Launch } from "../sandbox/types.ts";

const inner: StateObserver = {
  coverage: { complete: true, locations: [] },
  states: new Map(),
  seed: () =>
    Promise.resolve({
      verified: true,
      digests: [],
      problem: null,
      keepsFirst: false,
    }),
  observe: (): Promise<Observation> =>
    Promise.resolve({ digest: "d", method: "seed", why: null }),
  close: () => Promise.resolve(),
};

function launch(writes: Launch["writes"]): Launch {
  return {
    spawn: { command: ["x"], env: {}, cwd: "/" },
    backend: "bubblewrap",
    auditLog: null,
    seesNetwork: false,
    ...(writes ? { writes } : {}),
  };
}

Deno.test("overlay observer: each session's processes' upper layers become one changeset beside the inner observer's state; without an overlay, not observed and why", async () => {
  const root = await Deno.makeTempDir({ prefix: "verity-overlay-observer-" });
  try {
    const layer = (name: string) => ({
      layers: [{ at: "/tmp", upper: `${root}/${name}`, lower: null }],
      work: `${root}/w`,
      merged: `${root}/m`,
      scaffold: [],
      owned: [],
    });
    for (const d of ["a", "b"]) await Deno.mkdir(`${root}/${d}`);
    await Deno.writeTextFile(`${root}/a/one.json`, '{"k": 1}');
    await Deno.writeTextFile(`${root}/b/two.txt`, "x");
    const o = new OverlayObserver(inner);
    o.launched("/s1", launch({ observed: true, layout: layer("a") }));
    o.launched("/s1", launch({ observed: true, layout: layer("b") }));
    const seen = await o.observe("/s1");
    assert.equal(seen.digest, "d", "the inner observer's state");
    const c = o.changesets.get(seen.changeset!);
    assert.deepEqual(c?.changes.map((p) => p.path), [
      "/tmp/one.json",
      "/tmp/two.txt",
    ]);
    assert.equal(c?.changes[0]?.after?.format, "json");
    assert.deepEqual(o.writes, { observed: true, why: null });
    o.launched(
      "/s2",
      launch({ observed: false, why: "overlays need Linux" }),
    );
    assert.equal((await o.observe("/s2")).changeset, null);
    assert.deepEqual(o.writes, {
      observed: false,
      why: "overlays need Linux",
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
