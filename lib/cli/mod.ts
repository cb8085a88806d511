/**
 * The command line: argument parsing and one module per `verity` command,
 * each exporting `main(argv)` (exit code); the help texts are in `help.ts`. `main.ts`
 * holds the table that loads them lazily; here each command is a namespace,
 * e.g. `run.main(["fixtures/honest-readonly"])`.
 *
 * @module
 */
export * from "./args.ts";
export * as keygen from "./keygen_cmd.ts";
export * as attest from "./attest_cmd.ts";
export * as capture from "./capture_cmd.ts";
export * as diff from "./diff_cmd.ts";
export * as init from "./init_cmd.ts";
export * as ledger from "./ledger_cmd.ts";
export * as prepare from "./prepare_cmd.ts";
export * as reality from "./reality_cmd.ts";
export * as report from "./report_cmd.ts";
export * as run from "./run_cmd.ts";
export * as tools from "./tools_cmd.ts";
export * as verifyReset from "./verify_reset_cmd.ts";
