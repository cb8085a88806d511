/**
 * Definitions: a fixture's `fixture.toml` or a target's `target.toml`
 * found, read strictly and typed ({@linkcode Definition}): the types (no
 * imports), the pure parser, placeholder substitution, loading with the
 * seeds' digest (which reads the disk). The seeded-state check the
 * commands that observe state call after loading is
 * `lib/state_io/seeded.ts`.
 *
 * @module
 */
export * from "./types.ts";
export * from "./parse.ts";
export * from "./placeholders.ts";
export * from "./load.ts";
export * from "./seeds.ts";
