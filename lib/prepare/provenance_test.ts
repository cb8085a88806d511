import assert from "node:assert/strict";
import { join } from "node:path";
import { definitionGitState, withoutCredentials } from "./definition_git.ts";
import {
  definitionGitText,
  targetProvenance,
  targetText,
} from "./provenance.ts";
import type { PreparedTarget } from "./prepared.ts";

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
    lockIntegrity: source.integrity,
    tarball: { file: "t.tgz", integrity: source.integrity, sha256: "ab" },
    preparedAt: "2026-11-30T00:00:00.000Z",
  } as unknown as PreparedTarget;
  const def = {
    source,
    file: "targets/memory/target.toml",
    kind: "target" as const,
  };
  const pinned = targetProvenance(def, prepared);
  assert.deepEqual(pinned, {
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
  assert.equal(
    targetText(pinned),
    `@modelcontextprotocol/server-memory@2026.8.31 ${source.integrity}, run from the prepared, integrity-checked Deno cache (prepared 2026-11-30T00:00:00.000Z); source https://github.com/modelcontextprotocol/servers`,
  );
  const local = targetProvenance({ source: null, kind: "fixture" }, null);
  assert.deepEqual(local, {
    pinned: false,
    detail: "a local command (a fixture), run as found on disk",
  });
  assert.equal(
    targetText(local),
    "no pin: a local command (a fixture), run as found on disk",
  );
  // A [source] whose prepared entry is missing never claims a pin.
  assert.equal(targetProvenance(def, null).pinned, false);
});

Deno.test("definition git text: clean, dirty with why, unknown, not recorded", () => {
  const c = "c".repeat(40);
  assert.equal(
    definitionGitText({
      commit: c,
      dirty: false,
      repository: null,
      detail: null,
    }),
    `commit ${c}, clean`,
  );
  assert.equal(
    definitionGitText({
      commit: c,
      dirty: true,
      repository: "https://example.org/r.git",
      detail: "the definition file is not tracked",
    }),
    `commit ${c}, DIRTY (the definition file is not tracked), https://example.org/r.git`,
  );
  assert.equal(
    definitionGitText({
      commit: null,
      dirty: null,
      repository: null,
      detail: "unknown: git not installed",
    }),
    "unknown: git not installed",
  );
  assert.equal(
    definitionGitText(undefined),
    "not recorded (report written before 2026-12-01)",
  );
});
