/**
 * Build the offline bundle: `dist/verity-<version>-<os>-<arch>.tar.gz`
 * holding a Deno runtime (the `deno` binary of the npm package
 * `deno@2.9.6`), verity's code (`app/`), its dependency cache prepared in
 * advance (`deno_dir/`) and a `verity` launcher; then `SHA256SUMS` and a
 * signed in-toto attestation of the tarball
 * (`<tarball>.intoto.json`, DSSE, Ed25519, predicate
 * `urn:verity:release:v1`).
 *
 * Usage:
 *   deno task release [--key PRIVATE.pem] [--out dist]
 *
 * Check a downloaded bundle with verity itself, no checkout needed:
 *   verity attest verify <tarball>.intoto.json --key PUBLIC.pem
 *
 * Without --key a new key pair is written beside the bundle
 * (`verity-release.pem`, `verity-release.pub.pem`). The build needs the npm
 * registry (for deno@2.9.6) and the packages verity imports; the bundle then
 * runs with no network. Requires `--allow-all`.
 *
 * @module
 */
import { parseArgs } from "./_args.ts";
import { basename, dirname, join, resolve } from "node:path";
import { VERSION } from "../lib/version.ts";
import {
  generateKeyPair,
  importPrivateKey,
  signStatement,
  type Statement,
  STATEMENT_TYPE,
} from "../lib/evidence/attest.ts";

/** The Deno version the bundle carries. */
export const DENO_VERSION = "2.9.6";
/** The predicate type of a bundle's attestation. */
export { RELEASE_PREDICATE } from "../lib/cli/attest_cmd.ts";
import { RELEASE_PREDICATE } from "../lib/cli/attest_cmd.ts";

const ROOT = resolve(new URL("..", import.meta.url).pathname);

/** `<os>-<arch>` in npm's spelling (linux-x64, darwin-arm64, win32-x64). */
export function platformName(
  os: string = Deno.build.os,
  arch: string = Deno.build.arch,
): string {
  const o = os === "windows" ? "win32" : os;
  const a = arch === "x86_64" ? "x64" : arch === "aarch64" ? "arm64" : arch;
  return `${o}-${a}`;
}

/** The bundle's base name (no extension). */
export function bundleName(version: string, platform: string): string {
  return `verity-${version}-${platform}`;
}

/** Files of the checkout that go into `app/`: tracked, not tests. */
export function isAppFile(path: string): boolean {
  if (/(^|\/)[^/]*_test\.ts$/.test(path)) return false;
  if (
    ["main.ts", "deno.json", "deno.lock", "README.md", "LICENSE", "NOTICE"]
      .includes(path)
  ) {
    return true;
  }
  return /^(lib|adapters|fixtures)\//.test(path);
}

/** The launcher written as `verity` at the bundle's root. */
export const LAUNCHER = `#!/bin/sh
# verity offline bundle launcher: Deno ${DENO_VERSION} and every dependency are
# inside this directory; nothing is fetched (--cached-only).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
DENO_DIR="\${here}/deno_dir"
PATH="\${here}/bin:\${PATH:-/usr/bin:/bin}"
DENO_NO_UPDATE_CHECK=1
export DENO_DIR PATH DENO_NO_UPDATE_CHECK
exec "\${here}/bin/deno" run --allow-all --unstable-worker-options --quiet \\
  --cached-only --config "\${here}/app/deno.json" "\${here}/app/main.ts" "$@"
`;

async function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const r = await new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "piped",
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.env ? { env: opts.env } : {}),
  }).output();
  if (r.code !== 0) {
    const err = new TextDecoder().decode(r.stderr).trim().split("\n").slice(-3)
      .join(" | ");
    throw new Error(`${cmd} ${args.slice(0, 3).join(" ")} failed: ${err}`);
  }
  return new TextDecoder().decode(r.stdout);
}

/** The `deno` binary of npm's deno@2.9.6, installed once under `cache`. */
async function npmDeno(cache: string): Promise<string> {
  const pkg = join(cache, "node_modules", "deno");
  const bin = join(pkg, Deno.build.os === "windows" ? "deno.exe" : "deno");
  try {
    if (Deno.statSync(bin).isFile) return bin;
  } catch {
    // not installed yet
  }
  await run("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    "--prefix",
    cache,
    `deno@${DENO_VERSION}`,
  ]);
  return bin;
}

