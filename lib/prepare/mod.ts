/**
 * Preparing published servers for an offline audit: where a target's code
 * comes from (npm pins, tarballs, local checkouts), fetching and checking
 * it into the prepared cache, and the provenance a report records (the
 * pin, the definition's git state). Below the launcher, which runs from the
 * cache.
 *
 * Effectful: `fetch.ts` (network, npm), `local.ts`, `tarball.ts` and
 * `definition_git.ts` (disk, git). Pure: `prepared.ts`, `provenance.ts`,
 * `source.ts` parsing.
 *
 * @module
 */
export * from "./definition_git.ts";
export * from "./fetch.ts";
export * from "./local.ts";
export * from "./npx.ts";
export * from "./prepared.ts";
export * from "./provenance.ts";
export * from "./source.ts";
export * from "./tarball.ts";
