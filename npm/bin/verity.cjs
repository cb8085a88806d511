#!/usr/bin/env node
// verity, from npm: runs verity's code (../app) on the Deno runtime of the
// `deno` npm package (a dependency), so `npx verity-mcp <command>` needs only
// Node. verity's own dependencies are fetched from the npm registry on first
// use into Deno's cache (DENO_DIR, default ~/.cache/deno).
//
// Deno treats every file under node_modules as npm package code (no type
// stripping, bare imports only from package.json), so the bundled fixture
// servers cannot run from there: the app is copied once per version beside
// node_modules (.verity-mcp/<version>/) and run from that copy.
// `verity-mcp demo` runs the bundled liar-concurrent fixture.
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

/** The app, copied out of node_modules once per version. */
function appCopy() {
  const pkg = path.join(__dirname, "..");
  const { version } = require(path.join(pkg, "package.json"));
  const at = pkg.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  if (at === -1) return path.join(pkg, "app"); // not installed: run in place
  const dest = path.join(pkg.slice(0, at), ".verity-mcp", version);
  if (!fs.existsSync(path.join(dest, "main.ts"))) {
    const tmp = `${dest}.tmp-${process.pid}`;
    fs.cpSync(path.join(pkg, "app"), tmp, { recursive: true });
    try {
      fs.renameSync(tmp, dest);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another copy won
    }
  }
  return dest;
}

const deno = denoBinary();
const app = appCopy();
const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1" };
// A server command such as `-- deno run server.ts` finds this Deno.
env.PATH = path.dirname(deno) + path.delimiter + (process.env.PATH || "");
let args = process.argv.slice(2);
if (args[0] === "demo") {
  // the demo fixture's server dependencies, cached once (it runs --cached-only)
  const server = path.join(app, "fixtures", "liar-concurrent", "server.ts");
  const cached = require("node:child_process").spawnSync(deno, [
    "cache",
    "--quiet",
    "--no-lock",
    "--config",
    path.join(app, "deno.json"),
    server,
  ], { stdio: "inherit", env });
  if (cached.status !== 0) process.exit(cached.status ?? 1);
  args = ["run", path.dirname(server), ...args.slice(1)];
}
const child = spawn(deno, [
  "run",
  "--allow-all",
  "--unstable-worker-options",
  "--quiet",
  "--config",
  path.join(app, "deno.json"),
  path.join(app, "main.ts"),
  ...args,
], { stdio: "inherit", env });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code === null ? 1 : code);
});
