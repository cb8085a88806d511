/**
 * The history of a run: sessions, calls, concurrent attempts and their
 * stamps, as the runner recorded them. The runner writes it; the verdict
 * engine and the report read it. Pure data.
 *
 * @module
 */
export * from "./types.ts";
export * from "./call_outcome.ts";
