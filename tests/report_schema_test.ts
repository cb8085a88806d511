/**
 * A real report validates against the published JSON Schema
 * (docs/schema/report.schema.json), and a broken one does not.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("a verity report validates against docs/schema/report.schema.json", async () => {
  const runsDir = await Deno.makeTempDir({ prefix: "verity-schema-" });
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "run",
      "liar-readonly-error",
      "--json",
      "--runs-dir",
      runsDir,
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  const report = JSON.parse(new TextDecoder().decode(out.stdout));
  const schema = JSON.parse(
    await Deno.readTextFile(join(ROOT, "docs/schema/report.schema.json")),
  );
  // deno-lint-ignore no-explicit-any
  const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
  // deno-lint-ignore no-explicit-any
  (addFormats as any)(ajv);
  const validate = ajv.compile(schema);
  assert.equal(
    validate(report),
    true,
    JSON.stringify(validate.errors?.slice(0, 5)),
  );
  // The schema is not vacuous: a verdict without an outcome, or an unknown reason, is refused.
  const broken = structuredClone(report);
  delete broken.verdicts[0].outcome;
  assert.equal(validate(broken), false);
  const broken2 = structuredClone(report);
  broken2.verdicts[0].secondary = ["MADE_UP"];
  assert.equal(validate(broken2), false);
  await Deno.remove(runsDir, { recursive: true });
});
