/**
 * The evidence ledger: canonical contract hashing (recipes, canonical JSON
 * and text), declarations and their drift, the hash chain and its checks
 * (pure), and capture, files and the ledger itself (disk).
 *
 * @module
 */
export * from "./atomic_write.ts";
export * from "./predicate.ts";
export * from "./binding.ts";
export * from "./attest.ts";
export * from "./canonical.ts";
export * from "./capture.ts";
export * from "./chain.ts";
export * from "./checks.ts";
export * from "./diff.ts";
export * from "./files.ts";
export * from "./ledger.ts";
export * from "./manifest.ts";
export * from "./recipes.ts";
