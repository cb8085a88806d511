/**
 * The error every SQLite page reader throws when a database holds
 * something it does not read (a record that needs SQL, a malformed page, a
 * table keyed otherwise): the caller falls back to a plain scan or a
 * whole snapshot. Public, so the state I/O that falls back can tell it
 * from a real failure.
 *
 * @module
 */

/** The b-tree walk met something it does not handle; the plain scan is used instead. */
export class PageWalkError extends Error {
  override name = "PageWalkError";
}
