/**
 * Reports: building and re-verifying a run's report from its evidence
 * (`report.ts`), the fixture expectations, and the renderers (text, HTML,
 * SARIF, JUnit), which are pure.
 *
 * @module
 */
export * from "./build.ts";
export * from "./expectations.ts";
export * from "./html.ts";
export * from "./junit.ts";
export * from "./report.ts";
export * from "./sarif.ts";
export * from "./text.ts";
export * from "./verify.ts";
export * from "./over_declarations.ts";
