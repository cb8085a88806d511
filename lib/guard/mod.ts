/**
 * `verity guard`: the audit's evidence kept alive between a client and the
 * server. Pure: `audited.ts` (the audited contracts and verdicts, from a
 * manifest or a report), `listing.ts` (one `tools/list` page checked,
 * filtered and annotated), `policy.ts` (the policy file). Effectful:
 * `proxy.ts` (the stdio pass-through and its ledger).
 *
 * @module
 */
export * from "./audited.ts";
export * from "./listing.ts";
export * from "./policy.ts";
export * from "./proxy.ts";
