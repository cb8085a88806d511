/**
 * Reports: building a run's report (`build.ts`), re-deriving it from its
 * evidence (`verify.ts`), the headline's claims (`claims.ts`), advice
 * (`over_declarations.ts`), the fixture expectations, and the renderers
 * (text, HTML, SARIF, JUnit), which are pure.
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
