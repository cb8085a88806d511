import assert from "node:assert/strict";
import { parseCensusList } from "./list.ts";
import { DefinitionError } from "../errors.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const parse = (s: string) => parseCensusList(enc(s), "l.toml", "/lists");

Deno.test("parseCensusList: ids, slugs, defaults, optional keys", () => {
  const list = parse(`name = "n"
[[servers]]
package = "@scope/server-x"
version = "1.2.3"
bin = "x-cli"
args = ["{state}"]
env = { X_FILE = "{state}/x.json" }
backend = "node"
allow = { sys = ["hostname"], run = ["git"], read = ["/opt"] }
timeout = 12
[[servers]]
package = "plain"
version = "0.0.1-beta.2"
[[servers]]
id = "local"
command = ["{deno}", "run", "server.ts"]
dir = "fixtures/a"
`);
  const [a, b, c] = list.servers;
  assert.equal(a!.id, "@scope/server-x@1.2.3#x-cli");
  assert.equal(a!.slug, "scope_server-x_1.2.3_x-cli");
  assert.equal(a!.backend, "node");
  assert.deepEqual(a!.allow, {
    sys: ["hostname"],
    run: ["git"],
    read: ["/opt"],
  });
  assert.equal(a!.timeoutS, 12);
  assert.equal(b!.id, "plain@0.0.1-beta.2");
  assert.equal(b!.backend, "deno");
  assert.equal(b!.timeoutS, 30);
  assert.equal(c!.dir, "/lists/fixtures/a");
  assert.match(list.digest, /^sha256:[0-9a-f]{64}$/);
});

Deno.test("parseCensusList: every refusal names the file and key", () => {
  const one = (body: string) => `name = "n"\n[[servers]]\n${body}\n`;
  const cases: [string, RegExp][] = [
    [
      one('package = "a"\nversion = "latest"'),
      /l\.toml: servers\[0\]\.version: must be an exact version, not a range or tag: "latest"/,
    ],
    [one('package = "a"\nversion = "1.x"'), /servers\[0\]\.version/],
    [one('package = "a"'), /servers\[0\]\.version: missing/],
    [
      one('package = "A B"\nversion = "1.0.0"'),
      /servers\[0\]\.package: not a valid npm package name/,
    ],
    [
      one('package = "a"\nversion = "1.0.0"\nflavour = 1'),
      /servers\[0\]\.flavour: unknown key/,
    ],
    [
      one('package = "a"\nversion = "1.0.0"\nenv = { DENO_DIR = "x" }'),
      /servers\[0\]\.env\.DENO_DIR: DENO_DIR is set by verity/,
    ],
    [
      one('package = "a"\nversion = "1.0.0"\nargs = ["{secret}"]'),
      /servers\[0\]\.args\[0\]: unknown placeholder \{secret\}/,
    ],
    [
      one('package = "a"\nversion = "1.0.0"\ntimeout = 0'),
      /servers\[0\]\.timeout: expected seconds from 1 to 3600/,
    ],
    [
      one('package = "a"\nversion = "1.0.0"\nintegrity = "md5-x"'),
      /servers\[0\]\.integrity: expected "sha512-<base64>"/,
    ],
    [one('command = ["x"]'), /servers\[0\]\.id: missing/],
    [
      one('id = "x"\ncommand = ["x"]\nversion = "1.0.0"'),
      /servers\[0\]\.version: applies to a published package/,
    ],
    [
      one('id = "x"\ncommand = ["{source}/x"]'),
      /unknown placeholder \{source\}/,
    ],
    [
      'name = "a b"\n[[servers]]\npackage = "a"\nversion = "1.0.0"\n',
      /l\.toml: name: must be letters/,
    ],
    [
      '[[servers]]\npackage = "a"\nversion = "1.0.0"\n',
      /l\.toml: name: missing/,
    ],
    ['name = "n"\nservers = [', /l\.toml: invalid TOML at line/],
  ];
  for (const [text, re] of cases) {
    assert.throws(
      () => parse(text),
      (e: unknown) => e instanceof DefinitionError && re.test(e.message),
      text,
    );
  }
});
