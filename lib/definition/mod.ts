/**
 * Definitions: a fixture's `fixture.toml` or a target's `target.toml`
 * found, read strictly and typed ({@linkcode Definition}): the types (no
 * imports), the pure parser, placeholder substitution, loading with the
 * seeds' digest, and the seeded-state check the commands that observe
 * state call after loading. Loading and the check read the disk.
 *
 * @module
 */
export * from "./types.ts";
export * from "./parse.ts";
export * from "./placeholders.ts";
export * from "./load.ts";
export * from "./seeds.ts";
export * from "./seeded.ts";
