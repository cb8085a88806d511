import assert from "node:assert/strict";
import { didYouMean, gateMessage, parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";

const OPTIONS = {
  jobs: { type: "string" },
  json: { type: "boolean" },
  "fail-under": { type: "string" },
} as const;

Deno.test("args: an unknown flag names the closest one, if any is near", () => {
  assert.equal(
    didYouMean("--job", ["--jobs", "--json"]),
    "; did you mean --jobs?",
  );
  assert.equal(didYouMean("--zzzzzz", ["--jobs", "--json"]), "");
  assert.throws(
    () => parseCommandLine("run", ["--fail-undr", "80"], OPTIONS),
    (e: Error) =>
      e instanceof UsageError &&
      e.message ===
        "verity run: unknown flag --fail-undr; did you mean --fail-under? (see verity run --help)",
  );
});

Deno.test("args: verity's own flags after -- are refused with a hint; -- -- passes them on as they are", () => {
  for (const bad of ["--fail-under", "--fail-under=80", "--json", "--help"]) {
    assert.throws(
      () =>
        parseCommandLine(
          "reality",
          ["--", "deno", "run", "s.ts", bad],
          OPTIONS,
        ),
      (e: Error) =>
        e instanceof UsageError &&
        e.message.startsWith(
          `verity reality: ${
            bad.split("=")[0]
          } after -- would go to the server, not to verity`,
        ),
      bad,
    );
  }
  const p = parseCommandLine(
    "reality",
    ["--jobs", "2", "--", "--", "server", "--json", "--verbose"],
    OPTIONS,
  );
  assert.deepEqual(p.serverCommand, ["server", "--json", "--verbose"]);
  assert.equal(p.values.jobs, "2");
  // flags the command does not have go to the server untouched
  assert.deepEqual(
    parseCommandLine("reality", ["--", "server", "--verbose", "-j"], OPTIONS)
      .serverCommand,
    ["server", "--verbose", "-j"],
  );
});

Deno.test("args: one gate message for every gate", () => {
  assert.equal(
    gateMessage(
      "run",
      "--fail-on-violation",
      "1 violation(s) (get_item read_only)",
    ),
    "verity run: gate --fail-on-violation failed: 1 violation(s) (get_item read_only)",
  );
});