async function sha256Hex(path: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Build the bundle; returns the tarball's path. */
export async function build(
  opts: { out: string; key?: string },
): Promise<string> {
  const out = resolve(opts.out);
  const name = bundleName(VERSION, platformName());
  const stage = join(out, name);
  await Deno.remove(stage, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(stage, "bin"), { recursive: true });

  // 1. the runtime, from the npm registry's deno package
  const deno = await npmDeno(join(out, ".npm-deno"));
  const version = await run(deno, ["--version"]);
  if (!version.startsWith(`deno ${DENO_VERSION} `)) {
    throw new Error(`${deno} is not deno ${DENO_VERSION}: ${version}`);
  }
  await Deno.copyFile(deno, join(stage, "bin", "deno"));
  await Deno.chmod(join(stage, "bin", "deno"), 0o755);

  // 2. verity's code: tracked files, no tests
  const files = (await run("git", ["ls-files"], { cwd: ROOT })).split("\n")
    .filter((f) => f !== "" && isAppFile(f));
  for (const f of files) {
    const to = join(stage, "app", f);
    await Deno.mkdir(dirname(to), { recursive: true });
    await Deno.copyFile(join(ROOT, f), to);
  }

  // 3. the dependency cache: verity and the bundled fixtures' servers
  const servers: string[] = [];
  for await (const e of Deno.readDir(join(stage, "app", "fixtures"))) {
    const s = join("fixtures", e.name, "server.ts");
    if (e.isDirectory && files.includes(s)) servers.push(s);
  }
  // verity itself as locked; the servers as the sandbox runs them (--no-lock)
  const env = {
    ...Deno.env.toObject(),
    DENO_DIR: join(stage, "deno_dir"),
    DENO_NO_UPDATE_CHECK: "1",
  };
  const cwd = join(stage, "app");
  const base = ["cache", "--quiet", "--config", "deno.json"];
  await run(deno, [...base, "--frozen", "main.ts"], { cwd, env });
  await run(deno, [...base, "--no-lock", ...servers.sort()], { cwd, env });

  // 4. the launcher
  await Deno.writeTextFile(join(stage, "verity"), LAUNCHER);
  await Deno.chmod(join(stage, "verity"), 0o755);

  // 5. tarball, checksums, attestation
  const tarball = join(out, `${name}.tar.gz`);
  await run("tar", ["-czf", tarball, "-C", out, name]);
  await Deno.remove(stage, { recursive: true });
  const sum = await sha256Hex(tarball);
  await Deno.writeTextFile(
    join(out, "SHA256SUMS"),
    `${sum}  ${basename(tarball)}\n`,
  );

  let keyPem: string;
  if (opts.key !== undefined) {
    keyPem = await Deno.readTextFile(opts.key);
  } else {
    const pair = await generateKeyPair();
    keyPem = pair.privatePem;
    await Deno.writeTextFile(join(out, "verity-release.pem"), pair.privatePem, {
      mode: 0o600,
    });
    await Deno.writeTextFile(
      join(out, "verity-release.pub.pem"),
      pair.publicPem,
    );
  }
  const signer = await importPrivateKey(keyPem);
  const statement: Statement = {
    _type: STATEMENT_TYPE,
    subject: [{ name: basename(tarball), digest: { sha256: sum } }],
    predicateType: RELEASE_PREDICATE,
    predicate: {
      verity_version: VERSION,
      deno_version: DENO_VERSION,
      platform: platformName(),
      files: files.length,
    },
  };
  const envelope = await signStatement(statement, signer);
  await Deno.writeTextFile(
    `${tarball}.intoto.json`,
    JSON.stringify(envelope, null, 2) + "\n",
  );
  return tarball;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { key: { type: "string" }, out: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  try {
    if (positionals.length === 0) {
      const t0 = performance.now();
      const tarball = await build({
        out: values.out ?? "dist",
        ...(values.key !== undefined ? { key: values.key } : {}),
      });
      const size = (await Deno.stat(tarball)).size;
      console.log(
        `built ${tarball} (${(size / 1048576).toFixed(1)} MiB, ${
          ((performance.now() - t0) / 1000).toFixed(1)
        } s), SHA256SUMS and ${basename(tarball)}.intoto.json`,
      );
    } else {
      console.error(`release: unknown argument ${positionals[0]}`);
      Deno.exit(2);
    }
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
