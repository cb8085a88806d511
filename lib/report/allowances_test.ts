/**
 * Every format shows the sandbox allowances a report's definition declared,
 * and says so when there are none.
 */
import assert from "node:assert/strict";
import { allowanceLine } from "./report.ts";
import { renderText } from "./text.ts";
import { renderHtml } from "./html.ts";
import { renderSarif } from "./sarif.ts";
import { renderJunit } from "./junit.ts";
import { syntheticReport } from "../../tests/_synthetic_report.ts";

const ALLOW = {
  sys: ["hostname"],
  run: ["git"],
  read: ["/opt/venv"],
  cwd: "{state}",
};

Deno.test("allowanceLine names each allowance, or none for the default sandbox", () => {
  assert.equal(
    allowanceLine(ALLOW),
    "sys hostname; run git; read /opt/venv; cwd {state}",
  );
  assert.equal(
    allowanceLine({ sys: [], run: [], read: [], cwd: null }),
    "none (default sandbox)",
  );
  assert.equal(allowanceLine(undefined), "none (default sandbox)");
});

Deno.test("text, HTML, SARIF and JUnit show the declared allowances", () => {
  const base = syntheticReport({ audit: true });
  const report = { ...base, sandbox: { ...base.sandbox, allow: ALLOW } };
  const line = "sys hostname; run git; read /opt/venv; cwd {state}";
  assert.match(
    renderText(report),
    /^ {2}sandbox allowances: sys hostname; run git; read \/opt\/venv; cwd \{state\}$/m,
  );
  assert.ok(renderHtml(report).includes(`sandbox allowances`));
  assert.ok(renderHtml(report).includes(line));
  const sarif = JSON.parse(renderSarif(report));
  assert.equal(sarif.runs[0].properties.sandboxAllowances, line);
  assert.ok(
    renderJunit(report).includes(
      `name="verity.sandbox.allowances" value="${line}"`,
    ),
  );
  // None declared: every format says so instead of staying silent.
  const plain = {
    ...base,
    sandbox: {
      ...base.sandbox,
      allow: { sys: [], run: [], read: [], cwd: null },
    },
  };
  assert.match(
    renderText(plain),
    /sandbox allowances: none \(default sandbox\)/,
  );
  assert.ok(renderHtml(plain).includes("none (default sandbox)"));
  assert.equal(
    JSON.parse(renderSarif(plain)).runs[0].properties.sandboxAllowances,
    "none (default sandbox)",
  );
  assert.ok(renderJunit(plain).includes("none (default sandbox)"));
});
