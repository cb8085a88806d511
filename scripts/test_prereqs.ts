/**
 * What `deno task test` needs from the machine, checked before any test
 * runs: bubblewrap (the sandbox backend, and working: user namespaces
 * allowed), PostgreSQL's server binaries (the postgres fixtures' private
 * clusters), python3 (the raw JSON-RPC fixture), git (allow.run tests)
 * and chromium (the HTML report's browser test). Slurm (the census-on-Slurm
 * test) is optional: installed the same way when possible, otherwise its
 * test is skipped and says why.
 *
 * Missing Debian packages are installed with apt when this runs as root
 * with apt-get; otherwise it stops at once, printing the exact install
 * command, and exits 1 (never a screen of failing tests).
 *
 * Usage: deno run --allow-run --allow-read --allow-env --allow-sys=uid scripts/test_prereqs.ts [--check]
 * (`--check` never installs.)
 *
 * @module
 */

/** A program the tests need and the Debian package that provides it. */
export interface Need {
  what: string;
  pkg: string;
  present: () => boolean;
}

function onPath(cmd: string): boolean {
  const path = Deno.env.get("PATH") ?? "";
  return path.split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir}/${cmd}`).isFile;
    } catch {
      return false;
    }
  });
}

function postgresPresent(): boolean {
  try {
    for (const e of Deno.readDirSync("/usr/lib/postgresql")) {
      try {
        if (Deno.statSync(`/usr/lib/postgresql/${e.name}/bin/initdb`).isFile) {
          return true;
        }
      } catch {
        // not this version
      }
    }
  } catch {
    // no postgresql at all
  }
  return false;
}

/** The machine's prerequisites, in install order. */
export const NEEDS: Need[] = [
  { what: "bwrap", pkg: "bubblewrap", present: () => onPath("bwrap") },
  {
    what: "initdb (PostgreSQL server)",
    pkg: "postgresql",
    present: postgresPresent,
  },
  { what: "python3", pkg: "python3", present: () => onPath("python3") },
  { what: "git", pkg: "git", present: () => onPath("git") },
  {
    what: "chromium (the HTML report's browser test)",
    pkg: "chromium",
    present: () =>
      ["chromium", "chromium-browser", "google-chrome"].some(onPath),
  },
];

/** Installed when this can (root with apt); without them their tests are skipped. */
export const OPTIONAL: Need[] = [
  {
    what: "slurmctld (the census-on-Slurm test)",
    pkg: "slurm-wlm",
    present: () => onPath("slurmctld"),
  },
];

/** The one command that installs `pkgs` (sudo unless root). */
export function installCommand(pkgs: string[], root: boolean): string {
  const sudo = root ? "" : "sudo ";
  return `${sudo}apt-get update && ${sudo}apt-get install -y ${pkgs.join(" ")}`;
}

async function run(cmd: string, args: string[]): Promise<boolean> {
  try {
    const r = await new Deno.Command(cmd, {
      args,
      stdout: "null",
      stderr: "piped",
      env: { DEBIAN_FRONTEND: "noninteractive" },
    }).output();
    if (r.code !== 0) {
      const tail = new TextDecoder().decode(r.stderr).trim().split("\n")
        .slice(-3).join(" | ");
      console.error(`test prerequisites: ${cmd} ${args.join(" ")}: ${tail}`);
    }
    return r.code === 0;
  } catch {
    return false;
  }
}

async function bwrapWorks(): Promise<string | null> {
  try {
    const r = await new Deno.Command("bwrap", {
      args: ["--ro-bind", "/", "/", "--unshare-all", "--", "true"],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (r.code === 0) return null;
    return new TextDecoder().decode(r.stderr).trim().split("\n")[0] ?? "";
  } catch (e) {
    return String(e);
  }
}

if (import.meta.main) {
  const checkOnly = Deno.args.includes("--check");
  const root = Deno.uid() === 0;
  let missing = NEEDS.filter((n) => !n.present());
  if (missing.length > 0) {
    const pkgs = missing.map((n) => n.pkg);
    const cmd = installCommand(pkgs, root);
    if (!checkOnly && root && onPath("apt-get")) {
      console.error(
        `test prerequisites: installing ${pkgs.join(" ")} (${cmd})`,
      );
      const ok = await run("apt-get", ["update", "-qq"]) &&
        await run("apt-get", ["install", "-y", "-qq", ...pkgs]);
      missing = NEEDS.filter((n) => !n.present());
      if (!ok || missing.length > 0) {
        console.error(
          `test prerequisites: apt could not install ${
            pkgs.join(" ")
          }; run: ${cmd}`,
        );
        Deno.exit(1);
      }
    } else {
      console.error(
        `test prerequisites: missing ${
          missing.map((n) => n.what).join(", ")
        }; install them first: ${cmd}`,
      );
      Deno.exit(1);
    }
  }
  const absent = OPTIONAL.filter((n) => !n.present());
  if (absent.length > 0 && !checkOnly && root && onPath("apt-get")) {
    console.error(
      `test prerequisites: installing ${absent.map((n) => n.pkg).join(" ")}`,
    );
    await run("apt-get", ["update", "-qq"]) &&
      await run("apt-get", [
        "install",
        "-y",
        "-qq",
        ...absent.map((n) => n.pkg),
      ]);
  }
  for (const n of OPTIONAL.filter((n) => !n.present())) {
    console.error(
      `test prerequisites: no ${n.what}, so its test is skipped; to run it: ${
        installCommand([n.pkg], root)
      }`,
    );
  }
  const bwrap = await bwrapWorks();
  if (bwrap !== null) {
    console.error(
      `test prerequisites: bubblewrap cannot create namespaces here (${bwrap}); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0) or run as root`,
    );
    Deno.exit(1);
  }
}
