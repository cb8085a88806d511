#!/usr/bin/env node
// verity, from npm: runs verity's code (../app) on the Deno runtime of the
// `deno` npm package (a dependency), so `npx verity-mcp <command>` needs only
// Node. verity's own dependencies are fetched from the npm registry on first
// use into Deno's cache (DENO_DIR, default ~/.cache/deno).
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const PLATFORM_PACKAGES = {
  "linux-x64": "@deno/linux-x64-glibc",
  "linux-arm64": "@deno/linux-arm64-glibc",
  "darwin-x64": "@deno/darwin-x64",
  "darwin-arm64": "@deno/darwin-arm64",
  "win32-x64": "@deno/win32-x64",
  "win32-arm64": "@deno/win32-arm64",
};

function denoBinary() {
  const exe = process.platform === "win32" ? "deno.exe" : "deno";
  const pkg = path.dirname(require.resolve("deno/package.json"));
  const direct = path.join(pkg, exe);
  if (fs.existsSync(direct)) return direct;
  // the deno package's postinstall did not run (--ignore-scripts): its
  // platform package holds the binary
  const plat = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (plat) {
    try {
      const dir = path.dirname(
        require.resolve(`${plat}/package.json`, { paths: [pkg] }),
      );
      if (fs.existsSync(path.join(dir, exe))) return path.join(dir, exe);
    } catch {
      // not installed
    }
  }
  process.stderr.write(
    `verity: no Deno binary for ${process.platform}-${process.arch} in the deno npm package (reinstall without --omit=optional)\n`,
  );
  process.exit(2);
}

const deno = denoBinary();
const app = path.join(__dirname, "..", "app");
const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1" };
// A server command such as `-- deno run server.ts` finds this Deno.
env.PATH = path.dirname(deno) + path.delimiter + (process.env.PATH || "");
const child = spawn(deno, [
  "run",
  "--allow-all",
  "--unstable-worker-options",
  "--quiet",
  "--config",
  path.join(app, "deno.json"),
  path.join(app, "main.ts"),
  ...process.argv.slice(2),
], { stdio: "inherit", env });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code === null ? 1 : code);
});
