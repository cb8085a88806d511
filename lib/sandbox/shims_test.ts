import assert from "node:assert/strict";
import { shimOf } from "./shims.ts";

Deno.test("shimOf knows each version manager's shim and how to ask it", () => {
  const cases: [string, string, string, string[] | null][] = [
    [
      "/home/me/.rbenv/shims/ruby",
      "/home/me/.rbenv/shims/ruby",
      'export RBENV_ROOT="/home/me/.rbenv"\nexec "/home/me/.rbenv/libexec/rbenv" exec "$program" "$@"',
      ["/home/me/.rbenv/libexec/rbenv", "which", "ruby"],
    ],
    [
      "/home/me/.nodenv/shims/node",
      "/home/me/.nodenv/shims/node",
      'exec "/home/me/.nodenv/libexec/nodenv" exec "$program" "$@"',
      ["/home/me/.nodenv/libexec/nodenv", "which", "node"],
    ],
    [
      "/home/me/.asdf/shims/python3",
      "/home/me/.asdf/shims/python3",
      '#!/usr/bin/env bash\n# asdf-plugin: python 3.12.1\nexec /home/me/.asdf/bin/asdf exec "python3" "$@"',
      ["/home/me/.asdf/bin/asdf", "which", "python3"],
    ],
    [
      "/home/me/.asdf/shims/node",
      "/home/me/.asdf/shims/node",
      '#!/usr/bin/env bash\nexec asdf exec "node" "$@"',
      ["asdf", "which", "node"],
    ],
    [
      "/home/me/.local/share/mise/shims/node",
      "/usr/local/bin/mise",
      "\x7fELF",
      ["/usr/local/bin/mise", "which", "node"],
    ],
    [
      "/home/me/.volta/bin/node",
      "/home/me/.volta/bin/volta-shim",
      "\x7fELF",
      ["/home/me/.volta/bin/volta", "which", "node"],
    ],
    ["/usr/local/bin/mise", "/usr/local/bin/mise", "\x7fELF", null],
    [
      "/home/me/.nvm/versions/node/v22.1.0/bin/node",
      "/home/me/.nvm/versions/node/v22.1.0/bin/node",
      "\x7fELF",
      null,
    ],
    [
      "/home/me/proj/.venv/bin/python",
      "/usr/bin/python3.11",
      "\x7fELF",
      null,
    ],
  ];
  for (const [found, real, head, ask] of cases) {
    assert.deepEqual(shimOf(found, real, head)?.ask ?? null, ask, found);
  }
  assert.deepEqual(
    shimOf(
      "/s/ruby",
      "/s/ruby",
      'export RBENV_ROOT="/r"\nexec "/r/libexec/rbenv" exec "$program"',
    )?.env,
    { RBENV_ROOT: "/r" },
  );
});
