import assert from "node:assert/strict";
import { detectReadAllowances } from "./init_allow.ts";

const HIDDEN = ["/tmp", "/run", "/home/me"];

Deno.test("init allowances: a hidden interpreter, virtualenv and node_modules are declared, visible or covered ones are not", () => {
  const found = detectReadAllowances({
    program: "/tmp/venvs/v1/bin/python",
    programReal: "/home/me/.pyenv/versions/3.11.7/bin/python3.11",
    venv: "/tmp/venvs/v1",
    nodeModules: null,
    hidden: HIDDEN,
  }, ["/tmp/srv"]);
  assert.deepEqual(found.map((f) => f.path), [
    "/home/me/.pyenv/versions/3.11.7",
    "/tmp/venvs/v1",
  ]);
  assert.match(found[1]!.why, /virtualenv/);
  // A system interpreter and a venv inside the script's directory: nothing.
  assert.deepEqual(
    detectReadAllowances({
      program: "/srv/app/.venv/bin/python",
      programReal: "/usr/bin/python3.11",
      venv: "/srv/app/.venv",
      nodeModules: "/srv/app/node_modules",
      hidden: HIDDEN,
    }, ["/srv/app"]),
    [],
  );
  // Covered by an existing read path.
  assert.deepEqual(
    detectReadAllowances({
      program: "/usr/bin/node",
      programReal: "/usr/bin/node",
      venv: null,
      nodeModules: "/home/me/proj/node_modules",
      hidden: HIDDEN,
    }, ["/home/me/proj"]),
    [],
  );
  assert.deepEqual(
    detectReadAllowances({
      program: "/usr/bin/node",
      programReal: "/usr/bin/node",
      venv: null,
      nodeModules: "/home/me/proj/node_modules",
      hidden: HIDDEN,
    }, ["/home/me/proj/dist"]).map((f) => f.path),
    ["/home/me/proj/node_modules"],
  );
});
