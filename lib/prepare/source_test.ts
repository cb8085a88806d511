import assert from "node:assert/strict";
import { parsePackageRun } from "./source.ts";

Deno.test("parsePackageRun reads every package runner's command line", () => {
  const cases: [string[], [string, string, string | null, string[]] | null][] =
    [
      [["npx", "-y", "@x/y@1.2.3", "a"], ["@x/y", "1.2.3", null, ["a"]]],
      [["/usr/bin/npx", "--yes", "pkg"], ["pkg", "latest", null, []]],
      [["npm", "exec", "--yes", "--", "pkg@^2", "--flag"], [
        "pkg",
        "^2",
        null,
        ["--flag"],
      ]],
      [["npm", "x", "pkg"], ["pkg", "latest", null, []]],
      [["pnpm", "dlx", "pkg@1.0.0"], ["pkg", "1.0.0", null, []]],
      [["pnpx", "pkg"], ["pkg", "latest", null, []]],
      [["yarn", "dlx", "pkg"], ["pkg", "latest", null, []]],
      [["bunx", "pkg", "x"], ["pkg", "latest", null, ["x"]]],
      [["bun", "x", "pkg"], ["pkg", "latest", null, []]],
      [["npx", "-y", "-p", "@x/tools@3.0.0", "x-server", "--stdio"], [
        "@x/tools",
        "3.0.0",
        "x-server",
        ["--stdio"],
      ]],
      [["npx", "--package=@x/tools", "x-server"], [
        "@x/tools",
        "latest",
        "x-server",
        [],
      ]],
      [["npx", "-c", "echo hi"], null],
      [["npx", "-y", "github:someone/repo"], null],
      [["npx", "-y", "./local"], null],
      [["npx"], null],
      [["npm", "install", "pkg"], null],
      [["node", "index.js"], null],
    ];
  for (const [command, want] of cases) {
    const r = parsePackageRun(command);
    assert.deepEqual(
      r === null ? null : [r.package, r.range, r.bin, r.args],
      want,
      command.join(" "),
    );
  }
  assert.deepEqual(parsePackageRun(["npx", "-y", "--quiet", "pkg"])?.dropped, [
    "-y",
    "--quiet",
  ]);
});
