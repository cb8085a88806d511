/**
 * Definitions: a target's or fixture's `verity.toml` read, checked and
 * typed ({@linkcode Definition}), with placeholder substitution; the seeded
 * state check. Reads the disk.
 *
 * @module
 */
export * from "./definition.ts";
export * from "./seeded.ts";
