import assert from "node:assert/strict";
import { exists } from "./exists.ts";

Deno.test("exists: files, missing paths, paths through a file, links", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/f`;
    await Deno.writeTextFile(file, "x");
    assert.equal(await exists(file), true);
    assert.equal(await exists(dir), true);
    assert.equal(await exists(`${dir}/missing`), false);
    assert.equal(await exists(`${file}/child`), false);
    await Deno.symlink(`${dir}/missing`, `${dir}/dangling`);
    assert.equal(await exists(`${dir}/dangling`), false);
    assert.equal(
      await exists(`${dir}/dangling`, { followSymlinks: false }),
      true,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
