import assert from "node:assert/strict";
import { join } from "node:path";
import {
  definitionGitState,
  targetProvenance,
  withoutCredentials,
} from "./_provenance.ts";
import type { PreparedRun } from "../audit/local.ts";

async function git(dir: string, ...args: string[]): Promise<string> {
  const r = await new Deno.Command("git", {
    args: ["-C", dir, ...args],
    stdout: "piped",
    stderr: "piped",
    env: {
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.org",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.org",
    },
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  return new TextDecoder().decode(r.stdout).trim();
}

/** A repository holding `defs/fixture.toml` (committed) and a sibling directory. */
async function repo(): Promise<{ root: string; file: string; head: string }> {
  const root = await Deno.makeTempDir({ prefix: "verity-defgit-" });
  await git(root, "init", "-q");
  await Deno.mkdir(join(root, "defs"));
  await Deno.mkdir(join(root, "other"));
  await Deno.writeTextFile(join(root, "defs", "fixture.toml"), "# one\n");
  await Deno.writeTextFile(join(root, "other", "x.txt"), "x\n");
  await git(root, "add", ".");
  await git(root, "commit", "-q", "-m", "one");
  return {
    root,
    file: join(root, "defs", "fixture.toml"),
    head: await git(root, "rev-parse", "HEAD"),
  };
}

Deno.test("definition git: a clean checkout gives its commit and dirty false", async () => {
  const { root, file, head } = await repo();
  try {
    assert.deepEqual(await definitionGitState(file), {
      commit: head,
      dirty: false,
      repository: null,
      detail: null,
    });
    // A change outside the definition's directory does not make it dirty.
    await Deno.writeTextFile(join(root, "other", "x.txt"), "changed\n");
    assert.equal((await definitionGitState(file)).dirty, false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("definition git: an edited definition is dirty, and says which path", async () => {
  const { root, file, head } = await repo();
  try {
    await Deno.writeTextFile(file, "# one\n# edited\n");
    const g = await definitionGitState(file);
    assert.equal(g.commit, head);
    assert.equal(g.dirty, true);
    assert.match(g.detail ?? "", /1 path\(s\) .*fixture\.toml/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("definition git: an untracked file beside it, or an untracked definition, is dirty", async () => {
  const { root, file } = await repo();
  try {
    await Deno.writeTextFile(join(root, "defs", "seed.sql"), "-- new\n");
    assert.equal((await definitionGitState(file)).dirty, true);
    await Deno.remove(join(root, "defs", "seed.sql"));
    // A definition the repository ignores is not in the commit.
    await Deno.writeTextFile(join(root, ".git", "info", "exclude"), "*.new\n");
    const ignored = join(root, "defs", "target.new");
    await Deno.writeTextFile(ignored, "# ignored\n");
    const g = await definitionGitState(ignored);
    assert.equal(g.dirty, true);
    assert.match(g.detail ?? "", /not tracked/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("definition git: outside a checkout, or without git, unknown with why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-nogit-" });
  try {
    const file = join(dir, "fixture.toml");
    await Deno.writeTextFile(file, "");
    const env = Deno.env.get("GIT_CEILING_DIRECTORIES");
    // The temp directory is not inside any checkout (ceiling at its parent).
    Deno.env.set("GIT_CEILING_DIRECTORIES", join(dir, ".."));
    try {
      assert.deepEqual(await definitionGitState(file), {
        commit: null,
        dirty: null,
        repository: null,
        detail: "unknown: not a git checkout",
      });
    } finally {
      if (env === undefined) Deno.env.delete("GIT_CEILING_DIRECTORIES");
      else Deno.env.set("GIT_CEILING_DIRECTORIES", env);
    }
    assert.deepEqual(
      await definitionGitState(file, { git: join(dir, "no-such-git") }),
      {
        commit: null,
        dirty: null,
        repository: null,
        detail: "unknown: git not installed",
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("definition git: the origin remote is recorded without credentials", async () => {
  const { root, file } = await repo();
  try {
    await git(
      root,
      "remote",
      "add",
      "origin",
      "https://user:secret@example.org/x/defs.git",
    );
    assert.equal(
      (await definitionGitState(file)).repository,
      "https://example.org/x/defs.git",
    );
    assert.equal(
      withoutCredentials("git@example.org:x/y.git"),
      "git@example.org:x/y.git",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("target provenance: a pinned target names its pin and the prepared cache; a local command has no pin", () => {
  const source = {
    package: "@modelcontextprotocol/server-memory",
    version: "2026.8.31",
    integrity:
      "sha512-ljj/3S4aGjxdNSQWw6gucKKGnTLdBPWxzapyY/MT2tOVyZwvxChvevXSLPwx59nKJAlVpUVW+cOlnVRXRwiqMQ==",
    git: "https://github.com/modelcontextprotocol/servers",
  };
  const prepared = {
    source: "/c/.verity/sources/memory/package",
    denoDir: "/c/.verity/deno_dir",
    nodeModules: null,
    entry: {
      lockIntegrity: source.integrity,
      tarball: { file: "t.tgz", integrity: source.integrity, sha256: "ab" },
      preparedAt: "2026-11-30T00:00:00.000Z",
    },
  } as unknown as PreparedRun;
  const def = {
    source,
    file: "targets/memory/target.toml",
    kind: "target" as const,
  };
  assert.deepEqual(targetProvenance(def, prepared), {
    pinned: true,
    package: source.package,
    version: source.version,
    integrity: source.integrity,
    git: source.git,
    commit: null,
    preparedCache: true,
    runtime: "deno",
    lockIntegrity: source.integrity,
    tarball: { integrity: source.integrity, sha256: "ab" },
    preparedAt: "2026-11-30T00:00:00.000Z",
  });
  assert.deepEqual(
    targetProvenance({ source: null, file: "f.toml", kind: "fixture" }, null),
    {
      pinned: false,
      detail: "a local command (a fixture), run as found on disk",
    },
  );
});
