/** The sandbox policy: which backend runs a server, and when verity refuses. */
import assert from "node:assert/strict";
import { chooseBackend } from "./choose_backend.ts";
import { SandboxError } from "./errors.ts";

const DENO = "/usr/local/bin/deno";
const UP = { available: true, reason: null };
const DOWN = {
  available: false,
  reason: "bwrap is not installed (apt-get install -y bubblewrap)",
};
const DENO_CMD = [DENO, "run", "server.ts"];
const PY_CMD = ["/usr/bin/python3", "server.py"];

Deno.test("policy: deno run commands get the deno backend, anything else bubblewrap", () => {
  assert.equal(
    chooseBackend({ command: DENO_CMD, deno: DENO, bubblewrap: UP }).backend,
    "deno",
  );
  assert.equal(
    chooseBackend({
      command: ["deno", "run", "x.ts"],
      deno: DENO,
      bubblewrap: UP,
    }).backend,
    "deno",
  );
  assert.equal(
    chooseBackend({ command: PY_CMD, deno: DENO, bubblewrap: UP }).backend,
    "bubblewrap",
  );
  assert.equal(
    chooseBackend({ command: [DENO, "task", "x"], deno: DENO, bubblewrap: UP })
      .backend,
    "bubblewrap",
  );
});

Deno.test("policy: audits refuse to run unsandboxed unless --no-sandbox", () => {
  assert.throws(
    () =>
      chooseBackend({
        command: PY_CMD,
        deno: DENO,
        bubblewrap: DOWN,
        source: "targets/x/target.toml",
      }),
    (e: Error) =>
      e instanceof SandboxError &&
      e.message.startsWith("targets/x/target.toml: ") &&
      e.message.includes("apt-get install -y bubblewrap") &&
      e.message.endsWith("pass --no-sandbox to run it unsandboxed"),
  );
  assert.throws(
    () =>
      chooseBackend({
        declared: "none",
        command: PY_CMD,
        deno: DENO,
        bubblewrap: UP,
      }),
    /audits refuse to run a server unsandboxed/,
  );
  const c = chooseBackend({
    declared: "none",
    command: PY_CMD,
    deno: DENO,
    bubblewrap: UP,
    noSandbox: true,
  });
  assert.deepEqual(c, { backend: "none", why: "--no-sandbox" });
  assert.equal(
    chooseBackend({
      command: PY_CMD,
      deno: DENO,
      bubblewrap: DOWN,
      noSandbox: true,
    }).backend,
    "none",
  );
});

Deno.test("policy: a fixture may declare none; declared backends are honoured or refused with the reason", () => {
  assert.equal(
    chooseBackend({
      declared: "none",
      command: PY_CMD,
      deno: DENO,
      bubblewrap: UP,
      audit: false,
    }).backend,
    "none",
  );
  assert.equal(
    chooseBackend({
      declared: "bubblewrap",
      command: DENO_CMD,
      deno: DENO,
      bubblewrap: UP,
    }).backend,
    "bubblewrap",
  );
  assert.throws(
    () =>
      chooseBackend({
        declared: "bubblewrap",
        command: PY_CMD,
        deno: DENO,
        bubblewrap: DOWN,
      }),
    /sandbox = "bubblewrap" but bubblewrap is unavailable: bwrap is not installed/,
  );
  assert.throws(
    () =>
      chooseBackend({
        declared: "deno",
        command: PY_CMD,
        deno: DENO,
        bubblewrap: UP,
      }),
    /sandbox = "deno" needs a "\{deno\} run …" command/,
  );
});
